// ExampleCommands.h: the Commands the graph tests translate, built with the C++ API.
//
// The same four kernels as examples/ (axpy, a fused element-wise chain, GEMM, a row
// reduction), so that golden files, verifier and translate tests all look at realistic graphs.
#pragma once

#include "kiln/graph/Command.h"

namespace kiln::test {

/// y = alpha * x + y over [N], as flat vectors (LoadLinear / StoreLinear).
inline Command axpyCommand() {
    Command c("axpy");
    ExprPtr const n = c.size("N");
    c.tensor("x", DataType::F32, {n})
        .tensor("y", DataType::F32, {n})
        .scalar("alpha", DataType::F32);
    std::string const x = c.loadLinear("x");
    std::string const y = c.loadLinear("y");
    c.storeLinear("y", c.execute(x + " * alpha + " + y));
    return c;
}

/// out = relu(x * w + b) over [M, N], fused into one element-wise expression.
inline Command reluChainCommand() {
    Command c("relu_chain");
    ExprPtr const m = c.size("M"), n = c.size("N");
    for (char const* t : {"x", "w", "b", "out"})
        c.tensor(t, DataType::F32, {m, n});
    std::string const x = c.loadTiled("x"), w = c.loadTiled("w"), b = c.loadTiled("b");
    c.storeTiled("out", c.execute("max(" + x + " * " + w + " + " + b + ", 0)"));
    return c;
}

/// D = alpha * (A x B^T) + beta * C with A [M, K] f16, B [N, K] f16, C and D [M, N] f32.
inline Command gemmCommand() {
    Command c("gemm");
    ExprPtr const m = c.size("M"), n = c.size("N"), k = c.size("K");
    c.tensor("A", DataType::F16, {m, k})
        .tensor("B", DataType::F16, {n, k})
        .tensor("C", DataType::F32, {m, n})
        .tensor("D", DataType::F32, {m, n})
        .scalar("alpha", DataType::F32)
        .scalar("beta", DataType::F32);
    std::string const a = c.loadTiled("A"), b = c.loadTiled("B"), cc = c.loadTiled("C");
    std::string const ab = c.multiply(a, b, /*transposeA=*/false, /*transposeB=*/true);
    c.storeTiled("D", c.execute("alpha * " + ab + " + beta * " + cc));
    return c;
}

/// Y[i] = sum over j of X[i, j], X [M, N] f32.
inline Command rowSumCommand() {
    Command c("row_sum");
    ExprPtr const m = c.size("M"), n = c.size("N");
    c.tensor("X", DataType::F32, {m, n}).tensor("Y", DataType::F32, {m});
    c.storeTiled("Y", c.reduce(c.loadTiled("X")));
    return c;
}

} // namespace kiln::test
