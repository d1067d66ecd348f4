#include "kiln/scheduler/Problem.h"

#include "kiln/graph/Evaluate.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kiln::scheduler {

std::string_view name(ProblemKind kind) {
    switch (kind) {
    case ProblemKind::Gemm:
        return "gemm";
    case ProblemKind::Elementwise:
        return "elementwise";
    case ProblemKind::Reduction:
        return "reduction";
    }
    return "?";
}

namespace {

class SizeEnvironment : public Environment {
public:
    explicit SizeEnvironment(std::map<std::string, std::int64_t> const& sizes)
        : sizes_(sizes) {}
    Value argument(expr::Argument const& a) const override {
        auto it = sizes_.find(a.name);
        if (it == sizes_.end())
            fail("the problem has no value for the size '{}'", a.name);
        return Value::integer(it->second);
    }

private:
    std::map<std::string, std::int64_t> const& sizes_;
};

std::int64_t product(std::vector<std::int64_t> const& v) {
    std::int64_t p = 1;
    for (auto x : v)
        p *= x;
    return p;
}

// The bytes of a tensor's distinct elements: an axis of stride 0 (a layer norm's gamma, a bias
// broadcast over rows) repeats the same elements and adds none.
double distinctBytes(ProblemTensor const& t) {
    double elements = 1;
    for (std::size_t i = 0; i < t.shape.size(); ++i)
        if (i >= t.strides.size() || t.strides[i] != 0)
            elements *= double(t.shape[i]);
    return elements * sizeInBytes(t.dtype);
}

} // namespace

Problem problemOf(Command const& command, std::map<std::string, double> const& given,
                  int alignment) {
    Problem p{.command = command.name(), .alignment = alignment};
    for (auto const& size : command.sizes()) {
        double value = 0;
        if (auto it = given.find(size); it != given.end())
            value = it->second;
        else if (auto d = command.defaults.find(size); d != command.defaults.end())
            value = d->second;
        else
            fail("the problem has no value for the size '{}' (give --size {}=N)", size, size);
        p.sizes[size] = static_cast<std::int64_t>(value);
    }
    SizeEnvironment const env(p.sizes);
    for (auto const& t : command.tensors()) {
        ProblemTensor pt{.name = t.name, .dtype = t.dtype, .shape = {}, .strides = {}};
        for (auto const& e : t.shape)
            pt.shape.push_back(evaluateInt(*e, env));
        if (t.strides.empty()) {
            std::int64_t stride = 1;
            pt.strides.assign(pt.shape.size(), 1);
            for (std::size_t i = pt.shape.size(); i-- > 0;) {
                pt.strides[i] = stride;
                stride *= pt.shape[i];
            }
        } else {
            for (auto const& e : t.strides)
                pt.strides.push_back(evaluateInt(*e, env));
        }
        p.tensors.push_back(std::move(pt));
    }

    auto const tensorOf = [&](std::string const& tag) -> ProblemTensor const* {
        for (auto const& op : command.operations())
            if (op.tag == tag && !op.tensor.empty())
                for (auto const& t : p.tensors)
                    if (t.name == op.tensor)
                        return &t;
        return nullptr;
    };
    std::int64_t largest = 0;
    int executes = 0;
    for (auto const& op : command.operations()) {
        std::string text = std::string(name(op.kind));
        switch (op.kind) {
        case CommandOpKind::LoadLinear:
        case CommandOpKind::LoadTiled:
            text += fmt::format(" {} = {}", op.tag, op.tensor);
            break;
        case CommandOpKind::StoreLinear:
        case CommandOpKind::StoreTiled:
            text += fmt::format(" {} = {}", op.tensor, op.inputs.at(0));
            break;
        case CommandOpKind::Execute:
            text += fmt::format(" {} = {}", op.tag, toString(op.expression));
            ++executes;
            break;
        case CommandOpKind::Multiply: {
            text +=
                fmt::format(" {} = {}{} x {}{}", op.tag, op.inputs.at(0), op.transposeA ? "^T" : "",
                            op.inputs.at(1), op.transposeB ? "^T" : "");
            p.kind = ProblemKind::Gemm;
            auto const& lhs = command.values().at(op.inputs.at(0));
            auto const& rhs = command.values().at(op.inputs.at(1));
            ProblemTensor const* a = tensorOf(op.inputs.at(0));
            ProblemTensor const* b = tensorOf(op.inputs.at(1));
            if (a && b && a->shape.size() == 2 && b->shape.size() == 2) {
                p.m = op.transposeA ? a->shape[1] : a->shape[0];
                p.k = op.transposeA ? a->shape[0] : a->shape[1];
                p.n = op.transposeB ? b->shape[0] : b->shape[1];
            }
            p.inputType = lhs.dtype;
            (void)rhs;
            break;
        }
        case CommandOpKind::Reduce:
            text += fmt::format(" {} = {}({})", op.tag, name(op.combine), op.inputs.at(0));
            if (p.kind != ProblemKind::Gemm) {
                p.kind = ProblemKind::Reduction;
                auto const& v = command.values().at(op.inputs.at(0));
                if (v.shape.size() >= 1) {
                    std::vector<std::int64_t> shape;
                    for (auto const& e : v.shape)
                        shape.push_back(evaluateInt(*e, env));
                    p.n = shape.back();
                    p.m = product(shape) / std::max<std::int64_t>(p.n, 1);
                }
                p.inputType = v.dtype;
            }
            break;
        }
        p.operations.push_back(std::move(text));
    }
    for (auto const& t : p.tensors)
        largest = std::max(largest, product(t.shape));
    if (p.kind == ProblemKind::Elementwise) {
        p.n = largest;
        if (!p.tensors.empty())
            p.inputType = p.tensors.front().dtype;
    }
    p.flopsPerElement = std::max(1, executes);
    for (auto const& op : command.operations()) {
        bool const store =
            op.kind == CommandOpKind::StoreLinear || op.kind == CommandOpKind::StoreTiled;
        bool const load =
            op.kind == CommandOpKind::LoadLinear || op.kind == CommandOpKind::LoadTiled;
        for (auto const& t : p.tensors) {
            if (t.name != op.tensor)
                continue;
            double const bytes = distinctBytes(t);
            if (store) {
                p.outputType = t.dtype;
                p.writtenBytes += bytes;
            } else if (load) {
                p.readBytes += bytes;
            }
        }
    }
    return p;
}

std::string Problem::canonical() const {
    nlohmann::json j;
    j["command"] = command;
    j["operations"] = operations;
    j["alignment"] = alignment;
    j["sizes"] = sizes;
    nlohmann::json tensorsJson = nlohmann::json::array();
    for (auto const& t : tensors)
        tensorsJson.push_back({{"name", t.name},
                               {"dtype", std::string(kiln::name(t.dtype))},
                               {"shape", t.shape},
                               {"strides", t.strides}});
    j["tensors"] = tensorsJson;
    return j.dump();
}

std::string Problem::summary() const {
    switch (kind) {
    case ProblemKind::Gemm:
        return fmt::format("gemm {}x{}x{} {}->{}", m, n, k, kiln::name(inputType),
                           kiln::name(outputType));
    case ProblemKind::Reduction:
        return fmt::format("reduction {}x{} {}", m, n, kiln::name(inputType));
    case ProblemKind::Elementwise:
        return fmt::format("elementwise {} {}", n, kiln::name(inputType));
    }
    return "?";
}

double Problem::flops() const {
    switch (kind) {
    case ProblemKind::Gemm:
        return 2.0 * double(m) * double(n) * double(k);
    case ProblemKind::Reduction:
        return double(m) * double(n) * flopsPerElement;
    case ProblemKind::Elementwise:
        return double(n) * flopsPerElement;
    }
    return 0;
}

double Problem::uniqueBytes() const {
    double bytes = 0;
    for (auto const& t : tensors)
        bytes += distinctBytes(t);
    return bytes;
}

} // namespace kiln::scheduler
