// CheckProvenance.h: how a candidate's result was checked, in the words reports and exports use.
//
// A measured candidate is checked before it is timed, and fails (stage "check") when wrong: the
// interpreter evaluator runs the lowered graph in the reference interpreter against the
// Command's direct semantics; the cuda evaluator compares the kernel's output on the device with
// a reference made once per problem, by cuBLAS for a large GEMM and on the CPU otherwise (its
// worker records which in the candidate's extra as "reference_cublas", 1 or 0). The cost model
// runs nothing: its candidates are ranked, not checked. So the provenance follows from the
// evaluator of the record's key and that one extra number; the record needs no field of its own.
#pragma once

#include <map>
#include <string>

namespace kiln::scheduler {

/// The extra a cuda worker answers with: 1 when the reference was cuBLAS's, 0 when the CPU's.
inline constexpr char const kReferenceCublasExtra[] = "reference_cublas";

/// How a candidate evaluated by `evaluator` (a TuningKey's) with `extra` was checked:
///   "interpreter"                   measured:interpreter
///   "GPU against cuBLAS"            measured:cuda, reference_cublas 1
///   "GPU against CPU reference"     measured:cuda, reference_cublas 0
///   "GPU (reference not recorded)"  measured:cuda, recorded before workers said which
///   "unchecked (cost model)"        model and model:... (ranked by the cost model only)
///   "unknown (evaluator NAME)"      any other evaluator
std::string checkedBy(std::string const& evaluator, std::map<std::string, double> const& extra);

/// Whether checkedBy's `provenance` says that a check ran (interpreter or GPU).
bool wasChecked(std::string const& provenance);

} // namespace kiln::scheduler
