// Problem.h: one instance of a Command to tune for: its operations with concrete shapes.
//
// A tuning result is only worth reusing for the same problem: the same operations on tensors of
// the same element types, shapes, strides and alignment. Problem is that identity, extracted
// from a Command and its sizes, in a canonical JSON form for the tuning database's key; and the
// summary (GEMM M x N x K, element-wise length, reduction rows x columns) the cost model reads.
#pragma once

#include "kiln/graph/Command.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::scheduler {

/// What kind of kernel the cost model should assume.
enum class ProblemKind : std::uint8_t { Gemm, Elementwise, Reduction };
std::string_view name(ProblemKind kind);

/// A tensor argument with its shape and strides evaluated.
struct ProblemTensor {
    std::string name;
    DataType dtype = DataType::F32;
    std::vector<std::int64_t> shape, strides;
};

/// The operations of a Command at concrete sizes.
struct Problem {
    std::string command;
    std::vector<std::string> operations; ///< "Multiply ab = a x b^T", one per operation
    std::vector<ProblemTensor> tensors;
    std::map<std::string, std::int64_t> sizes;
    int alignment = 16; ///< bytes every tensor base address is a multiple of

    ProblemKind kind = ProblemKind::Elementwise;
    std::int64_t m = 0, n = 0, k = 0; ///< GEMM; reduction: m rows of n; element-wise: n values
    DataType inputType = DataType::F32, outputType = DataType::F32;
    double flopsPerElement = 1; ///< element-wise and reduction work per value read
    /// Bytes the loads read (each load of a tensor once; its distinct elements).
    double readBytes = 0;
    double writtenBytes = 0; ///< bytes the stores write

    /// The canonical JSON text (sorted keys, no spaces): the database key's "problem".
    std::string canonical() const;
    /// "gemm 4096x4096x4096 f16->f16" and the like.
    std::string summary() const;
    /// Floating-point operations of the whole problem (2MNK for a GEMM).
    double flops() const;
    /// Bytes every tensor holds (each read or written once at least; an axis of stride 0 adds
    /// none).
    double uniqueBytes() const;
};

/// The problem `command` describes at `sizes` (the Command's defaults where a size is missing);
/// a UserError naming a size that has no value.
Problem problemOf(Command const& command, std::map<std::string, double> const& sizes,
                  int alignment = 16);

} // namespace kiln::scheduler
