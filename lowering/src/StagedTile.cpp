// Where a staged store's elements lie in the workgroup's tile: see StagedTile.h.
#include "StagedTile.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/lowering/TensorMaps.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace kiln::lowering::detail {

namespace {

// Hardware indices at chosen values; anything else a place depends on (a loop counter, a size)
// is a UserError.
class WorkitemEnvironment : public Environment {
public:
    std::map<Id, std::int64_t> indices;
    Value index(Id dimension) const override {
        auto const it = indices.find(dimension);
        if (it == indices.end())
            return Environment::index(dimension);
        return Value::integer(it->second);
    }
};

} // namespace

std::vector<std::vector<std::size_t>> StagedTile::elementsOfBlocks() const {
    std::vector<std::vector<std::size_t>> out(blocks());
    for (std::size_t c = 0; c < block.size(); ++c)
        out[block[c]].push_back(c);
    return out;
}

StagedTile stagedTile(KernelGraph const& graph, IndexFacts const& facts, LaunchShape const& shape,
                      std::map<Id, ExprPtr> const& known, std::vector<Id> const& valueAxes,
                      std::vector<IndexSolution> const& elements, Id memory,
                      std::int64_t blockColumns) {
    std::string const& tensor = graph.coordinates.node(memory).name;
    auto const geometry = tensorGeometry(graph, tensor);
    if (!geometry || geometry->axes.size() != 2)
        throw UserError(fmt::format("tensor {} is not a matrix with a contiguous axis", tensor));
    if (elements.empty())
        throw UserError("the workitem holds no element of the stored value");

    // Each element's index along the contiguous axis and across it, and the conditions under
    // which it exists.
    std::size_t const count = elements.size();
    std::vector<ExprPtr> innerAt(count), outerAt(count);
    for (std::size_t c = 0; c < count; ++c) {
        auto k = known;
        for (Id a : valueAxes)
            k[a] = elements[c].at(a);
        auto const solution = solveIndices(graph, k, {memory}, facts);
        auto axisIndex = [&](std::size_t a) {
            auto const it = solution.indices.find(geometry->axes[a]);
            if (it == solution.indices.end())
                throw UserError(fmt::format("the element's place along axis {} of {} is not "
                                            "solved",
                                            a, tensor));
            return facts.reduce(it->second);
        };
        innerAt[c] = axisIndex(0);
        outerAt[c] = axisIndex(1);
        // The copy engine writes what lies inside the tensor: an element may exist under no
        // other condition.
        std::vector<ExprPtr> const bounds{
            simplify(binary(BinaryOp::Less, innerAt[c], geometry->sizes[0])),
            simplify(binary(BinaryOp::Less, outerAt[c], geometry->sizes[1]))};
        std::vector<ExprPtr> conditions = elements[c].conditions;
        conditions.insert(conditions.end(), solution.conditions.begin(), solution.conditions.end());
        for (ExprPtr const& condition : conditions) {
            ExprPtr const reduced = facts.reduce(condition);
            bool const implied = std::any_of(bounds.begin(), bounds.end(),
                                             [&](ExprPtr const& b) { return equal(b, reduced); }) ||
                                 facts.impliedBy(reduced, bounds);
            if (!implied)
                throw UserError(fmt::format("element {} is stored only where {}, which is not its "
                                            "lying inside {}; a staged store clips at the "
                                            "tensor's bounds only",
                                            c, toString(condition), tensor));
        }
    }

    // The tile's origin: element 0 of workitem 0, shifted to the least place of any element of
    // any workitem.
    std::map<Id, ExprPtr> workitemsAtZero, workgroupsAtZero;
    for (auto const& d : shape.workitems)
        if (d)
            workitemsAtZero[*d] = literal(0);
    for (auto const& d : shape.workgroups)
        if (d)
            workgroupsAtZero[*d] = literal(0);
    ExprPtr const innerBase = facts.reduce(simplify(substitute(innerAt[0], workitemsAtZero)));
    ExprPtr const outerBase = facts.reduce(simplify(substitute(outerAt[0], workitemsAtZero)));
    StagedTile tile;
    std::vector<ExprPtr> innerFromBase, outerFromBase;
    for (std::size_t c = 0; c < count; ++c) {
        innerFromBase.push_back(facts.reduce(simplify(innerAt[c] - innerBase)));
        outerFromBase.push_back(facts.reduce(simplify(outerAt[c] - outerBase)));
        // The same in workgroup 0, where the workgroup's terms, which cancel, are not there to
        // cancel: what the kernel computes (the evaluation below checks that it is the same in
        // every workgroup).
        tile.inner.push_back(
            facts.reduce(simplify(substitute(innerFromBase[c], workgroupsAtZero))));
        tile.outer.push_back(
            facts.reduce(simplify(substitute(outerFromBase[c], workgroupsAtZero))));
    }

    // Every element's place for every workitem, in three workgroups: the places must not depend
    // on the workgroup, and must cover a rectangle exactly once.
    WorkitemEnvironment env;
    std::vector<std::pair<std::int64_t, std::int64_t>> places;
    places.reserve(static_cast<std::size_t>(shape.workgroupSize()) * count);
    std::vector<std::int64_t> firstBlock(count, -1);
    std::int64_t innerLeast = INT64_MAX, outerLeast = INT64_MAX, innerMost = INT64_MIN,
                 outerMost = INT64_MIN;
    try {
        for (std::int64_t workgroup : {0, 1, 5}) {
            for (auto const& d : shape.workgroups)
                if (d)
                    env.indices[*d] = workgroup;
            std::size_t at = 0;
            for (std::int64_t z = 0; z < shape.block[2]; ++z)
                for (std::int64_t y = 0; y < shape.block[1]; ++y)
                    for (std::int64_t x = 0; x < shape.block[0]; ++x) {
                        for (std::size_t a = 0; a < 3; ++a)
                            if (shape.workitems[a])
                                env.indices[*shape.workitems[a]] = a == 0 ? x : a == 1 ? y : z;
                        for (std::size_t c = 0; c < count; ++c, ++at) {
                            std::pair<std::int64_t, std::int64_t> const p{
                                evaluateInt(*innerFromBase[c], env),
                                evaluateInt(*outerFromBase[c], env)};
                            if (workgroup == 0 && p != std::pair{evaluateInt(*tile.inner[c], env),
                                                                 evaluateInt(*tile.outer[c], env)})
                                throw UserError(fmt::format("element {}'s place does not "
                                                            "simplify in workgroup 0",
                                                            c));
                            if (workgroup == 0) {
                                places.push_back(p);
                                innerLeast = std::min(innerLeast, p.first);
                                innerMost = std::max(innerMost, p.first);
                                outerLeast = std::min(outerLeast, p.second);
                                outerMost = std::max(outerMost, p.second);
                            } else if (places[at] != p) {
                                throw UserError(fmt::format(
                                    "element {}'s place in the tile differs between workgroups",
                                    c));
                            }
                        }
                    }
        }
    } catch (UserError const& e) {
        throw UserError(fmt::format("the place of the workitem's elements in {}'s tile depends on "
                                    "more than the workitem ({})",
                                    tensor, e.message()));
    }
    tile.columns = innerMost - innerLeast + 1;
    tile.rows = outerMost - outerLeast + 1;
    blockColumns = std::min(blockColumns, tile.columns); // kWholeTile: one block
    tile.blockColumns = blockColumns;
    if (tile.columns % blockColumns != 0)
        throw UserError(fmt::format("the tile's rows along {}'s contiguous axis are {} elements, "
                                    "not whole blocks of {}",
                                    tensor, tile.columns, blockColumns));
    std::set<std::pair<std::int64_t, std::int64_t>> const distinct(places.begin(), places.end());
    if (distinct.size() != places.size() ||
        static_cast<std::int64_t>(places.size()) != tile.columns * tile.rows)
        throw UserError(fmt::format("the workgroup's {} elements do not cover its {} x {} tile of "
                                    "{} exactly once",
                                    places.size(), tile.rows, tile.columns, tensor));
    tile.innerOrigin = facts.reduce(simplify(innerBase + literal(innerLeast)));
    tile.outerOrigin = facts.reduce(simplify(outerBase + literal(outerLeast)));
    for (std::size_t c = 0; c < count; ++c) {
        tile.inner[c] = facts.reduce(simplify(tile.inner[c] - literal(innerLeast)));
        tile.outer[c] = facts.reduce(simplify(tile.outer[c] - literal(outerLeast)));
    }
    // An element a constant away from element 0 written as element 0's place plus that constant
    // (a fragment's next slab, `(x + 4) * 2`, as `x * 2 + 8`): what is common to a workitem's
    // places is then one expression, and what the target computes from a place folds.
    for (std::size_t c = 1; c < count; ++c) {
        for (auto* axis : {&tile.inner, &tile.outer})
            if (auto const d = IndexFacts::difference((*axis)[c], (*axis)[0]))
                (*axis)[c] = facts.reduce(simplify((*axis)[0] + literal(*d)));
    }
    // Each element's block, the same for every workitem.
    for (std::size_t at = 0; at < places.size(); ++at) {
        std::size_t const c = at % count;
        std::int64_t const b = (places[at].first - innerLeast) / blockColumns;
        if (firstBlock[c] < 0)
            firstBlock[c] = b;
        else if (firstBlock[c] != b)
            throw UserError(fmt::format("element {} falls in different blocks of {} columns for "
                                        "different workitems",
                                        c, blockColumns));
    }
    for (std::int64_t b : firstBlock)
        tile.block.push_back(static_cast<std::size_t>(b));
    return tile;
}

} // namespace kiln::lowering::detail
