// ExportedGemm.h: the GEMM kernel the export tests write launchers for, made by hand so that
// the golden files do not change with code generation.
#pragma once

#include "kiln/lowering/Codegen.h"

namespace kiln::test {

inline lowering::ParameterInfo exportedParameter(std::string name, std::string type, bool pointer,
                                                 std::size_t offset, std::string meaning) {
    return {.name = std::move(name),
            .type = std::move(type),
            .pointer = pointer,
            .size = 8,
            .offset = offset,
            .meaning = std::move(meaning)};
}

/// A GEMM as code generation describes it: the sizes M, K, N in the manifest's order, which is
/// not alphabetical.
inline lowering::EmittedKernel exportedGemm() {
    lowering::EmittedKernel k;
    k.entry = "kiln_gemm";
    k.target = "sm_90a";
    k.code = "// the PTX of kiln_gemm\n";
    k.parameters = {exportedParameter("A", "f16", true, 0, "tensor A"),
                    exportedParameter("B", "f16", true, 8, "tensor B"),
                    exportedParameter("D", "f16", true, 16, "tensor D"),
                    exportedParameter("M", "i64", false, 24, "size M"),
                    exportedParameter("K", "i64", false, 32, "size K"),
                    exportedParameter("N", "i64", false, 40, "size N")};
    k.block[0] = 128;
    k.grid = {"ceildiv(M, 64)", "ceildiv(N, 64)", "1"};
    k.sharedBytes = 16384;
    k.schedule = {{"MT_K", 32}, {"MT_M", 64}, {"MT_N", 64}};
    k.graphHash = "0123456789abcdef";
    return k;
}

/// The same GEMM with its tiles loaded by the copy engine (TMA=1): tensor maps of A (K x M
/// halves, boxes of 128 x 64) and B (N x K, boxes of 64 x 64) after the sizes.
inline lowering::EmittedKernel exportedTmaGemm() {
    lowering::EmittedKernel k = exportedGemm();
    k.schedule["TMA"] = 1;
    auto map = [](std::string name, std::string tensor, std::int64_t rows,
                  std::vector<std::string> sizes, std::string stride, std::size_t offset) {
        lowering::ParameterInfo p =
            exportedParameter(std::move(name), "f16", false, offset, "tensor map of " + tensor);
        p.size = 128;
        p.tensorMap = lowering::TensorMapInfo{.tensor = std::move(tensor),
                                              .box = {64, rows},
                                              .sizes = std::move(sizes),
                                              .strides = {std::move(stride)}};
        return p;
    };
    k.parameters.push_back(map("A_tma", "A", 128, {"K", "M"}, "K", 64));
    k.parameters.push_back(map("B_tma", "B", 64, {"N", "K"}, "N", 192));
    return k;
}

} // namespace kiln::test
