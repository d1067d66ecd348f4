// CoordinateTransform.h: the hyperedges of the coordinate graph and their exact index maps.
//
// A transform relates the indices of its tails to those of its heads. Each is an exact integer
// map with a forward direction (tails -> heads) and a reverse one (heads -> tails); code
// generation evaluates them (usually in reverse, from hardware indices to a tensor's offset) as
// Expressions, and the reference interpreter as integers, through the same templates below.
//
//   Split(U -> s0..sn)       forward: offset -> indices by strides     reverse: sum s_k * stride_k
//   Join(s0..sn -> U)        the inverse of Split
//   Flatten(t0..tn -> f)     forward: row-major by sizes               reverse: digits by sizes
//   Tile(t -> h0..hn)        forward: digits by head sizes             reverse: row-major
//   PassThrough(a -> b)      identity
//   Forget(t0..tn -> h)      the head no longer knows the tails: forward gives 0, no reverse
//   Inherit(t -> h0..hn)     every head takes the tail's index; reverse reads h0
//   Sunder(t -> h0..hn, s)   t runs over the heads one after another; s says which head holds it
//
// DataFlow edges are not transforms: they say that values move from tail data dimensions to
// head data dimensions.
#pragma once

#include "kiln/graph/Error.h"
#include "kiln/graph/Expression.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kiln {

enum class CoordinateEdgeKind : std::uint8_t {
    Split,
    Join,
    Flatten,
    Tile,
    PassThrough,
    Forget,
    Inherit,
    Sunder,
    DataFlow
};

std::span<CoordinateEdgeKind const> allCoordinateEdgeKinds();
std::string_view name(CoordinateEdgeKind kind);
std::optional<CoordinateEdgeKind> parseCoordinateEdgeKind(std::string_view name);

struct CoordinateEdge {
    CoordinateEdgeKind kind;
};

/// Whether `kind` relates indices (all kinds but DataFlow).
inline bool isTransform(CoordinateEdgeKind kind) {
    return kind != CoordinateEdgeKind::DataFlow;
}

/// The arity a transform needs: tails and heads, each a [min, max] range (max -1 = unbounded).
struct Arity {
    int minTails, maxTails, minHeads, maxHeads;
};
Arity arity(CoordinateEdgeKind kind);

/// What a transform needs besides indices: the sizes and strides of its tails and heads.
template <class V>
struct TransformShape {
    std::vector<V> tailSizes, headSizes, tailStrides, headStrides;
};

namespace detail {
inline std::int64_t literalOr(ExprPtr const& e, std::int64_t fallback) {
    return literalInt(e).value_or(fallback);
}
inline std::int64_t literalOr(std::int64_t v, std::int64_t) {
    return v;
}
inline std::int64_t zero(std::int64_t) {
    return 0;
}
inline ExprPtr zero(ExprPtr const&) {
    return literal(0);
}

// Digits of `value` in the mixed radix `sizes` (row-major; the first size is never used).
template <class V>
std::vector<V> digits(V value, std::vector<V> const& sizes) {
    std::vector<V> out(sizes.size());
    for (std::size_t k = sizes.size(); k-- > 1;) {
        out[k] = value % sizes[k];
        value = value / sizes[k];
    }
    if (!out.empty())
        out[0] = value;
    return out;
}

// Row-major combination of `digits` in the radix `sizes`.
template <class V>
V combine(std::vector<V> const& digits, std::vector<V> const& sizes) {
    V value = digits[0];
    for (std::size_t k = 1; k < digits.size(); ++k)
        value = value * sizes[k] + digits[k];
    return value;
}

template <class V>
V dot(std::vector<V> const& indices, std::vector<V> const& strides) {
    V value = indices[0] * strides[0];
    for (std::size_t k = 1; k < indices.size(); ++k)
        value = value + indices[k] * strides[k];
    return value;
}

// Indices of an element offset by strides: the largest stride first. Exact for any layout whose
// strides, sorted, each cover the extent of the next ones (every non-overlapping layout).
template <class V>
std::vector<V> byStrides(V offset, std::vector<V> const& strides) {
    std::vector<std::size_t> order(strides.size());
    for (std::size_t k = 0; k < order.size(); ++k)
        order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return literalOr(strides[a], 0) > literalOr(strides[b], 0);
    });
    std::vector<V> out(strides.size());
    for (std::size_t k : order) {
        out[k] = offset / strides[k];
        offset = offset % strides[k];
    }
    return out;
}
} // namespace detail

/// Head indices from tail indices; nullopt where the transform has no forward map.
/// V is std::int64_t (the interpreter) or ExprPtr (code generation).
template <class V>
std::optional<std::vector<V>> forward(CoordinateEdgeKind kind, std::vector<V> const& tails,
                                      TransformShape<V> const& shape) {
    using namespace detail;
    switch (kind) {
    case CoordinateEdgeKind::Split:
        return byStrides(tails[0], shape.headStrides);
    case CoordinateEdgeKind::Join:
        return std::vector<V>{dot(tails, shape.tailStrides)};
    case CoordinateEdgeKind::Flatten:
        return std::vector<V>{combine(tails, shape.tailSizes)};
    case CoordinateEdgeKind::Tile:
        return digits(tails[0], shape.headSizes);
    case CoordinateEdgeKind::PassThrough:
        return tails;
    case CoordinateEdgeKind::Forget:
        return std::vector<V>{zero(tails[0])};
    case CoordinateEdgeKind::Inherit:
        return std::vector<V>(shape.headSizes.size(), tails[0]);
    case CoordinateEdgeKind::Sunder:
        return std::nullopt; // which head holds t depends on t: evaluated by sunderForward
    case CoordinateEdgeKind::DataFlow:
        return std::nullopt;
    }
    return std::nullopt;
}

/// Tail indices from head indices; nullopt where the transform has no reverse map.
template <class V>
std::optional<std::vector<V>> reverse(CoordinateEdgeKind kind, std::vector<V> const& heads,
                                      TransformShape<V> const& shape) {
    using namespace detail;
    switch (kind) {
    case CoordinateEdgeKind::Split:
        return std::vector<V>{dot(heads, shape.headStrides)};
    case CoordinateEdgeKind::Join:
        return byStrides(heads[0], shape.tailStrides);
    case CoordinateEdgeKind::Flatten:
        return digits(heads[0], shape.tailSizes);
    case CoordinateEdgeKind::Tile:
        return std::vector<V>{combine(heads, shape.headSizes)};
    case CoordinateEdgeKind::PassThrough:
        return heads;
    case CoordinateEdgeKind::Forget:
        return std::nullopt;
    case CoordinateEdgeKind::Inherit:
        return std::vector<V>{heads[0]};
    case CoordinateEdgeKind::Sunder:
        return std::nullopt; // needs the selector's value: evaluated by sunderReverse
    case CoordinateEdgeKind::DataFlow:
        return std::nullopt;
    }
    return std::nullopt;
}

/// Sunder forward on integers: heads (segment indices..., selector); unselected segments are 0.
std::vector<std::int64_t> sunderForward(std::int64_t tail,
                                        std::vector<std::int64_t> const& segmentSizes);
/// Sunder reverse on integers: heads are (segment indices..., selector).
std::int64_t sunderReverse(std::vector<std::int64_t> const& heads,
                           std::vector<std::int64_t> const& segmentSizes);

} // namespace kiln
