// OnlineSoftmax.h: a row's max and its sum of exp(x - max), found in a KernelGraph, which the
// ONLINE=1 schedule computes together in one pass over the row.
//
// A softmax reads its rows three times: for their max m, for the sum d of exp(x - m), and to
// write exp(x - m) / d. The online form (Milakov & Gimelshein 2018, "Online normalizer
// calculation for softmax") keeps a running max and a running sum together, rescaling the sum
// when the max grows (d = d exp(m_old - m_new) + exp(x - m_new)), so that m and d come from one
// read and the softmax reads its rows twice. The schedule is chosen by ONLINE (a schedule
// parameter code generation reads, Codegen.h) and applies where the graph has the pattern, found
// here by what the operations compute, not by the Command's name: a Reduce max of a row value x
// into m, an Assign of e = exp(f32(x) - f32(m)) (x and m themselves where they are f32), and a
// Reduce sum of e into s. The kernel walker writes the pass (KernelWalkerOnline.cpp). ONLINE=1
// also computes a layer norm's mean and variance in one pass (MeanVariance.h).
#pragma once

#include "kiln/graph/KernelGraph.h"
#include "kiln/lowering/Codegen.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::lowering {

/// A max-then-exp-sum over the rows of `rows`: Reduce `maxOp` (max) of `rows` into `max`, Assign
/// `expOp` of `exps` = exp(f32(rows) - f32(max)), Reduce `sumOp` (sum) of `exps` into `sum`.
struct MaxExpSum {
    Id maxOp = 0, expOp = 0, sumOp = 0;
    Id rows = 0, max = 0, exps = 0, sum = 0;
};

/// The max-then-exp-sum whose max Reduce `maxOp` is; else nothing, and `why` (when given) says
/// what the graph lacks, for messages.
std::optional<MaxExpSum> findMaxExpSum(KernelGraph const& graph, Id maxOp,
                                       std::string* why = nullptr);

/// Every max-then-exp-sum of `graph`, by their max Reduces' ids.
std::vector<MaxExpSum> findMaxExpSums(KernelGraph const& graph);

/// Whether the schedule of `options` asks for a row's statistics in one pass (ONLINE=1: a
/// max-then-exp-sum's max and sum, as here, and a mean-then-variance's mean and variance by
/// Welford's algorithm, MeanVariance.h; 0 or absent: the row read once per Reduce). A UserError
/// where it asks for it and `graph` has neither (an RMS norm), naming what the pass needs: the
/// schedule would not change the kernel.
bool onlineStatistics(KernelGraph const& graph, CodegenOptions const& options);

} // namespace kiln::lowering
