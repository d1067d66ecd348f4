// The sizes, the grid formula and the tensor maps that the exported launchers share
// (ExportInterface.h).
#include "ExportInterface.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/ExpressionText.h"

#include <set>

namespace kiln::cli {

namespace {

// Grid formulas may name the kernel's size parameters and use + - * / % ceildiv min max.
class GridNames : public NameResolver {
public:
    explicit GridNames(std::set<std::string> sizes)
        : sizes_(std::move(sizes)) {}
    ExprPtr name(std::string_view n) const override {
        if (!sizes_.count(std::string(n)))
            fail("the grid formula names '{}', which is not a size parameter of the kernel", n);
        return argument(std::string(n), DataType::I64);
    }

private:
    std::set<std::string> sizes_;
};

void checkGridExpression(Expression const& e) {
    if (auto const* b = std::get_if<expr::Binary>(&e)) {
        switch (b->op) {
        case BinaryOp::Add:
        case BinaryOp::Subtract:
        case BinaryOp::Multiply:
        case BinaryOp::Divide:
        case BinaryOp::Modulo:
        case BinaryOp::CeilDivide:
        case BinaryOp::Min:
        case BinaryOp::Max:
            checkGridExpression(*b->lhs);
            checkGridExpression(*b->rhs);
            return;
        default:
            fail("the grid formula uses '{}', which an exported launcher cannot compute",
                 name(b->op));
        }
    }
    if (std::holds_alternative<expr::Literal>(e) || std::holds_alternative<expr::Argument>(e))
        return;
    fail("the grid formula '{}' cannot be computed by an exported launcher", toString(e));
}

} // namespace

bool isSizeParameter(lowering::ParameterInfo const& p) {
    return !p.pointer && p.meaning.starts_with("size ");
}

namespace {

// `text`, an expression of the kernel's sizes, as C and C++ both compute it.
std::string sizeFormula(lowering::EmittedKernel const& kernel, std::string const& text) {
    std::set<std::string> sizes;
    for (auto const& p : kernel.parameters)
        if (isSizeParameter(p))
            sizes.insert(p.name);
    ExprPtr e;
    try {
        e = parseExpression(text, GridNames(sizes));
    } catch (ExpressionError const& x) {
        fail("the grid formula '{}' does not parse: {}", text, x.message());
    }
    checkGridExpression(*e);
    return toString(e);
}

} // namespace

std::array<std::string, 3> gridExpressions(lowering::EmittedKernel const& kernel) {
    std::array<std::string, 3> grid{"1", "1", "1"};
    for (std::size_t axis = 0; axis < kernel.grid.size() && axis < 3; ++axis)
        grid[axis] = sizeFormula(kernel, kernel.grid[axis]);
    return grid;
}

std::vector<ExportedTensorMap> tensorMaps(lowering::EmittedKernel const& kernel) {
    std::vector<ExportedTensorMap> maps;
    for (auto const& p : kernel.parameters) {
        if (!p.tensorMap)
            continue;
        auto const& m = *p.tensorMap;
        if (m.box.size() != 2 || m.sizes.size() != 2 || m.strides.size() != 1 ||
            m.swizzle != "128B" || (p.type != "f16" && p.type != "bf16"))
            fail("the tensor map {} is not of a matrix of f16 or bf16 in the 128-byte swizzle; "
                 "an exported launcher encodes only those",
                 p.name);
        maps.push_back({p.name, m.tensor, p.type, sizeFormula(kernel, m.sizes[0]),
                        sizeFormula(kernel, m.sizes[1]),
                        sizeFormula(kernel, "(" + m.strides[0] + ") * 2"), m.box[0], m.box[1]});
    }
    return maps;
}

} // namespace kiln::cli
