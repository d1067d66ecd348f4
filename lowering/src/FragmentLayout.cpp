// Whether accumulators are a matrix instruction's fragments: see FragmentLayout.h.
#include "FragmentLayout.h"

#include "kiln/graph/Evaluate.h"
#include "kiln/graph/Simplify.h"

#include <map>
#include <set>

namespace kiln::lowering::detail {

namespace {

// Hardware indices at chosen values, for evaluating where a lane's accumulators lie; anything
// else a place depends on (a loop counter, a size) is a UserError, and then the layout is not a
// fragment layout.
class LaneEnvironment : public Environment {
public:
    std::map<Id, std::int64_t> indices;
    Value index(Id dimension) const override {
        auto const it = indices.find(dimension);
        if (it == indices.end())
            return Environment::index(dimension);
        return Value::integer(it->second);
    }
};

// The elements placed at `at` (place -> element) grouped into fragments whose registers lie at
// the fragment's first place plus each of `offsets`, and an element of each slab of rows
// (columns), in order; nothing when an element is left over or the fragments do not make a
// whole grid of slabs.
struct Grouped {
    std::vector<FragmentLayout::Fragment> fragments;
    std::vector<std::size_t> rows, cols;
};
std::optional<Grouped> groupFragments(std::map<Place, std::size_t> const& at,
                                      std::array<Place, 4> const& offsets) {
    Grouped out;
    std::set<std::size_t> taken;
    std::map<std::int64_t, std::size_t> rows, cols; // a slab's first row/column -> an element
    std::vector<std::pair<Place, std::array<std::size_t, 4>>> found;
    for (auto const& [p, e] : at) {
        if (taken.contains(e))
            continue;
        std::array<std::size_t, 4> registers{};
        for (std::size_t i = 0; i < offsets.size(); ++i) {
            auto const it = at.find({p.first + offsets[i].first, p.second + offsets[i].second});
            if (it == at.end() || taken.contains(it->second))
                return std::nullopt;
            registers[i] = it->second;
            taken.insert(it->second);
        }
        rows.emplace(p.first, e);
        cols.emplace(p.second, e);
        found.emplace_back(p, registers);
    }
    if (found.size() != rows.size() * cols.size())
        return std::nullopt;
    for (auto const& [p, registers] : found)
        out.fragments.push_back(
            {registers, static_cast<std::size_t>(std::distance(rows.begin(), rows.find(p.first))),
             static_cast<std::size_t>(std::distance(cols.begin(), cols.find(p.second)))});
    for (auto const& [first, e] : rows)
        out.rows.push_back(e);
    for (auto const& [first, e] : cols)
        out.cols.push_back(e);
    return out;
}

} // namespace

std::optional<FragmentLayout> fragmentLayout(Contraction const& c,
                                             std::vector<IndexSolution> const& elements,
                                             LaunchShape const& shape, IndexFacts const& facts,
                                             LaneGrid const& grid) {
    if (shape.block[0] != grid.lanes[0] || shape.block[1] != grid.lanes[1] || !shape.workitems[0] ||
        !shape.workitems[1] || elements.empty() || elements.size() % grid.fragment.size() != 0)
        return std::nullopt;
    Id const x = *shape.workitems[0], y = *shape.workitems[1];
    LaneEnvironment env;
    for (auto const& d : shape.workgroups)
        if (d)
            env.indices[*d] = 0;
    if (shape.workitems[2])
        env.indices[*shape.workitems[2]] = 0;
    // Each element's row and column; an element without them is not an accumulator of `c`.
    std::vector<std::pair<ExprPtr, ExprPtr>> where;
    for (IndexSolution const& e : elements) {
        auto const row = e.indices.find(c.destRow), col = e.indices.find(c.destCol);
        if (row == e.indices.end() || col == e.indices.end())
            return std::nullopt;
        where.emplace_back(row->second, col->second);
    }
    auto place = [&](std::size_t e, std::int64_t laneX, std::int64_t laneY) -> Place {
        env.indices[x] = laneX;
        env.indices[y] = laneY;
        return {evaluateInt(*where[e].first, env), evaluateInt(*where[e].second, env)};
    };
    std::map<Place, std::size_t> at;
    try {
        for (std::size_t e = 0; e < elements.size(); ++e) {
            Place const p = place(e, 0, 0);
            for (std::int64_t ly = 0; ly < grid.lanes[1]; ++ly)
                for (std::int64_t lx = 0; lx < grid.lanes[0]; ++lx)
                    if (place(e, lx, ly) !=
                        Place{p.first + lx * grid.stepX.first + ly * grid.stepY.first,
                              p.second + lx * grid.stepX.second + ly * grid.stepY.second})
                        return std::nullopt;
            if (!at.emplace(p, e).second)
                return std::nullopt;
        }
    } catch (UserError const&) {
        return std::nullopt;
    }
    auto const grouped = groupFragments(at, grid.fragment);
    if (!grouped)
        return std::nullopt;
    FragmentLayout layout;
    layout.fragments = grouped->fragments;
    // The slabs' first row and column as expressions of the warp, at lane (0, 0).
    std::map<Id, ExprPtr> const lane0{{x, literal(0)}, {y, literal(0)}};
    for (std::size_t e : grouped->rows)
        layout.rowBases.push_back(facts.reduce(simplify(substitute(where[e].first, lane0))));
    for (std::size_t e : grouped->cols)
        layout.colBases.push_back(facts.reduce(simplify(substitute(where[e].second, lane0))));
    return layout;
}

} // namespace kiln::lowering::detail
