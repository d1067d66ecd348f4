#include "kiln/graph/CoordinateTransform.h"

namespace kiln {

Arity arity(CoordinateEdgeKind kind) {
    switch (kind) {
    case CoordinateEdgeKind::Split:
        return {1, 1, 1, -1};
    case CoordinateEdgeKind::Join:
        return {1, -1, 1, 1};
    case CoordinateEdgeKind::Flatten:
        return {1, -1, 1, 1};
    case CoordinateEdgeKind::Tile:
        return {1, 1, 1, -1};
    case CoordinateEdgeKind::PassThrough:
        return {1, 1, 1, 1};
    case CoordinateEdgeKind::Forget:
        return {1, -1, 1, 1};
    case CoordinateEdgeKind::Inherit:
        return {1, 1, 1, -1};
    case CoordinateEdgeKind::Sunder:
        return {1, 1, 2, -1};
    case CoordinateEdgeKind::DataFlow:
        return {1, -1, 1, -1};
    }
    return {0, 0, 0, 0};
}

std::vector<std::int64_t> sunderForward(std::int64_t tail,
                                        std::vector<std::int64_t> const& segmentSizes) {
    std::vector<std::int64_t> heads(segmentSizes.size() + 1, 0);
    std::int64_t start = 0;
    for (std::size_t k = 0; k < segmentSizes.size(); ++k) {
        if (tail < start + segmentSizes[k] || k + 1 == segmentSizes.size()) {
            heads[k] = tail - start;
            heads.back() = static_cast<std::int64_t>(k);
            return heads;
        }
        start += segmentSizes[k];
    }
    return heads;
}

std::int64_t sunderReverse(std::vector<std::int64_t> const& heads,
                           std::vector<std::int64_t> const& segmentSizes) {
    std::int64_t const selected = heads.back();
    KILN_ASSERT(selected >= 0 && static_cast<std::size_t>(selected) < segmentSizes.size(),
                "Sunder selector {} is out of range", selected);
    std::int64_t start = 0;
    for (std::int64_t k = 0; k < selected; ++k)
        start += segmentSizes[static_cast<std::size_t>(k)];
    return start + heads[static_cast<std::size_t>(selected)];
}

} // namespace kiln
