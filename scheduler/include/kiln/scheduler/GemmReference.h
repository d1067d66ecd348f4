// GemmReference.h: cuBLAS as the reference of GEMM Commands too large for the CPU reference.
//
// The CPU reference takes minutes for a 4096-cubed GEMM; cuBLAS takes a millisecond. A Command
// whose operations are the loads of A and B (and C), one Multiply of the two, stored as it is
// or as `alpha * ab + beta * c`, is a GEMM cuBLAS computes: matchGemm recognises it, and
// gemmOnDevice queues cuBLAS on the inputs the kernel reads, into a buffer of its own.
#pragma once

#include "kiln/graph/Bindings.h"
#include "kiln/graph/Command.h"
#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Stream.h"
#include "kiln/runtime/cuda/Blas.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kiln::scheduler {

/// The roles of a GEMM Command's arguments: D = alpha * op(A) x op(B) + beta * C.
struct GemmForm {
    std::string a, b, c, d;  ///< tensor arguments; c empty when there is none
    std::string alpha, beta; ///< scalar arguments; empty: alpha 1, beta 0
    bool transA = false, transB = false;
};

/// The GEMM `command` computes, or nothing when it is anything else.
std::optional<GemmForm> matchGemm(Command const& command);

/// The cuBLAS shape of `form` at `bindings`, or InvalidArgument when a tensor is not dense
/// row-major or the types are not f32 x f32 or f16/bf16 x the same.
runtime::Expected<runtime::cuda::GemmShape> gemmShape(GemmForm const& form,
                                                      Bindings const& bindings);

/// Queues D = alpha * op(A) x op(B) + beta * C on `stream` through cuBLAS, reading `buffers`
/// (the kernel's inputs, by tensor name, as uploaded) and writing `result` (bytes of D's type).
runtime::Status
gemmOnDevice(runtime::cuda::Blas& blas, runtime::Stream& stream, GemmForm const& form,
             Bindings const& bindings,
             std::map<std::string, runtime::DeviceMemory<std::uint8_t>> const& buffers,
             runtime::DeviceMemory<std::uint8_t>& result);

} // namespace kiln::scheduler
