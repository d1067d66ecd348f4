#include "kiln/graph/Reference.h"

#include <cmath>
#include <limits>

namespace kiln {

namespace {

// A value a tag names: row-major elements of its shape.
struct HostValue {
    DataType dtype;
    std::vector<std::int64_t> shape;
    std::vector<double> data;
};

class ElementEnvironment : public BindingsEnvironment {
public:
    ElementEnvironment(Bindings const& bindings, std::map<std::string, HostValue> const& values)
        : BindingsEnvironment(bindings)
        , values_(values) {}
    Value tag(expr::Tag const& t) const override {
        double const v = values_.at(t.name).data[element];
        return isFloat(t.type) ? Value::real(v, t.type)
                               : Value::integer(static_cast<std::int64_t>(v), t.type);
    }
    std::size_t element = 0;

private:
    std::map<std::string, HostValue> const& values_;
};

std::vector<std::int64_t> unflatten(std::int64_t flat, std::vector<std::int64_t> const& shape) {
    std::vector<std::int64_t> index(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
        index[k] = flat % shape[k];
        flat /= shape[k];
    }
    return index;
}

} // namespace

void runReference(Command const& command, Bindings& bindings) {
    std::map<std::string, HostValue> values;
    auto const& infos = command.values();

    for (auto const& op : command.operations()) {
        switch (op.kind) {
        case CommandOpKind::LoadTiled:
        case CommandOpKind::LoadLinear: {
            HostTensor const& t = bindings.tensors.at(op.tensor);
            HostValue v{t.dtype, t.shape, {}};
            if (op.kind == CommandOpKind::LoadLinear)
                v.shape = {t.elements()};
            v.data.resize(static_cast<std::size_t>(t.elements()));
            for (std::int64_t i = 0; i < t.elements(); ++i)
                v.data[static_cast<std::size_t>(i)] =
                    t.data[static_cast<std::size_t>(t.offset(unflatten(i, t.shape)))];
            values[op.tag] = std::move(v);
            break;
        }
        case CommandOpKind::StoreTiled:
        case CommandOpKind::StoreLinear: {
            HostTensor& t = bindings.tensors.at(op.tensor);
            HostValue const& v = values.at(op.inputs[0]);
            for (std::int64_t i = 0; i < t.elements(); ++i)
                t.data[static_cast<std::size_t>(t.offset(unflatten(i, t.shape)))] =
                    roundTo(t.dtype, v.data[static_cast<std::size_t>(i)]);
            break;
        }
        case CommandOpKind::Execute: {
            DataType const type = infos.at(op.tag).dtype;
            std::vector<std::int64_t> shape;
            for (auto const& s : infos.at(op.tag).shape)
                shape.push_back(evaluateInt(*s, BindingsEnvironment(bindings)));
            std::int64_t n = 1;
            for (auto s : shape)
                n *= s;
            HostValue out{type, shape, std::vector<double>(static_cast<std::size_t>(n))};
            ElementEnvironment env(bindings, values);
            for (std::size_t i = 0; i < out.data.size(); ++i) {
                env.element = i;
                out.data[i] = convertValue(type, evaluate(*op.expression, env)).asDouble();
            }
            values[op.tag] = std::move(out);
            break;
        }
        case CommandOpKind::Multiply: {
            HostValue const& a = values.at(op.inputs[0]);
            HostValue const& b = values.at(op.inputs[1]);
            std::int64_t const m = a.shape[op.transposeA ? 1 : 0],
                               k = a.shape[op.transposeA ? 0 : 1];
            std::int64_t const n = b.shape[op.transposeB ? 0 : 1];
            DataType const type = infos.at(op.tag).dtype;
            HostValue out{type, {m, n}, std::vector<double>(static_cast<std::size_t>(m * n))};
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j) {
                    double sum = 0;
                    for (std::int64_t p = 0; p < k; ++p) {
                        double const x =
                            a.data[static_cast<std::size_t>(op.transposeA ? p * m + i : i * k + p)];
                        double const y =
                            b.data[static_cast<std::size_t>(op.transposeB ? j * k + p : p * n + j)];
                        sum += x * y;
                    }
                    out.data[static_cast<std::size_t>(i * n + j)] = roundTo(type, sum);
                }
            values[op.tag] = std::move(out);
            break;
        }
        case CommandOpKind::Reduce: {
            HostValue const& in = values.at(op.inputs[0]);
            std::int64_t const last = in.shape.back();
            std::int64_t const rows =
                last == 0 ? 0 : static_cast<std::int64_t>(in.data.size()) / last;
            HostValue out{
                in.dtype, std::vector<std::int64_t>(in.shape.begin(), in.shape.end() - 1), {}};
            std::int64_t outElements = 1;
            for (auto s : out.shape)
                outElements *= s;
            out.data.assign(static_cast<std::size_t>(outElements), 0.0);
            for (std::int64_t r = 0; r < rows; ++r) {
                double acc = op.combine == Combine::Sum   ? 0.0
                             : op.combine == Combine::Max ? -std::numeric_limits<double>::infinity()
                                                          : std::numeric_limits<double>::infinity();
                for (std::int64_t c = 0; c < last; ++c) {
                    double const x = in.data[static_cast<std::size_t>(r * last + c)];
                    acc = op.combine == Combine::Sum   ? acc + x
                          : op.combine == Combine::Max ? std::max(acc, x)
                                                       : std::min(acc, x);
                }
                out.data[static_cast<std::size_t>(r)] = roundTo(in.dtype, acc);
            }
            values[op.tag] = std::move(out);
            break;
        }
        }
    }
}

} // namespace kiln
