// ExportedGemm.h: the GEMM kernel the export tests write launchers for, made by hand so that
// the golden files do not change with code generation; and, for an AMD target, its code object,
// made by hand too, so that they do not change with the assembler either.
#pragma once

#include "../runtime/HandMadeCodeObject.h"
#include "kiln/lowering/Codegen.h"

#include <algorithm>

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

/// The GEMM for gfx942 (its code is only named: the code object below stands for it).
inline lowering::EmittedKernel exportedAmdGemm() {
    lowering::EmittedKernel k = exportedGemm();
    k.target = "gfx942";
    k.code = "// the AMDGCN assembly of kiln_gemm\n";
    return k;
}

/// A gfx942 code object of `k` as an assembler writes its metadata: the kernel's explicit
/// arguments are `k`'s parameters, at their offsets and sizes, and HIP's hidden arguments follow
/// them (the block counts, 8-byte aligned). A second note holds the kernel's symbol names as an
/// ELF string table does, "\0kiln_gemm\0kiln_gemm.kd\0", where the fake HIP runtime finds
/// kernels by name; the code object reader skips it.
inline std::string exportedCodeObject(lowering::EmittedKernel const& k) {
    using runtime::test::Pack;
    std::size_t end = 0;
    for (auto const& p : k.parameters)
        end = std::max(end, p.offset + p.size);
    std::size_t const hidden = (end + 7) / 8 * 8;
    Pack p;
    p.map(3);
    p.text("amdhsa.version").array(2).number(1).number(2);
    p.entry("amdhsa.target", "amdgcn-amd-amdhsa--" + k.target);
    p.text("amdhsa.kernels").array(1).map(5);
    p.entry(".name", k.entry).entry(".symbol", k.entry + ".kd");
    p.entry(".kernarg_segment_size", hidden + 12).entry(".wavefront_size", 64);
    p.text(".args").array(k.parameters.size() + 3);
    for (auto const& parameter : k.parameters) {
        p.map(4).entry(".name", parameter.name).entry(".offset", parameter.offset);
        p.entry(".size", parameter.size);
        p.entry(".value_kind", parameter.pointer ? "global_buffer" : "by_value");
    }
    for (std::size_t axis = 0; axis < 3; ++axis) {
        p.map(3).entry(".offset", hidden + 4 * axis).entry(".size", 4);
        p.entry(".value_kind", std::string("hidden_block_count_") + "xyz"[axis]);
    }
    std::string const symbols = std::string(1, '\0') + k.entry + '\0' + k.entry + ".kd" + '\0';
    return runtime::test::codeObject(runtime::test::metadataNote(p.bytes()) +
                                         runtime::test::note("kiln", 1, symbols),
                                     0x4c); // EF_AMDGPU_MACH_AMDGCN_GFX942
}

} // namespace kiln::test
