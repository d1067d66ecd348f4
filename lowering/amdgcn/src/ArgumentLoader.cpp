// ArgumentLoader.cpp: kernarg layout and scalar loads.
#include "kiln/amdgcn/ArgumentLoader.h"

#include "kiln/graph/Error.h"

namespace kiln::amdgcn {

std::vector<KernelArgument> layoutArguments(std::vector<KernelArgument> arguments) {
    int offset = 0;
    for (KernelArgument& a : arguments) {
        a.size = a.pointer ? 8 : sizeInBytes(a.type);
        if (a.type == DataType::Bool && !a.pointer)
            a.size = 4;
        offset = (offset + a.size - 1) / a.size * a.size;
        a.offset = offset;
        offset += a.size;
    }
    return arguments;
}

int kernargBytes(std::vector<KernelArgument> const& arguments) {
    int end = 0;
    for (KernelArgument const& a : arguments)
        end = std::max(end, a.offset + a.size);
    return end;
}

ArgumentLoader::ArgumentLoader(Context& context, Value segment,
                               std::vector<KernelArgument> arguments)
    : context_(context)
    , segment_(std::move(segment))
    , arguments_(std::move(arguments)) {}

KernelArgument const& ArgumentLoader::argument(std::string const& name) const {
    for (KernelArgument const& a : arguments_)
        if (a.name == name)
            return a;
    std::string known;
    for (KernelArgument const& a : arguments_)
        known += (known.empty() ? "" : ", ") + a.name;
    fail("the kernel has no argument '{}'; its arguments are: {}", name, known);
}

Value ArgumentLoader::load(std::string const& name, Stream& out) {
    if (auto it = loaded_.find(name); it != loaded_.end())
        return it->second;
    KernelArgument const& a = argument(name);
    Builder b(context_, out);
    Value result;
    Value const offset = Value::literal(a.offset & ~3);
    if (a.size == 8) {
        result = context_.allocateScalar(a.pointer ? DataType::I64 : a.type, 2, "argument " + name);
        b.op("s_load_dwordx2", {result}, {segment_, offset}, {}, "argument " + name);
    } else {
        Value word = context_.allocateScalar(DataType::I32, 1, "argument " + name);
        b.op("s_load_dword", {word}, {segment_, offset}, {}, "argument " + name);
        if (a.size == 4) {
            result = word.as(a.type);
        } else if (a.size == 2 || a.size == 1) {
            int const shift = (a.offset & 3) * 8;
            Value field = context_.allocateScalar(DataType::I32, 1, "argument " + name);
            b.op("s_bfe_u32", {field}, {word, Value::literal((a.size * 8) << 16 | shift)});
            if (a.type == DataType::F16 || a.type == DataType::BF16) {
                Value wide = b.newVector(DataType::F32, "argument " + name);
                if (a.type == DataType::F16)
                    b.op("v_cvt_f32_f16", {wide}, {field});
                else
                    b.op("v_lshlrev_b32", {wide}, {Value::literal(16), field});
                result = wide.as(a.type);
            } else {
                result = field.as(a.type);
            }
        }
    }
    loaded_.emplace(name, result);
    return result;
}

void ArgumentLoader::loadAll(Stream& out) {
    for (KernelArgument const& a : arguments_)
        load(a.name, out);
}

} // namespace kiln::amdgcn
