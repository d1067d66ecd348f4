// Persistent tiles on AMDGCN (PERSISTENT=1): the loop over output tiles that the kernel walker
// writes around the kernel's body (KernelWalker::forEachTile), on the scalar unit.
//
// The tile counter and the step are uniform: SGPR pairs, one scalar compare and branch a tile,
// the loop entered and left with nothing outstanding (drain(), as every loop). AMDGCN has no
// register for the grid's size: the workgroups launched come from the dispatch packet (whose
// address the kernel then asks for, KernelSpec::dispatchPacket), grid_size_x/y/z in workitems
// divided by the workgroup's size along each axis, which must be a power of two.
#include "AmdgcnKernelWriter.h"

#include <bit>
#include <fmt/format.h>

namespace kiln::lowering::detail {

// The dispatch packet's grid (hsa_kernel_dispatch_packet_t: grid_size_x at byte 12, y, z after
// it), as workgroups per axis; read once.
std::array<gcn::Value, 3> AmdgcnKernelWriter::launchedPerAxis() {
    if (launched_)
        return *launched_;
    KILN_ASSERT(entry_.dispatch, "the dispatch packet was not asked for");
    gcn::Value const sizes = context_.allocateScalar(DataType::I32, 4, "the grid's size");
    b_.op("s_load_dwordx4", {sizes}, {*entry_.dispatch, gcn::Value::literal(12)}, {},
          "the dispatch packet's grid size");
    std::array<gcn::Value, 3> counts;
    for (int a = 0; a < 3; ++a) {
        std::int64_t const block = shape_.block[static_cast<std::size_t>(a)];
        if (!std::has_single_bit(static_cast<std::uint64_t>(block)))
            throw UserError(
                fmt::format("PERSISTENT=1 on AMDGCN counts the workgroups launched from "
                            "the grid's size in workitems; the workgroup's {} "
                            "workitems along {} are not a power of two",
                            block, "xyz"[a]));
        counts[static_cast<std::size_t>(a)] =
            context_.allocateScalar(DataType::I32, 1, "workgroups launched along an axis");
        b_.op("s_lshr_b32", {counts[static_cast<std::size_t>(a)]},
              {sizes.sub(a),
               gcn::Value::literal(std::countr_zero(static_cast<std::uint64_t>(block)))});
    }
    launched_ = counts;
    return counts;
}

// x + X (y + Y z), over the axes whose workgroup ids the kernel reads (the others are 0).
gcn::Value AmdgcnKernelWriter::linearWorkgroup() {
    auto const counts = launchedPerAxis();
    gcn::Value const linear = context_.allocateScalar(DataType::I64, 2, "a tile counter");
    b_.op("s_mov_b32", {linear.sub(0)}, {gcn::Value::literal(0)});
    b_.op("s_mov_b32", {linear.sub(1)}, {gcn::Value::literal(0)});
    for (int a = 2; a >= 0; --a) {
        auto const& id = entry_.workgroupId[static_cast<std::size_t>(a)];
        if (!id)
            continue;
        b_.op("s_mul_i32", {linear.sub(0)}, {linear.sub(0), counts[static_cast<std::size_t>(a)]});
        b_.op("s_add_u32", {linear.sub(0)}, {linear.sub(0), *id});
    }
    flush();
    return linear;
}

gcn::Value AmdgcnKernelWriter::workgroupsLaunched() {
    auto const counts = launchedPerAxis();
    gcn::Value const launched =
        context_.allocateScalar(DataType::I64, 2, "the workgroups launched");
    b_.op("s_mul_i32", {launched.sub(0)}, {counts[0], counts[1]});
    b_.op("s_mul_i32", {launched.sub(0)}, {launched.sub(0), counts[2]});
    b_.op("s_mov_b32", {launched.sub(1)}, {gcn::Value::literal(0)});
    flush();
    return launched;
}

LoopLabels AmdgcnKernelWriter::beginTiles(gcn::Value const& tile, ExprPtr const& tiles) {
    ++loopDepth_;
    drain();
    LoopLabels const labels{context_.newLabel("tile"), context_.newLabel("tiled")};
    b_.add(gcn::Instruction::label(labels.top));
    {
        gcn::ExpressionGenerator gen(b_, leaves());
        gcn::Value const count =
            gen.convert(gen.generate(tiles), resultType(*tiles), DataType::I64);
        gcn::Value const past = gen.binary(BinaryOp::GreaterEqual, tile, count, DataType::I64);
        std::string const w = context_.target().waveSize() == 64 ? "u64" : "u32";
        b_.op("s_cmp_lg_" + w, {}, {past, gcn::Value::literal(0)});
        b_.op("s_cbranch_scc1", {}, {gcn::Value::label(labels.done)});
    }
    flush();
    return labels;
}

void AmdgcnKernelWriter::endTiles(LoopLabels const& labels, gcn::Value const& tile,
                                  gcn::Value const& step) {
    drain();
    b_.op("s_add_u32", {tile.sub(0)}, {tile.sub(0), step.sub(0)});
    b_.op("s_addc_u32", {tile.sub(1)}, {tile.sub(1), step.sub(1)});
    b_.op("s_branch", {}, {gcn::Value::label(labels.top)});
    b_.add(gcn::Instruction::label(labels.done));
    flush();
    --loopDepth_;
}

void AmdgcnKernelWriter::copyIndex(Id dest, gcn::Value const& from) {
    auto const it = indices_.find(dest);
    gcn::Value const to = it != indices_.end() && it->second.isScalar()
                              ? it->second
                              : context_.allocateScalar(DataType::I64, 2, "an index");
    copy(to, from);
    indices_.insert_or_assign(dest, to);
}

} // namespace kiln::lowering::detail
