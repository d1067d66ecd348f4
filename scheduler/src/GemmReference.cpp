#include "kiln/scheduler/GemmReference.h"

#include "kiln/graph/Expression.h"

#include <fmt/format.h>

namespace kiln::scheduler {

namespace {

using runtime::Error;
using runtime::ErrorCode;

// The name of an Argument leaf, or of a Tag leaf.
template <class Leaf>
std::optional<std::string> leaf(ExprPtr const& e) {
    if (auto const* x = std::get_if<Leaf>(e.get()))
        return x->name;
    return std::nullopt;
}

// `scalar * tag`, as (scalar, tag).
std::optional<std::pair<std::string, std::string>> scaled(ExprPtr const& e) {
    auto const* b = std::get_if<expr::Binary>(e.get());
    if (!b || b->op != BinaryOp::Multiply)
        return std::nullopt;
    auto scalar = leaf<expr::Argument>(b->lhs);
    auto tag = leaf<expr::Tag>(b->rhs);
    if (!scalar || !tag)
        return std::nullopt;
    return std::pair{*scalar, *tag};
}

runtime::ScalarType scalarType(DataType type) {
    switch (type) {
    case DataType::F16:
        return runtime::ScalarType::F16;
    case DataType::BF16:
        return runtime::ScalarType::BF16;
    default:
        return runtime::ScalarType::F32;
    }
}

} // namespace

std::optional<GemmForm> matchGemm(Command const& command) {
    std::map<std::string, std::string> loaded; // tag -> tensor, of tiled loads
    CommandOperation const* multiply = nullptr;
    CommandOperation const* execute = nullptr;
    CommandOperation const* store = nullptr;
    for (auto const& op : command.operations()) {
        switch (op.kind) {
        case CommandOpKind::LoadTiled:
            loaded[op.tag] = op.tensor;
            break;
        case CommandOpKind::Multiply:
            if (multiply)
                return std::nullopt;
            multiply = &op;
            break;
        case CommandOpKind::Execute:
            if (execute)
                return std::nullopt;
            execute = &op;
            break;
        case CommandOpKind::StoreTiled:
            if (store)
                return std::nullopt;
            store = &op;
            break;
        default:
            return std::nullopt;
        }
    }
    if (!multiply || !store || multiply->inputs.size() != 2)
        return std::nullopt;
    GemmForm form;
    if (!loaded.contains(multiply->inputs[0]) || !loaded.contains(multiply->inputs[1]))
        return std::nullopt;
    form.a = loaded.at(multiply->inputs[0]);
    form.b = loaded.at(multiply->inputs[1]);
    form.transA = multiply->transposeA;
    form.transB = multiply->transposeB;
    form.d = store->tensor;
    std::string const& stored = store->inputs.at(0);
    if (!execute)
        return stored == multiply->tag ? std::optional(form) : std::nullopt;
    if (stored != execute->tag || execute->dtype)
        return std::nullopt;
    // alpha * ab, or alpha * ab + beta * c.
    auto const* sum = std::get_if<expr::Binary>(execute->expression.get());
    auto product = scaled(execute->expression);
    if (sum && sum->op == BinaryOp::Add) {
        product = scaled(sum->lhs);
        auto const other = scaled(sum->rhs);
        if (!other || !loaded.contains(other->second))
            return std::nullopt;
        form.beta = other->first;
        form.c = loaded.at(other->second);
    }
    if (!product || product->second != multiply->tag)
        return std::nullopt;
    form.alpha = product->first;
    return form;
}

runtime::Expected<runtime::cuda::GemmShape> gemmShape(GemmForm const& form,
                                                      Bindings const& bindings) {
    for (auto const& name : {form.a, form.b, form.c, form.d}) {
        if (name.empty())
            continue;
        HostTensor const& t = bindings.tensors.at(name);
        if (t.shape.size() != 2 || t.strides != std::vector<std::int64_t>{t.shape[1], 1})
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("cuBLAS reference: tensor '{}' is not a dense row-major "
                                     "matrix",
                                     name));
    }
    HostTensor const& a = bindings.tensors.at(form.a);
    HostTensor const& b = bindings.tensors.at(form.b);
    HostTensor const& d = bindings.tensors.at(form.d);
    bool const f32 = a.dtype == DataType::F32 && b.dtype == DataType::F32;
    bool const half = a.dtype == b.dtype && (a.dtype == DataType::F16 || a.dtype == DataType::BF16);
    if ((!f32 && !half) || (f32 && d.dtype != DataType::F32))
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("cuBLAS reference: no GEMM of {} x {} into {}", name(a.dtype),
                                 name(b.dtype), name(d.dtype)));
    return runtime::cuda::GemmShape{.m = d.shape[0],
                                    .n = d.shape[1],
                                    .k = form.transA ? a.shape[0] : a.shape[1],
                                    .transA = form.transA,
                                    .transB = form.transB};
}

runtime::Status
gemmOnDevice(runtime::cuda::Blas& blas, runtime::Stream& stream, GemmForm const& form,
             Bindings const& bindings,
             std::map<std::string, runtime::DeviceMemory<std::uint8_t>> const& buffers,
             runtime::DeviceMemory<std::uint8_t>& result) {
    KILN_ASSIGN_OR_RETURN(auto const shape, gemmShape(form, bindings));
    auto scalar = [&](std::string const& name, float otherwise) {
        return name.empty() ? otherwise : static_cast<float>(bindings.scalars.at(name).asDouble());
    };
    float const alpha = scalar(form.alpha, 1.0f);
    float const beta = form.c.empty() ? 0.0f : scalar(form.beta, 1.0f);
    if (!form.c.empty()) // cuBLAS accumulates into its output: start it from C
        stream.copy(result, buffers.at(form.c));
    HostTensor const& a = bindings.tensors.at(form.a);
    std::uint64_t const pa = buffers.at(form.a).pointer().address();
    std::uint64_t const pb = buffers.at(form.b).pointer().address();
    std::uint64_t const pd = result.pointer().address();
    if (a.dtype == DataType::F32)
        return blas.gemm(stream, shape, alpha, runtime::DevicePointer<float const>(pa),
                         runtime::DevicePointer<float const>(pb), beta,
                         runtime::DevicePointer<float>(pd));
    return blas.gemmEx(stream, shape, scalarType(a.dtype),
                       scalarType(bindings.tensors.at(form.d).dtype), alpha, pa, pb, beta, pd);
}

} // namespace kiln::scheduler
