// IndexFacts.h: what code generation can prove about integer index expressions.
//
// Addresses come out of the coordinate transforms as expressions over hardware indices, loop
// counters, constants and launch-time sizes. Each index on the way must lie inside its
// dimension, which becomes a mask in the kernel unless it holds for every launch: a workitem
// number below the workgroup size, `x % 4 < 4`, a workgroup number below the grid size it was
// launched with. IndexFacts proves such conditions from value ranges and from the sizes the
// hardware dimensions carry, and finds the powers of two an offset is a multiple of, which is
// what decides whether accesses can be vectorized. It lives as long as code generation for one
// graph, so it also keeps that graph's chains of transforms (TransformChains), which every
// solveIndices asks for.
#pragma once

#include "kiln/graph/KernelGraph.h"
#include "kiln/lowering/TransformChains.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::lowering {

/// A closed range of integers; a missing end is unbounded.
struct Interval {
    std::optional<std::int64_t> lo, hi;
};

class IndexFacts {
public:
    explicit IndexFacts(KernelGraph const& graph)
        : graph_(graph)
        , chains_(graph) {}

    /// Sizes every launch of the kernel has (a kernel made for one problem, whose launch
    /// checks them: PtxCodegen's prologue traps where one differs): each is then its value in
    /// every range, so that the masks they make unneeded go (a row of 8192 in steps of 4096
    /// has no element past its end).
    void assumeSizes(std::map<std::string, std::int64_t> sizes) { sizes_ = std::move(sizes); }

    /// The range of an integer expression over every launch (sizes are never negative).
    Interval range(ExprPtr const& e) const;
    /// The largest power of two (up to 2^20) that divides `e` for every launch.
    std::int64_t powerOfTwoDivisor(ExprPtr const& e) const;
    /// a - b when it is the same constant for every launch (a and b differ in a literal term).
    static std::optional<std::int64_t> difference(ExprPtr const& a, ExprPtr const& b);
    /// a - b when it is the same for every element of a launch (literals and sizes only, as in
    /// `(r + 16) * K - r * K`, which is `16 * K`), else null.
    static ExprPtr launchTimeDifference(ExprPtr const& a, ExprPtr const& b);
    /// Conditions that together imply `offset % width == 0` (width a power of two), each as
    /// cheap as can be: terms that are multiples of `width` drop out, and a product with a size
    /// known at launch asks only that the size be a multiple (`row * K + k * 8` with width 8 is
    /// aligned when `K % 8 == 0`). Empty when it always holds. Sufficient, not necessary: a
    /// caller keeps a slower path for what they leave out.
    std::vector<ExprPtr> alignedWhen(ExprPtr const& offset, std::int64_t width) const;
    /// The conditions that imply all of `conditions`: duplicates go, and of `x + a < n` and
    /// `x + b < n` only the larger left side stays (of `x + a >= 0` and `x + b >= 0` the smaller).
    static std::vector<ExprPtr> strongest(std::vector<ExprPtr> const& conditions);
    /// Whether `condition` follows from `others` (each of them holding): a flattened index
    /// `a * s + b < m * s` is inside when its parts are, `a < m` and `b < s`; the row `x / s < m`
    /// of a flattened index is inside when the index is, `x + d < m * s` with d >= 0.
    bool impliedBy(ExprPtr const& condition, std::vector<ExprPtr> const& others) const;
    /// Whether `0 <= e` holds for every launch.
    bool nonNegative(ExprPtr const& e) const;
    /// Whether `e < bound` holds for every launch.
    bool less(ExprPtr const& e, ExprPtr const& bound) const;
    /// `e` with divisions and remainders by constants folded where the ranges allow:
    /// `x % c -> x` and `x / c -> 0` for 0 <= x < c, `(a * c + b) % c -> b % c` and
    /// `(a * c + b) / c -> a + b / c` for non-negative a and b. Splitting a tile's index and
    /// putting it back together leaves such terms, and each costs a 64-bit division.
    ExprPtr reduce(ExprPtr const& e) const;

    /// The graph's chains of transforms, each found once (a cache: it does not change what
    /// IndexFacts proves).
    TransformChains& chains() const { return chains_; }

private:
    KernelGraph const& graph_;
    std::map<std::string, std::int64_t> sizes_; ///< assumeSizes()
    mutable TransformChains chains_;
};

} // namespace kiln::lowering
