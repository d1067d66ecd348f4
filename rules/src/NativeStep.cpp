#include "kiln/rules/NativeStep.h"

#include "kiln/graph/Simplify.h"

namespace kiln::rules {

namespace {

// Simplifies every expression of the graph. Rules instantiate attributes already simplified,
// but a rewrite that substitutes one attribute into another (a tile of a tile) can leave
// foldable constants behind; walking every expression is a whole-graph traversal, not a local
// pattern, so it is native.
void simplifyExpressions(KernelGraph& graph, std::map<std::string, std::int64_t> const&) {
    for (Id d : graph.coordinates.nodes()) {
        Dimension& dim = graph.coordinates.node(d);
        dim.size = simplify(dim.size);
        dim.stride = simplify(dim.stride);
        for (auto& s : dim.shape)
            s = simplify(s);
    }
    for (Id op : graph.control.nodes()) {
        Operation& o = graph.control.node(op);
        o.expression = simplify(o.expression);
    }
}

constexpr NativeStep kSteps[] = {
    {"simplify",
     "Simplify every size, stride, shape and operation expression of the graph (a whole-graph "
     "traversal rather than a local pattern).",
     simplifyExpressions},
};

} // namespace

std::span<NativeStep const> nativeSteps() {
    return kSteps;
}

NativeStep const* findNativeStep(std::string_view name) {
    for (auto const& s : kSteps)
        if (s.name == name)
            return &s;
    return nullptr;
}

} // namespace kiln::rules
