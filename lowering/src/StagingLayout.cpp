// A staged tile held whole in shared memory and its cooperative store: see StagingLayout.h.
#include "StagingLayout.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/Evaluate.h"
#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace kiln::lowering::detail {

namespace {

// The workitem's indices at chosen values, the workgroup's at 0 (a StagedTile's places are
// workgroup 0's).
class WorkitemAt : public Environment {
public:
    WorkitemAt(LaunchShape const& shape, std::int64_t linear) {
        for (std::size_t a = 0; a < 3; ++a) {
            if (shape.workitems[a])
                indices_[*shape.workitems[a]] = linear % shape.block[a];
            linear /= shape.block[a];
            if (shape.workgroups[a])
                indices_[*shape.workgroups[a]] = 0;
        }
    }
    Value index(Id dimension) const override {
        auto const it = indices_.find(dimension);
        return it == indices_.end() ? Environment::index(dimension) : Value::integer(it->second);
    }

private:
    std::map<Id, std::int64_t> indices_;
};

// One access of a lane: its byte address and width.
struct Access {
    std::int64_t address = 0, bytes = 0;
};

// The cycles beyond one that a phase's accesses take: the most distinct bank words that fall in
// one bank (lanes reading or writing the same word do not conflict).
std::int64_t extraCycles(std::vector<Access> const& phase, BankModel const& banks) {
    std::map<std::int64_t, std::set<std::int64_t>> words;
    for (Access const& a : phase)
        for (std::int64_t w = a.address / banks.bankBytes;
             w <= (a.address + a.bytes - 1) / banks.bankBytes; ++w)
            words[w % banks.banks].insert(w);
    std::size_t most = 0;
    for (auto const& [bank, ws] : words)
        most = std::max(most, ws.size());
    return most > 0 ? static_cast<std::int64_t>(most) - 1 : 0;
}

// The extra cycles of one instruction whose lanes (in linear order) make `accesses` of `bytes`
// each: phases of banks x bankBytes / bytes lanes (at most banks.lanes).
std::int64_t instructionCycles(std::vector<Access> const& accesses, std::int64_t bytes,
                               BankModel const& banks) {
    std::int64_t const lanes = std::max<std::int64_t>(
        1, std::min(banks.lanes, banks.banks * banks.bankBytes / std::max(bytes, banks.bankBytes)));
    std::int64_t cycles = 0;
    for (std::size_t from = 0; from < accesses.size(); from += static_cast<std::size_t>(lanes)) {
        auto const to = std::min(accesses.size(), from + static_cast<std::size_t>(lanes));
        cycles += extraCycles({accesses.begin() + static_cast<std::ptrdiff_t>(from),
                               accesses.begin() + static_cast<std::ptrdiff_t>(to)},
                              banks);
    }
    return cycles;
}

} // namespace

ExprPtr StagingLayout::at(ExprPtr const& inner, ExprPtr const& outer) const {
    return simplify(outer * literal(pitch) + inner * literal(elementBytes) + literal(offset));
}

std::vector<StagingWrite> stagingWrites(StagedTile const& tile, IndexFacts const& facts,
                                        std::vector<std::size_t> const& which,
                                        std::int64_t elementBytes) {
    std::vector<StagingWrite> out;
    for (std::size_t k = 0; k < which.size();) {
        std::size_t count = 1;
        for (std::size_t n = static_cast<std::size_t>(16 / elementBytes); n > 1; n /= 2) {
            if (k + n > which.size() || static_cast<std::int64_t>(n) * elementBytes < 4 ||
                facts.powerOfTwoDivisor(tile.inner[which[k]]) < static_cast<std::int64_t>(n))
                continue;
            bool consecutive = true;
            for (std::size_t j = 1; j < n && consecutive; ++j)
                consecutive =
                    IndexFacts::difference(tile.inner[which[k + j]], tile.inner[which[k]]) ==
                        static_cast<std::int64_t>(j) &&
                    IndexFacts::difference(tile.outer[which[k + j]], tile.outer[which[k]]) ==
                        std::int64_t{0};
            if (consecutive) {
                count = n;
                break;
            }
        }
        out.push_back({k, count});
        k += count;
    }
    return out;
}

StagingLayout stagingLayout(StagedTile const& tile, IndexFacts const& facts,
                            LaunchShape const& shape, std::int64_t elementBytes,
                            std::int64_t offset, BankModel const& banks) {
    KILN_ASSERT(offset % 16 == 0, "a staging layout at byte {}", offset);
    StagingLayout layout;
    layout.offset = offset;
    layout.rows = tile.rows;
    layout.columns = tile.columns;
    layout.elementBytes = elementBytes;
    layout.runElements = 1;
    for (std::int64_t n = 16 / elementBytes; n > 1; n /= 2)
        if (tile.columns % n == 0) {
            layout.runElements = n;
            break;
        }

    // Every element's place for every workitem, evaluated once.
    std::int64_t const workitems = shape.workgroupSize();
    std::size_t const count = tile.inner.size();
    std::vector<std::pair<std::int64_t, std::int64_t>> places(static_cast<std::size_t>(workitems) *
                                                              count);
    try {
        for (std::int64_t w = 0; w < workitems; ++w) {
            WorkitemAt const env(shape, w);
            for (std::size_t c = 0; c < count; ++c)
                places[static_cast<std::size_t>(w) * count + c] = {
                    evaluateInt(*tile.inner[c], env), evaluateInt(*tile.outer[c], env)};
        }
    } catch (UserError const& e) {
        throw UserError(
            fmt::format("the staged tile's places do not evaluate per workitem ({})", e.message()));
    }
    std::vector<std::size_t> all(count);
    for (std::size_t c = 0; c < count; ++c)
        all[c] = c;
    std::vector<StagingWrite> const writes = stagingWrites(tile, facts, all, elementBytes);

    auto cyclesWith = [&](std::int64_t pitch) {
        std::int64_t cycles = 0;
        std::vector<Access> accesses(static_cast<std::size_t>(workitems));
        for (StagingWrite const& write : writes) {
            std::int64_t const bytes = static_cast<std::int64_t>(write.count) * elementBytes;
            for (std::int64_t w = 0; w < workitems; ++w) {
                auto const& [inner, outer] =
                    places[static_cast<std::size_t>(w) * count + write.first];
                accesses[static_cast<std::size_t>(w)] = {outer * pitch + inner * elementBytes,
                                                         bytes};
            }
            cycles += instructionCycles(accesses, bytes, banks);
        }
        std::int64_t const runs = layout.rows * layout.runsPerRow(),
                           bytes = layout.runElements * elementBytes;
        for (std::int64_t first = 0; first < runs; first += workitems) {
            accesses.clear();
            for (std::int64_t run = first; run < std::min(runs, first + workitems); ++run)
                accesses.push_back(
                    {run / layout.runsPerRow() * pitch + run % layout.runsPerRow() * bytes, bytes});
            cycles += instructionCycles(accesses, bytes, banks);
        }
        return cycles;
    };
    std::int64_t const row = (tile.columns * elementBytes + 15) / 16 * 16;
    layout.pitch = row;
    layout.conflictCycles = cyclesWith(row);
    for (std::int64_t pad = 16; pad < banks.banks * banks.bankBytes && layout.conflictCycles > 0;
         pad += 16) {
        std::int64_t const cycles = cyclesWith(row + pad);
        if (cycles < layout.conflictCycles) {
            layout.pitch = row + pad;
            layout.conflictCycles = cycles;
        }
    }
    return layout;
}

std::vector<CooperativeRound> cooperativeRounds(StagedTile const& tile, StagingLayout const& layout,
                                                TensorGeometry const& geometry,
                                                LaunchShape const& shape, IndexFacts const& facts) {
    KILN_ASSERT(geometry.axes.size() == 2, "a staged tile of a tensor that is not a matrix");
    std::int64_t const workitems = shape.workgroupSize(), runs = layout.rows * layout.runsPerRow();
    auto folded = [&](ExprPtr const& e) { return facts.reduce(simplify(e)); };
    ExprPtr const linear = linearWorkitem(shape);
    std::vector<CooperativeRound> out;
    for (std::int64_t first = 0; first < runs; first += workitems) {
        ExprPtr const run = simplify(linear + literal(first));
        ExprPtr const row = folded(run / literal(layout.runsPerRow()));
        ExprPtr const column =
            folded(run % literal(layout.runsPerRow()) * literal(layout.runElements));
        ExprPtr const inner = folded(tile.innerOrigin + column),
                      outer = folded(tile.outerOrigin + row);
        CooperativeRound round;
        round.from = layout.at(column, row);
        round.offset = folded(inner + outer * geometry.strides[1]);
        ExprPtr const rowInside = folded(binary(BinaryOp::Less, outer, geometry.sizes[1]));
        for (std::int64_t k = 0; k < layout.runElements; ++k)
            round.conditions.push_back(
                {folded(binary(BinaryOp::Less, folded(inner + literal(k)), geometry.sizes[0])),
                 rowInside});
        if (runs - first < workitems)
            round.tail.push_back(binary(BinaryOp::Less, linear, literal(runs - first)));
        out.push_back(std::move(round));
    }
    return out;
}

} // namespace kiln::lowering::detail
