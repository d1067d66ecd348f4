#include "kiln/graph/CoordinatePlan.h"

#include "kiln/graph/TransformChain.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace kiln {

namespace {

// Which sizes a step needs, by kind and direction: the radix of a digit decomposition or
// combination, or the strides of a dot product / decomposition by strides.
enum class Needs { None, TailSizes, HeadSizes, TailStrides, HeadStrides, SunderSizes };

Needs needs(CoordinateEdgeKind kind) {
    switch (kind) {
    case CoordinateEdgeKind::Split:
        return Needs::HeadStrides;
    case CoordinateEdgeKind::Join:
        return Needs::TailStrides;
    case CoordinateEdgeKind::Flatten:
        return Needs::TailSizes;
    case CoordinateEdgeKind::Tile:
        return Needs::HeadSizes;
    case CoordinateEdgeKind::Sunder:
        return Needs::SunderSizes;
    default:
        return Needs::None;
    }
}

// Digits of `value` in radix `sizes` (row-major, first size unused).
inline void digits(std::int64_t value, std::int64_t const* sizes, std::size_t n,
                   std::int64_t* out) {
    for (std::size_t k = n; k-- > 1;) {
        out[k] = value % sizes[k];
        value /= sizes[k];
    }
    out[0] = value;
}

inline std::int64_t combine(std::int64_t const* in, std::int64_t const* sizes, std::size_t n) {
    std::int64_t value = in[0];
    for (std::size_t k = 1; k < n; ++k)
        value = value * sizes[k] + in[k];
    return value;
}

} // namespace

CoordinatePlan::CoordinatePlan(KernelGraph const& graph, std::vector<Id> known,
                               std::vector<Id> targets, Extents const& extents) {
    auto const& coords = graph.coordinates;
    std::map<Id, int> slotOf;
    auto slot = [&](Id id) {
        auto [it, inserted] = slotOf.try_emplace(id, static_cast<int>(slotOf.size()));
        return it->second;
    };
    for (Id id : known)
        knownSlots_.push_back(slot(id));

    std::vector<TransformStep> const chain = transformChain(graph, known, targets);

    auto limitOf = [&](Id n) -> std::int64_t {
        auto const& d = coords.node(n);
        if (d.kind == DimensionKind::User || !d.size)
            return -1; // a User's index is an offset, bounded by its SubDimensions instead
        return extents.size(n).value_or(-1);
    };
    auto require = [&](std::optional<std::int64_t> v, Id n, char const* what) {
        if (!v)
            throw UserError(fmt::format("dimension #{} has no {}", n, what));
        return *v;
    };

    for (TransformStep const& c : chain) {
        CoordinateEdgeKind const kind = coords.edge(c.edge).kind;
        Step step{kind, c.forward, {}, {}, {}, {}};
        for (Id n : c.inputs)
            step.inputs.push_back(slot(n));
        for (Id n : c.outputs) {
            step.outputs.push_back(slot(n));
            step.outputLimit.push_back(limitOf(n));
        }
        auto tails = coords.tails(c.edge), heads = coords.heads(c.edge);
        switch (needs(kind)) {
        case Needs::TailSizes:
            for (Id n : tails)
                step.sizes.push_back(require(extents.size(n), n, "size"));
            break;
        case Needs::HeadSizes:
            for (Id n : heads)
                step.sizes.push_back(n == heads[0] ? extents.size(n).value_or(0)
                                                   : require(extents.size(n), n, "size"));
            break;
        case Needs::TailStrides:
            for (Id n : tails)
                step.sizes.push_back(require(extents.stride(n), n, "stride"));
            break;
        case Needs::HeadStrides:
            for (Id n : heads)
                step.sizes.push_back(require(extents.stride(n), n, "stride"));
            break;
        case Needs::SunderSizes:
            for (std::size_t k = 0; k + 1 < heads.size(); ++k)
                step.sizes.push_back(require(extents.size(heads[k]), heads[k], "size"));
            break;
        case Needs::None:
            break;
        }
        steps_.push_back(std::move(step));
    }
    for (Id t : targets)
        targetSlots_.push_back(slot(t));
    slots_.assign(slotOf.size(), 0);
}

bool CoordinatePlan::run(std::span<std::int64_t const> known,
                         std::span<std::int64_t> targets) const {
    std::int64_t* s = slots_.data();
    for (std::size_t k = 0; k < knownSlots_.size(); ++k)
        s[knownSlots_[k]] = known[k];

    std::int64_t in[8], out[8];
    for (auto const& step : steps_) {
        std::size_t const ni = step.inputs.size(), no = step.outputs.size();
        KILN_ASSERT(ni <= 8 && no <= 8, "transform with more than 8 ports");
        for (std::size_t k = 0; k < ni; ++k)
            in[k] = s[step.inputs[k]];
        std::int64_t const* sizes = step.sizes.data();
        switch (step.kind) {
        case CoordinateEdgeKind::Split:
        case CoordinateEdgeKind::Join: {
            // Split forward / Join reverse decompose an offset by strides; the other two combine.
            bool const decompose = (step.kind == CoordinateEdgeKind::Split) == step.forward;
            if (decompose) {
                // Largest stride first; strides are few, so a selection pass is enough.
                std::int64_t rest = in[0];
                bool done[8] = {};
                for (std::size_t r = 0; r < no; ++r) {
                    std::size_t best = no;
                    for (std::size_t k = 0; k < no; ++k)
                        if (!done[k] && (best == no || sizes[k] > sizes[best]))
                            best = k;
                    done[best] = true;
                    if (sizes[best] == 0)
                        return false;
                    out[best] = rest / sizes[best];
                    rest %= sizes[best];
                }
            } else {
                std::int64_t v = 0;
                for (std::size_t k = 0; k < ni; ++k)
                    v += in[k] * sizes[k];
                out[0] = v;
            }
            break;
        }
        case CoordinateEdgeKind::Flatten:
        case CoordinateEdgeKind::Tile: {
            bool const split = (step.kind == CoordinateEdgeKind::Tile) == step.forward;
            std::size_t const radix = split ? no : ni;
            for (std::size_t k = 1; k < radix; ++k)
                if (sizes[k] == 0)
                    return false;
            if (split)
                digits(in[0], sizes, no, out);
            else
                out[0] = combine(in, sizes, ni);
            break;
        }
        case CoordinateEdgeKind::PassThrough:
            out[0] = in[0];
            break;
        case CoordinateEdgeKind::Forget:
            out[0] = 0;
            break;
        case CoordinateEdgeKind::Inherit:
            if (step.forward)
                for (std::size_t k = 0; k < no; ++k)
                    out[k] = in[0];
            else
                out[0] = in[0];
            break;
        case CoordinateEdgeKind::Sunder: {
            std::vector<std::int64_t> const segmentSizes(sizes, sizes + step.sizes.size());
            if (step.forward) {
                auto heads = sunderForward(in[0], segmentSizes);
                std::copy(heads.begin(), heads.end(), out);
            } else {
                std::vector<std::int64_t> const heads(in, in + ni);
                if (heads.back() < 0 ||
                    static_cast<std::size_t>(heads.back()) >= segmentSizes.size())
                    return false;
                out[0] = sunderReverse(heads, segmentSizes);
            }
            break;
        }
        case CoordinateEdgeKind::DataFlow:
            break;
        }
        for (std::size_t k = 0; k < no; ++k) {
            if (out[k] < 0 || (step.outputLimit[k] >= 0 && out[k] >= step.outputLimit[k]))
                return false;
            s[step.outputs[k]] = out[k];
        }
    }
    for (std::size_t k = 0; k < targetSlots_.size(); ++k)
        targets[k] = s[targetSlots_[k]];
    return true;
}

} // namespace kiln
