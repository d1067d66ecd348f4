// Command.h: what the user wants computed, before Kiln decides how.
//
// A Command declares tensor and scalar arguments and lists operations on them in order: loads
// of tensors, element-wise expressions, matrix multiplies, reductions along the last axis, and
// stores. Each operation that produces a value names it with a tag; later operations refer to
// tags. Tensor shapes and strides are expressions over size arguments (M, N, K...), so one
// Command covers every problem size and shape disagreements are found before anything runs.
// Commands come from JSON (CommandJson.h) or from this C++ API; both go through add(), which
// checks each operation against those before it, so a Command is valid by construction.
#pragma once

#include "kiln/graph/CommandOps.h"
#include "kiln/graph/DataType.h"
#include "kiln/graph/Error.h"
#include "kiln/graph/Expression.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Operation.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// Whether `s` is a C identifier (letters, digits and '_', not starting with a digit): the
/// names of Commands, arguments and tags, and what an exported header may declare.
bool isIdentifier(std::string_view s);

/// A tensor argument: element type, shape, and strides in elements (row-major by default).
struct TensorArgument {
    std::string name;
    DataType dtype;
    std::vector<ExprPtr> shape;
    std::vector<ExprPtr> strides;
    SourceLocation where;
};

/// A scalar argument passed by value at launch.
struct ScalarArgument {
    std::string name;
    DataType dtype;
    SourceLocation where;
};

struct CommandOperation {
    CommandOpKind kind;
    std::string tag;                 ///< the value produced (loads, Execute, Multiply, Reduce)
    std::string tensor;              ///< loads and stores: the tensor argument
    std::vector<std::string> inputs; ///< stores, Reduce: {value}; Multiply: {lhs, rhs}
    ExprPtr expression;              ///< Execute: over expr::Tag and expr::Argument leaves
    std::optional<DataType> dtype;   ///< Execute, Multiply: the result type, when asked for
    bool transposeA = false, transposeB = false;
    Combine combine = Combine::Sum;
    SourceLocation where;
};

/// A value a tag names: its element type and shape.
struct ValueInfo {
    DataType dtype;
    std::vector<ExprPtr> shape;
};

class Command {
public:
    explicit Command(std::string name = "command")
        : name_(std::move(name)) {}

    // Declaring arguments.
    /// A size argument (i64), usable in shapes and strides as argument(name).
    ExprPtr size(std::string const& name);
    /// A tensor; empty strides mean row-major.
    Command& tensor(std::string name, DataType dtype, std::vector<ExprPtr> shape,
                    std::vector<ExprPtr> strides = {}, SourceLocation where = {});
    Command& scalar(std::string name, DataType dtype, SourceLocation where = {});

    // Adding operations; each returns the tag of the value it produces (or "" for stores).
    std::string loadTiled(std::string const& tensor);
    std::string loadLinear(std::string const& tensor);
    void storeTiled(std::string const& tensor, std::string const& value);
    void storeLinear(std::string const& tensor, std::string const& value);
    /// An element-wise expression; `text` names tags and scalars ("alpha * ab + beta * c"). The
    /// result has the shape of its tag of most axes; a tag of that shape without its last axis
    /// (a Reduce's result) is broadcast along that axis ("exp(x - m)", m = max of x's rows).
    std::string execute(std::string_view text, std::optional<DataType> dtype = std::nullopt);
    std::string multiply(std::string const& lhs, std::string const& rhs, bool transposeA = false,
                         bool transposeB = false);
    std::string reduce(std::string const& value, Combine combine = Combine::Sum);
    /// Adds an operation (the JSON loader's entry point) and returns its tag. Checks it first:
    /// tags defined before use and once, tensors declared, shapes that agree, types that fit;
    /// a UserError at op.where otherwise, and the Command is left as it was.
    std::string add(CommandOperation op);

    std::string const& name() const { return name_; }
    std::vector<TensorArgument> const& tensors() const { return tensors_; }
    std::vector<ScalarArgument> const& scalars() const { return scalars_; }
    /// Size arguments, in order of declaration.
    std::vector<std::string> const& sizes() const { return sizes_; }
    std::vector<CommandOperation> const& operations() const { return operations_; }

    TensorArgument const* findTensor(std::string_view name) const;
    ScalarArgument const* findScalar(std::string_view name) const;
    bool isSize(std::string_view name) const;

    /// Type and shape of every tag.
    std::map<std::string, ValueInfo> const& values() const { return values_; }

    /// Problem sizes and scalar values to run the Command with when the user gives none
    /// ("problem" in JSON); used by examples and `kiln interp`.
    std::map<std::string, double> defaults;

private:
    std::string freshTag(std::string_view stem);

    std::string name_;
    std::vector<TensorArgument> tensors_;
    std::vector<ScalarArgument> scalars_;
    std::vector<std::string> sizes_;
    std::vector<CommandOperation> operations_;
    std::map<std::string, ValueInfo> values_;
};

/// The names an element-wise expression of `command` may use: tags (as expr::Tag) and scalars
/// (as expr::Argument).
class CommandValueNames : public NameResolver {
public:
    explicit CommandValueNames(Command const& command)
        : command_(command) {}
    ExprPtr name(std::string_view name) const override;

private:
    Command const& command_;
};

/// The type a Multiply of `a` and `b` produces: f32 for half inputs (accumulation), else a's.
DataType multiplyResultType(DataType a, DataType b);

} // namespace kiln
