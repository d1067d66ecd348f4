// PtxWriter.h: PTX text for one kernel: virtual registers, instructions, and expressions.
//
// PTX has unlimited typed virtual registers and ptxas allocates them, so the writer hands out a
// fresh register per value and leaves allocation, scheduling and loop-invariant code motion to
// ptxas. Expressions are emitted bottom-up, each subexpression once per scope (a scope is a
// structured region: a loop body, a branch), so that the many addresses of a tile share their
// common parts. Floating-point values of 16 bits live in f32 registers between a load and a
// store, which is also how the interpreter computes them (in wider precision, rounded at the
// value). Integer index arithmetic is 64-bit.
#pragma once

#include "kiln/graph/ElementwiseFunctions.h"
#include "kiln/graph/KernelGraph.h"
#include "kiln/lowering/IndexFacts.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::lowering {

/// The register classes the writer uses.
enum class PtxType : std::uint8_t { Pred, B16, B32, S32, S64, U64, F32, F64 };

/// ".pred", ".b16", ...
std::string_view ptxName(PtxType type);

/// The register class holding values of `type` between a load and a store.
PtxType registerType(DataType type);

/// The PTX element type of `type` in memory (".f32", ".b16" for f16/bf16, ".s32", ...).
std::string_view memoryType(DataType type);

/// What an expression leaf means inside the kernel being written.
struct PtxBindings {
    /// The s64 register holding a dimension's current index (hardware index, loop counter, or
    /// a constant element number), or empty when the index is not bound here.
    std::function<std::string(Id)> index;
    /// The register holding a data dimension's value at the element being computed.
    std::function<std::string(Id, DataType)> dataValue;
};

class PtxWriter {
public:
    PtxWriter(KernelGraph const& graph, IndexFacts const& facts);

    /// A fresh register of `type`.
    std::string newRegister(PtxType type);
    /// Appends one line of the kernel body (an instruction gets its `;` here). A kernel of
    /// more than kMaxKernelInstructions (Codegen.h) is refused as it passes them (a UserError).
    void instruction(std::string const& text);
    void label(std::string const& name);
    /// A fresh label name.
    std::string newLabel(std::string_view hint);
    void comment(std::string const& text);

    /// Binds a kernel argument to the register that holds it.
    void bindArgument(std::string const& name, std::string reg);

    /// Emits `e` converted to `want` (F16/BF16 mean an f32 register rounded to that type) and
    /// returns the register (or an immediate, for constants).
    std::string emit(ExprPtr const& e, DataType want, PtxBindings const& bindings);
    /// emit() with the functions and quotients of `e` computed at `precision` (Precision.h):
    /// Approximate writes tanh.approx.f32, ex2.approx.ftz.f32, rcp.approx.ftz.f32 (a quotient
    /// of a literal) and div.full.f32 for f32 values, where Exact writes the sequences whose
    /// f32 results stay within 1e-5.
    std::string emit(ExprPtr const& e, DataType want, PtxBindings const& bindings,
                     Precision precision);
    /// Emits an index expression (s64).
    std::string emitIndex(ExprPtr const& e, PtxBindings const& bindings);
    /// Emits the conjunction of `conditions` as a predicate register ("" when there are none).
    std::string emitConditions(std::vector<ExprPtr> const& conditions, PtxBindings const& bindings);

    /// `value` (a register or immediate of `from`) as `to`.
    std::string convert(std::string const& value, DataType from, DataType to);

    /// A register holding the address of element `offset` of a tensor, for addresses near it.
    struct Address {
        Id tensor = 0;
        ExprPtr offset;
        std::string reg;
    };
    void rememberAddress(Id tensor, ExprPtr offset, std::string reg);
    /// The last `count` addresses of `tensor` remembered in the scopes still open, latest first.
    std::vector<Address> recentAddresses(Id tensor, std::size_t count) const;

    /// Subexpressions (and addresses) emitted inside a scope are forgotten when it ends.
    void pushScope();
    void popScope();
    /// Every subexpression and address emitted so far forgotten, in every open scope: for code
    /// after an index's register changed (a ping-pong consumer's warp index, PtxPingpong.cpp).
    void forgetExpressions();

    /// Where the body ends now; `cut` removes and returns what was written since, `append`
    /// writes such text back (to emit code whose guard is known only after it is written).
    std::size_t mark() const { return body_.size(); }
    std::string cut(std::size_t mark);
    void append(std::string const& text) { body_ += text; }

    /// The register declarations followed by the body.
    std::string declarations() const;
    std::string const& body() const { return body_; }

private:
    std::string emitNode(ExprPtr const& e, DataType type, PtxBindings const& bindings);
    std::string immediate(Value v, DataType type);
    std::optional<std::string> foldImmediates(BinaryOp op, std::string const& a,
                                              std::string const& b, DataType type);
    std::string binaryInteger(BinaryOp op, ExprPtr const& lhs, ExprPtr const& rhs, DataType type,
                              PtxBindings const& bindings);
    std::string binaryFloat(BinaryOp op, std::string const& a, std::string const& b, DataType type);

    KernelGraph const& graph_;
    IndexFacts const& facts_;
    std::map<PtxType, int> counts_;
    std::size_t instructions_ = 0;
    int labels_ = 0;
    std::string body_;
    std::map<std::string, std::string> arguments_;
    std::vector<std::map<std::string, std::string>> scopes_;
    std::vector<std::vector<Address>> addresses_;
    Precision precision_ = Precision::Exact;
};

} // namespace kiln::lowering
