// CoordinatePlan.h: computing some coordinates of a KernelGraph from others, fast.
//
// Reading or writing one element means finding, from the indices we know (loop counters,
// workgroup and workitem numbers, the element's place in a tile), the index of another
// dimension (a User tensor's offset). A CoordinatePlan finds the chain of transforms once, each
// applied forward where its tails are known or in reverse where its heads are, keeps only the
// steps the targets need, and then runs that chain per element on plain integers. An
// intermediate index outside its dimension's range marks the element as masked: that is how
// tiles that overhang a tensor's edge are cut off.
#pragma once

#include "kiln/graph/KernelGraph.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace kiln {

class CoordinatePlan {
public:
    /// Sizes and strides of dimensions at the problem being run; nullopt where not defined.
    struct Extents {
        std::function<std::optional<std::int64_t>(Id)> size;
        std::function<std::optional<std::int64_t>(Id)> stride;
    };

    /// A plan computing `targets` from `known` in `graph`; a UserError naming the first target
    /// that no chain of transforms reaches.
    CoordinatePlan(KernelGraph const& graph, std::vector<Id> known, std::vector<Id> targets,
                   Extents const& extents);

    /// Computes the targets from the known values (in the order given to the constructor).
    /// Returns false when some index on the way is outside its dimension (a masked element).
    bool run(std::span<std::int64_t const> known, std::span<std::int64_t> targets) const;

    /// The number of transform applications per run.
    std::size_t steps() const { return steps_.size(); }

private:
    struct Step {
        CoordinateEdgeKind kind;
        bool forward;
        std::vector<int> inputs, outputs;      // slots
        std::vector<std::int64_t> sizes;       // radix sizes or strides, as the kind needs
        std::vector<std::int64_t> outputLimit; // range check per output; -1 = none
    };

    std::vector<Step> steps_;
    std::vector<int> knownSlots_, targetSlots_;
    mutable std::vector<std::int64_t> slots_;
};

} // namespace kiln
