// MeanVariance.h: a row's mean and its variance, found in a KernelGraph, which the ONLINE=1
// schedule computes together in one pass over the row (Welford's algorithm).
//
// A layer norm reads its rows three times: for their mean m, for the mean of (x - m)^2, and to
// write (x - m) rsqrt(var + eps). Welford's algorithm (1962) keeps a count, a running mean and a
// running sum of squared deviations M2 together, so that m and var come from one read and the
// layer norm reads its rows twice; partial (count, mean, M2) triples combine exactly by Chan,
// Golub and LeVeque's formula (1979), so the workitems sharing a row each keep their own and meet
// at the end. Unlike the sum of squares minus the squared mean, it does not cancel where the mean
// is large relative to the spread. The schedule is chosen by ONLINE (a schedule parameter code
// generation reads, Codegen.h; OnlineSoftmax.h's onlineStatistics()) and applies where the graph
// has the pattern, found by what the operations compute, not by the Command's name: a Reduce mean
// of a row value x into m, an Assign of d = f32(x) - f32(m) (x and m themselves where they are
// f32), an Assign of d * d, and a Reduce mean of it into var. The kernel walker writes the pass
// (KernelWalkerOnline.cpp).
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::lowering {

/// A mean-then-variance over the rows of `rows`: Reduce `meanOp` (mean) of `rows` into `mean`,
/// Assign `deviationOp` of `deviations` = f32(rows) - f32(mean), Assign `squareOp` of `squares`
/// = deviations * deviations, Reduce `varianceOp` (mean) of `squares` into `variance`.
struct MeanVariance {
    Id meanOp = 0, deviationOp = 0, squareOp = 0, varianceOp = 0;
    Id rows = 0, mean = 0, deviations = 0, squares = 0, variance = 0;
};

/// The mean-then-variance whose mean Reduce `meanOp` is; else nothing, and `why` (when given)
/// says what the graph lacks, for messages.
std::optional<MeanVariance> findMeanVariance(KernelGraph const& graph, Id meanOp,
                                             std::string* why = nullptr);

/// Every mean-then-variance of `graph`, by their mean Reduces' ids.
std::vector<MeanVariance> findMeanVariances(KernelGraph const& graph);

} // namespace kiln::lowering
