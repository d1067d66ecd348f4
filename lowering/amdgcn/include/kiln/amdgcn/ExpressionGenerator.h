// ExpressionGenerator.h: instructions that compute a kiln Expression on an AMD target.
//
// generate(expr) visits the tree and returns the Value holding the result, appending the
// instructions to the Builder's stream. Leaves come from the caller (Leaves): kernel arguments
// from the ArgumentLoader, indices of hardware dimensions and loop counters, and values already
// in registers. Uniform integer work (all operands in SGPRs or literals) runs on the scalar
// unit; the rest on the vector unit. Types follow Expression.h: i32 and i64 with C semantics
// (64-bit values in register pairs, carries through a mask register), f32, f64, and f16/bf16
// computed in f32 and rounded back after every operation, as the interpreter does; booleans are
// lane masks. Literal operands are folded when both sides are literals. Division by a constant
// is a multiply-high (DivisionMagic.h); i32 division by a run-time value uses the reciprocal
// estimate and two corrections, i64 division an f64 quotient and one correction (exact below
// 2^53). With a memo (reuse()), index subexpressions (those that read no
// data value) are computed once while the memo lives: the many addresses of a tile share their
// common parts, as the PTX writer's scopes do.
#pragma once

#include "kiln/amdgcn/Builder.h"
#include "kiln/graph/Expression.h"

#include <functional>
#include <map>
#include <string>

namespace kiln::amdgcn {

/// Where the leaves of an expression are.
struct Leaves {
    std::function<Value(expr::Argument const&)> argument;
    std::function<Value(Id)> index;
    std::function<Value(Id)> size;
    std::function<Value(Id)> stride;
    std::function<Value(Id, DataType)> data;
};

class ExpressionGenerator {
public:
    ExpressionGenerator(Builder& builder, Leaves leaves);

    /// The value of `e`, of type resultType(*e).
    Value generate(ExprPtr const& e);

    /// Index subexpressions already computed, by their text. The caller owns the memo and
    /// clears it where the values stop being available (the end of a loop body, a change of
    /// the exec mask); nullptr computes everything afresh.
    using Memo = std::map<std::string, Value>;
    void reuse(Memo* memo) { memo_ = memo; }
    Memo* memo() const { return memo_; }

    /// The precision of the functions and quotients generated from here on
    /// (kiln/lowering/Precision.h): Approximate writes tanh and f32 quotients with v_rcp_f32
    /// alone, Exact the sequences whose f32 results stay within 1e-5. Exact unless told.
    void usePrecision(Precision precision) { precision_ = precision; }

    /// `v` (of type `from`) converted to `to`.
    Value convert(Value const& v, DataType from, DataType to);
    /// `op` on two operands of type `type` (already converted).
    Value binary(BinaryOp op, Value const& a, Value const& b, DataType type);
    /// `op` on one operand of type `type`.
    Value unary(UnaryOp op, Value const& a, DataType type);
    /// Lanes of `mask` take `ifTrue`, the others `ifFalse`.
    Value select(Value const& mask, Value const& ifTrue, Value const& ifFalse, DataType type);

private:
    Value literalOf(Value const& v, DataType type) const;
    Value compare(BinaryOp op, Value const& a, Value const& b, DataType type);
    Value scalarInteger(BinaryOp op, Value const& a, Value const& b, DataType type);
    Value vectorInteger32(BinaryOp op, Value const& a, Value const& b);
    Value vectorInteger64(BinaryOp op, Value const& a, Value const& b);
    Value vectorFloat(BinaryOp op, Value const& a, Value const& b, DataType type);
    Value divide32(BinaryOp op, Value const& a, Value const& b);
    Value divideByConstant32(BinaryOp op, Value const& a, std::int64_t d);
    Value divideByConstant64(BinaryOp op, Value const& a, std::int64_t d);
    Value divide64(BinaryOp op, Value const& a, Value const& b);
    Value unsignedDivide32(Value const& n, Value const& d, Value* remainder);
    Value divideFloat(Value const& a, Value const& b, DataType type);
    Value roundHalf(Value const& v, DataType type);
    Value vop(std::string_view mnemonic, DataType type, std::vector<Value> srcs, bool vop2,
              bool commutative = false);
    Value add64(Value const& a, Value const& b);
    Value sub64(Value const& a, Value const& b);
    Value mulhs64(Value const& a, std::int64_t m);

    Value generateNode(ExprPtr const& e);

    Builder& b_;
    Leaves leaves_;
    Memo* memo_ = nullptr;
    Precision precision_ = Precision::Exact;
};

} // namespace kiln::amdgcn
