// The sizes and the grid formula that the exported launchers share (ExportInterface.h).
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

std::array<std::string, 3> gridExpressions(lowering::EmittedKernel const& kernel) {
    std::set<std::string> sizes;
    for (auto const& p : kernel.parameters)
        if (isSizeParameter(p))
            sizes.insert(p.name);
    std::array<std::string, 3> grid{"1", "1", "1"};
    for (std::size_t axis = 0; axis < kernel.grid.size() && axis < 3; ++axis) {
        ExprPtr e;
        try {
            e = parseExpression(kernel.grid[axis], GridNames(sizes));
        } catch (ExpressionError const& x) {
            fail("the grid formula '{}' does not parse: {}", kernel.grid[axis], x.message());
        }
        checkGridExpression(*e);
        grid[axis] = toString(e);
    }
    return grid;
}

} // namespace kiln::cli
