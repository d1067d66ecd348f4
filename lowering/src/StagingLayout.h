// StagingLayout.h (internal): a staged tile (StagedTile.h) held whole in shared memory and stored
// to its tensor by the whole workgroup: the layout of its rows and the rounds of the store.
//
// Where no copy engine stores the tile (AMD targets: EPILOGUE=1 without TMA), each workitem
// writes its elements, converted to the tensor's type, to their places in the staged tile; after a
// barrier, the workgroup copies the tile to the tensor in runs of up to 16 bytes along its rows,
// consecutive workitems taking consecutive runs, so that each store is as wide and as coalesced as
// the tensor's alignment allows. Row r of the tile lies `pitch` bytes after row r - 1: the row's
// bytes rounded up to 16 (so every run starts 16-byte aligned) plus a pad of 16-byte units, the pad
// chosen by counting bank cycles: every write of every workitem (grouped as the walker writes
// them) and every read of the store's rounds, evaluated for every workitem of the workgroup. None
// of it depends on the instruction set; the bank model is arch-db's (shared_banks,
// shared_bank_bytes).
#pragma once

#include "StagedTile.h"
#include "kiln/lowering/TensorMaps.h"

#include <cstdint>
#include <vector>

namespace kiln::lowering::detail {

/// How shared memory serves one access of a group of lanes: `banks` banks of `bankBytes` each, and
/// `lanes` lanes at a time for accesses of up to `bankBytes` (fewer for wider accesses: banks x
/// bankBytes bytes a cycle, as both vendors' 128-bit accesses take a quarter of the lanes).
struct BankModel {
    std::int64_t banks = 32, bankBytes = 4, lanes = 32;
};

/// A staged tile in shared memory: element `inner` of row `outer` at byte
/// `offset + outer * pitch + inner * elementBytes`.
struct StagingLayout {
    std::int64_t offset = 0, pitch = 0, rows = 0, columns = 0, elementBytes = 2;
    /// The elements a workitem copies to the tensor at once: the widest power of two of at most
    /// 16 bytes that divides a row.
    std::int64_t runElements = 1;
    /// Bank cycles beyond one a phase of lanes, over the workgroup's writes and reads with this
    /// pitch (0: no conflicts).
    std::int64_t conflictCycles = 0;

    std::int64_t bytes() const { return rows * pitch; }
    std::int64_t runsPerRow() const { return columns / runElements; }
    /// The byte address of the element at `inner` along row `outer`.
    ExprPtr at(ExprPtr const& inner, ExprPtr const& outer) const;
};

/// A run of elements a workitem writes with one access: `count` consecutive ones of `which` from
/// `which[first]`.
struct StagingWrite {
    std::size_t first = 0, count = 1;
};

/// How the writes of elements `which` (register order) of `tile` group: neighbours along a row,
/// the first's column a multiple of their count (so that an access of 2, 4, 8 or 16 bytes is
/// aligned where rows are 16-byte aligned), at most 16 bytes and at least 4 bytes; one element
/// each otherwise.
std::vector<StagingWrite> stagingWrites(StagedTile const& tile, IndexFacts const& facts,
                                        std::vector<std::size_t> const& which,
                                        std::int64_t elementBytes);

/// The layout of `tile`'s elements of `elementBytes` from byte `offset` (16-byte aligned): rows
/// padded by the number of 16-byte units (below one bank row) that costs the fewest bank cycles,
/// the least pad among equals. A UserError where the places do not evaluate per workitem.
StagingLayout stagingLayout(StagedTile const& tile, IndexFacts const& facts,
                            LaunchShape const& shape, std::int64_t elementBytes,
                            std::int64_t offset, BankModel const& banks);

/// One round of the cooperative store, as every workitem runs it: `width` (the layout's
/// runElements) consecutive elements of the staged tile from shared byte `from` stored to the
/// tensor from element `offset`, element k where every one of `conditions[k]` holds (it lies
/// inside the tensor: a direct store's conditions), and nothing where one of `tail` fails (the
/// last round's workitems past the tile's runs). Expressions of the workitem's and workgroup's
/// indices. Run `round x workitems + linear` in each round, x fastest, so that consecutive
/// workitems take consecutive runs of a row.
struct CooperativeRound {
    ExprPtr from, offset;
    std::vector<std::vector<ExprPtr>> conditions;
    std::vector<ExprPtr> tail;
};

/// The rounds of the store of `tile` (laid out as `layout`) into a matrix of `geometry` by a
/// workgroup of `shape`.
std::vector<CooperativeRound> cooperativeRounds(StagedTile const& tile, StagingLayout const& layout,
                                                TensorGeometry const& geometry,
                                                LaunchShape const& shape, IndexFacts const& facts);

} // namespace kiln::lowering::detail
