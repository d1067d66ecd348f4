// The staged epilogue on PTX (EPILOGUE=1, StagedEpilogue.h): a store's tile written by the
// workitems to a staging buffer in shared memory, then copied to the tensor by the copy engine.
//
// The kernel walker deals the tile out block by block (StagedTile.h: 64 columns along the
// tensor's contiguous axis, all the tile's rows); per block:
//
//     issuer: cp.async.bulk.wait_group.read (slots - 1)   the buffer's last store has read it
//     barrier of the consumers                            every workitem knows it is free
//     every workitem: its elements, converted, st.shared into the buffer (the 128-byte swizzle)
//     fence.proxy.async.shared::cta                       the writes visible to the copy engine
//     barrier of the consumers                            every workitem's writes are done
//     issuer: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group, commit_group
//
// The buffer is a box of the tensor map `D_tma` (64 x rows, the 128-byte swizzle): row r of the
// box is 128 bytes, its 16-byte chunk c at c ^ (r % 8), as the loads' SharedLayout::Swizzle.
// That swizzle is also what keeps the writes free of bank conflicts: the eight rows a warp's
// store touches (a wgmma fragment's lanes / 4) put one chunk in each of the eight 16-byte bank
// groups. The copy engine writes only what lies inside the tensor, so an edge tile needs no
// mask; the launcher's check of the tensor map (rows 16 bytes apart) is the loads'.
//
// The buffers are the workgroup's own, after the pipeline's copies and mbarriers: with
// PERSISTENT=1 and a producer warpgroup the producer is already loading the next tile's slices
// into the copies while the consumers store, so the copies are never free for the epilogue. With
// two buffers (an even number of blocks: block b in buffer b % 2) a block is written while the
// copy engine still reads the one before, and the next tile's first block goes to the buffer the
// last block did not use. The issuer's waits are per thread (its own bulk groups): it alone
// waits, and the barrier after tells the others. With PINGPONG=1 each consumer warpgroup has its
// own buffers (the second's after the first's), its own issuer and its own named barrier. After the
// body it waits until its stores have read shared memory, which ends with the workgroup.
#include "PtxCodegen.h"
#include "kiln/lowering/StagedEpilogue.h"
#include "kiln/lowering/TensorMaps.h"

namespace kiln::lowering::detail {

namespace {

constexpr std::int64_t kRowBytes = 128; // a row of the 128-byte swizzle: one block's row

} // namespace

std::int64_t PtxCodegen::stagedBlockColumns(Id memory) const {
    if (!stagedEpilogue(options_.schedule) || discovering_)
        return 0;
    DataType const stored = tensorType(memory);
    if (!isHalf(stored))
        throw UserError(fmt::format(
            "EPILOGUE=1 stages tensor {}'s tile in the 128-byte swizzle of 16-bit elements (64 a "
            "row) that the tensor maps of every launcher describe; {} is {}: use EPILOGUE=0",
            graph_.coordinates.node(memory).name, graph_.coordinates.node(memory).name,
            name(stored)));
    return kStagedBlockColumns;
}

PtxCodegen::EpilogueStaging const& PtxCodegen::epilogueStaging(StagedTile const& tile) {
    if (staging_) {
        if (staging_->rows != tile.rows ||
            staging_->slots != stagingSlots(static_cast<std::int64_t>(tile.blocks())))
            throw UserError(fmt::format("EPILOGUE=1 stages one tile shape a kernel; this one "
                                        "stores tiles of {} and of {} rows",
                                        staging_->rows, tile.rows));
        return *staging_;
    }
    if (tile.rows > 256)
        throw UserError(fmt::format("EPILOGUE=1 copies a block of the tile as one box of {} "
                                    "rows; a box has at most 256",
                                    tile.rows));
    EpilogueStaging s;
    s.rows = tile.rows;
    s.slots = stagingSlots(static_cast<std::int64_t>(tile.blocks()));
    s.slotBytes = tile.rows * kRowBytes;
    // After everything else (the pipeline's copies and mbarriers), 1024-byte aligned: the
    // swizzle's pattern repeats every 8 rows of 128 bytes.
    s.offset = static_cast<std::int64_t>((sharedBytes_ + 1023) / 1024 * 1024);
    // PINGPONG=1: one set of buffers per consumer warpgroup, the second's after the first's.
    std::int64_t const consumers = pingpong_ ? 2 : 1;
    requireShared(1, s.offset + consumers * s.slots * s.slotBytes);
    sharedBytes_ = static_cast<std::size_t>(s.offset + consumers * s.slots * s.slotBytes);
    staging_ = s;
    return *staging_;
}

void PtxCodegen::consumerBarrier() {
    if (pingpong_) // this consumer warpgroup's own (PtxPingpong.cpp)
        return writer_.instruction(fmt::format(
            "bar.sync {}, {}", namedBarrier(kConsumerBarrier, false), consumerThreads_));
    writer_.instruction(consumerThreads_ > 0 ? fmt::format("bar.sync 1, {}", consumerThreads_)
                                             : "bar.sync 0");
}

std::string PtxCodegen::stagingBase(EpilogueStaging const& s) {
    if (!pingpong_)
        return sharedBase_;
    std::string const base = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("mad.lo.u32 {}, {}, {}, {}", base, pingpong_->consumer,
                                    s.slots * s.slotBytes, sharedBase_));
    return base;
}

void PtxCodegen::beginStagedBlock(StagedTile const& tile, std::size_t) {
    EpilogueStaging const& s = epilogueStaging(tile);
    std::string const issuer = writer_.emit(
        binary(BinaryOp::Equal, linearWorkitem(shape_), literal(0)), DataType::Bool, bindings());
    writer_.instruction(fmt::format("@{} cp.async.bulk.wait_group.read {}", issuer, s.slots - 1));
    consumerBarrier();
}

void PtxCodegen::writeStaged(StagedTile const& tile, Held const& held,
                             std::vector<std::size_t> const& which, Id memory) {
    EpilogueStaging const& s = epilogueStaging(tile);
    DataType const stored = tensorType(memory);
    SharedBases bases;
    std::string base;
    auto address = [&](std::size_t c) {
        std::int64_t const block = static_cast<std::int64_t>(tile.block[c]);
        std::int64_t const slot = block % s.slots;
        // The column in the block: the block's first column taken off (not a remainder, which
        // the facts cannot always fold), so that its chunk and its place in the chunk reduce to
        // a constant and the lane's part.
        ExprPtr const column =
            facts_.reduce(simplify(tile.inner[c] - literal(block * kStagedBlockColumns)));
        ExprPtr const& row = tile.outer[c];
        auto folded = [&](ExprPtr const& e) { return facts_.reduce(simplify(e)); };
        ExprPtr const chunk =
            binary(BinaryOp::BitwiseXor, folded(column / literal(8)), folded(row % literal(8)));
        ExprPtr const bytes = folded(row * literal(kRowBytes) + chunk * literal(16) +
                                     folded(column % literal(8)) * literal(2) +
                                     literal(s.offset + slot * s.slotBytes));
        if (auto const near = nearbyBase(bases, bytes))
            return near->second == 0 ? near->first
                                     : fmt::format("{}{:+}", near->first, near->second);
        std::string const wide = writer_.emitIndex(bytes, bindings());
        std::string const narrow = writer_.newRegister(PtxType::B32),
                          at = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("cvt.u32.u64 {}, {}", narrow, wide));
        if (base.empty())
            base = stagingBase(s);
        writer_.instruction(fmt::format("add.u32 {}, {}, {}", at, base, narrow));
        bases.emplace_back(bytes, at);
        return at;
    };
    for (std::size_t k = 0; k < which.size(); ++k) {
        std::size_t const c = which[k];
        std::string const bits = storable(held.registers[c], held.type, stored);
        // Two neighbours along the row, the first even: one 32-bit store (a wgmma fragment's
        // pair of columns).
        if (k + 1 < which.size()) {
            std::size_t const next = which[k + 1];
            if (IndexFacts::difference(tile.inner[next], tile.inner[c]) == std::int64_t{1} &&
                IndexFacts::difference(tile.outer[next], tile.outer[c]) == std::int64_t{0} &&
                facts_.powerOfTwoDivisor(tile.inner[c]) >= 2) {
                std::string const high = storable(held.registers[next], held.type, stored);
                std::string const word = writer_.newRegister(PtxType::B32);
                writer_.instruction(fmt::format("mov.b32 {}, {{{}, {}}}", word, bits, high));
                writer_.instruction(fmt::format("st.shared.b32 [{}], {}", address(c), word));
                ++k;
                continue;
            }
        }
        writer_.instruction(fmt::format("st.shared.b16 [{}], {}", address(c), bits));
    }
}

void PtxCodegen::endStagedBlock(StagedTile const& tile, std::size_t block, Id memory) {
    EpilogueStaging const& s = epilogueStaging(tile);
    writer_.instruction("fence.proxy.async.shared::cta");
    consumerBarrier();
    writer_.pushScope();
    std::string const issuer = writer_.emit(
        binary(BinaryOp::Equal, linearWorkitem(shape_), literal(0)), DataType::Bool, bindings());
    std::string const map = tensorMapParameter(graph_.coordinates.node(memory).name, tile.rows);
    std::string const param = writer_.newRegister(PtxType::U64),
                      generic = writer_.newRegister(PtxType::U64),
                      source = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("mov.u64 {}, {}", param, paramName(map)));
    writer_.instruction(fmt::format("cvta.param.u64 {}, {}", generic, param));
    std::int64_t const slot = static_cast<std::int64_t>(block) % s.slots;
    writer_.instruction(
        fmt::format("add.u32 {}, {}, {}", source, stagingBase(s), s.offset + slot * s.slotBytes));
    std::array<std::string, 2> coordinates;
    std::array<ExprPtr, 2> const at{
        simplify(tile.innerOrigin + literal(static_cast<std::int64_t>(block) * tile.blockColumns)),
        tile.outerOrigin};
    for (std::size_t a = 0; a < 2; ++a) {
        coordinates[a] = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("cvt.u32.u64 {}, {}", coordinates[a],
                                        writer_.emitIndex(at[a], bindings())));
    }
    writer_.instruction(fmt::format(
        "@{} cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [{}, {{{}, {}}}], [{}]", issuer,
        generic, coordinates[0], coordinates[1], source));
    writer_.instruction(fmt::format("@{} cp.async.bulk.commit_group", issuer));
    writer_.popScope();
}

void PtxCodegen::finishStagedStores() {
    if (!staging_)
        return;
    std::string const issuer = writer_.emit(
        binary(BinaryOp::Equal, linearWorkitem(shape_), literal(0)), DataType::Bool, bindings());
    writer_.instruction(fmt::format("@{} cp.async.bulk.wait_group.read 0", issuer));
}

} // namespace kiln::lowering::detail
