// A Multiply on Hopper's warpgroups: wgmma.mma_async.m64nNk16 with both operands read from
// shared memory through matrix descriptors (sm_90a).
//
// The graph lays a warp's tile out as mma.sync's fragments (rules/gemm-warp-tiles.rules.json);
// tensorCorePlan() has checked that. wgmma's accumulator layout is the same one, four warps
// high: warp w of a warpgroup holds rows 16 w .. 16 w + 15 of the 64, and its registers go n8
// slab by n8 slab, (r, c), (r, c + 1), (r + 8, c), (r + 8, c + 1) each. So a Multiply runs on
// warpgroups when every warp holds one 16-row slab of N <= 256 consecutive columns, and the
// four warps of each warpgroup stack their slabs over the same columns.
//
// wgmma reads shared memory itself, in one of its canonical layouts; the one used here is the
// 128-byte swizzle (SharedLayout::Swizzle), for rows of K (A, B staged K-contiguous: "K-major")
// or of M / N (staged contiguous along M or N: "MN-major", the .trans of ldmatrix). Whether a
// Multiply can run on warpgroups is known only when code generation reaches it, so the first
// run of the code generator collects the tiles (warpgroupTiles()) and a second one swizzles
// them (emitKernel in PtxCodegen.cpp).
//
// Each K step of 16 is one wgmma per warpgroup. Writes to shared memory reach wgmma, which reads
// through the async proxy, only after a fence.proxy.async before the barrier
// (fenceForWarpgroups()). The wgmmas of a Multiply are one group. In a pipelined loop with
// STAGES >= 3 one group stays in flight (warpgroupsInFlight_), waited for at the end of the next
// Multiply, and the producer keeps clear of the copy it reads (PtxPipeline.cpp); elsewhere the
// group is waited for at the Multiply's end, so that the next barrier also means the staged
// tiles are free to overwrite.
#include "Contraction.h"
#include "PtxCodegen.h"

namespace kiln::lowering::detail {

namespace {

constexpr std::int64_t kSwizzleBytes = 128; // one row of a swizzle atom
constexpr std::int64_t kAtomBytes = 8 * kSwizzleBytes;
constexpr std::uint64_t kAddressField = (1u << 14) - 1; // a descriptor's start address, >> 4

// One operand as wgmma reads it: the staged tile and where the warpgroup's part starts.
struct Operand {
    Id shared = 0, along = 0, kAxis = 0;
    ExprPtr first;           ///< the warpgroup's first row (A) or column (B)
    bool transposed = false; ///< staged contiguous along M (N): MN-major
    std::int64_t extent = 0; ///< 64 rows of A, N columns of B
};

} // namespace

std::optional<WarpgroupPlan> PtxCodegen::warpgroupPlan(MmaPlan const& plan, Contraction const& c,
                                                       Held const& acc) {
    if (!arch_.has(arch::Capability::HasWGMMA) || !shape_.workitems[2] ||
        shape_.block[2] % 4 != 0 || plan.layout.rowBases.size() != 1 ||
        plan.layout.colBases.size() > 32)
        return std::nullopt;
    WarpgroupPlan wg;
    wg.n = 8 * static_cast<std::int64_t>(plan.layout.colBases.size());
    for (std::size_t j = 0; j < plan.layout.colBases.size(); ++j)
        if (IndexFacts::difference(plan.layout.colBases[j], plan.layout.colBases[0]) !=
            static_cast<std::int64_t>(8 * j))
            return std::nullopt;
    wg.registers.resize(4 * plan.layout.colBases.size());
    if (wg.registers.size() != acc.registers.size())
        return std::nullopt;
    for (auto const& f : plan.layout.fragments)
        for (std::size_t i = 0; i < 4; ++i)
            wg.registers[4 * f.colSlab + i] = f.registers[i];

    // Warps 4g .. 4g + 3 stack their slabs: 16 rows apart, the same columns.
    Id const z = *shape_.workitems[2];
    auto atWarp = [&](ExprPtr const& e, ExprPtr const& w) {
        return facts_.reduce(simplify(substitute(e, {{z, w}})));
    };
    for (std::int64_t w = 0; w < shape_.block[2]; ++w) {
        ExprPtr const mine = literal(w), first = literal(w - w % 4);
        if (IndexFacts::difference(atWarp(plan.layout.rowBases[0], mine),
                                   atWarp(plan.layout.rowBases[0], first)) != 16 * (w % 4) ||
            IndexFacts::difference(atWarp(plan.layout.colBases[0], mine),
                                   atWarp(plan.layout.colBases[0], first)) != std::int64_t{0})
            return std::nullopt;
    }
    ExprPtr const group = simplify(index(z) / literal(4) * literal(4));
    wg.firstRow = atWarp(plan.layout.rowBases[0], group);
    wg.firstCol = atWarp(plan.layout.colBases[0], group);

    // Both operands in a layout the swizzle can take, the warpgroup's part starting an atom.
    for (Operand const& o :
         {Operand{plan.lhsShared, c.rowAxis, c.lhsK, wg.firstRow, plan.lhsTransposed, 64},
          Operand{plan.rhsShared, c.colAxis, c.rhsK, wg.firstCol, plan.rhsTransposed, wg.n}}) {
        auto const row = rowLength(graph_, o.shared);
        auto const& size = graph_.coordinates.node(o.shared).size;
        auto const elements = size ? literalInt(simplify(size)) : std::nullopt;
        if (!row || *row % 64 != 0 || !elements || *elements % *row != 0)
            return std::nullopt;
        auto const origin = stagedIndex(o.shared, o.along, o.first, o.kAxis, literal(0));
        auto const nextK = stagedIndex(o.shared, o.along, o.first, o.kAxis, literal(1));
        auto const next =
            stagedIndex(o.shared, o.along, simplify(o.first + literal(1)), o.kAxis, literal(0));
        auto const last = stagedIndex(o.shared, o.along, simplify(o.first + literal(o.extent - 1)),
                                      o.kAxis, literal(c.inner - 1));
        if (!origin || !nextK || !next || !last)
            return std::nullopt;
        std::int64_t const alongStride = o.transposed ? 1 : *row, kStride = o.transposed ? *row : 1;
        if (IndexFacts::difference(*nextK, *origin) != kStride ||
            IndexFacts::difference(*next, *origin) != alongStride ||
            IndexFacts::difference(*last, *origin) !=
                (o.extent - 1) * alongStride + (c.inner - 1) * kStride)
            return std::nullopt;
        // K-major: the first of 8 rows; MN-major: the first of 64 columns, at K = 0.
        if (facts_.powerOfTwoDivisor(*origin) < (o.transposed ? 64 : 8 * *row))
            return std::nullopt;
        wg.tiles.insert(o.shared);
    }
    return wg;
}

void PtxCodegen::multiplyOnWarpgroups(WarpgroupPlan const& wg, MmaPlan const& plan,
                                      Contraction const& c, Held& acc) {
    // A descriptor's fields: the start address, the leading and the stride byte offsets (each
    // >> 4) and the swizzle mode (1: 128 bytes). K-major rows are whole 128-byte rows of 8-row
    // atoms, 1024 bytes apart (the leading offset unused); MN-major, the atoms of 8 K-rows are
    // 1024 bytes apart and the next 64 columns a whole column block away.
    auto descriptor = [&](Id shared, Id along, Id kAxis, ExprPtr const& first, bool transposed) {
        auto const& swizzle = shared_.swizzles.at(shared);
        auto const origin = stagedIndex(shared, along, first, kAxis, literal(0));
        KILN_ASSERT(origin, "the warpgroup's operand lies outside the staged tile #{}", shared);
        ExprPtr const bytes =
            simplify(shared_.atomPlace(shared, *origin) * literal(2) +
                     literal(static_cast<std::int64_t>(shared_.offsets.at(shared))));
        std::string const wide = writer_.emitIndex(bytes, bindings());
        std::string const narrow = writer_.newRegister(PtxType::B32),
                          address = writer_.newRegister(PtxType::B32),
                          start = writer_.newRegister(PtxType::U64),
                          desc = writer_.newRegister(PtxType::U64);
        writer_.instruction(fmt::format("cvt.u32.u64 {}, {}", narrow, wide));
        writer_.instruction(fmt::format("add.u32 {}, {}, {}", address, sharedBase_, narrow));
        writer_.instruction(fmt::format("cvt.u64.u32 {}, {}", start, address));
        writer_.instruction(fmt::format("shr.u64 {0}, {0}, 4", start));
        // The field holds 14 bits: an address in a workgroup's own shared memory. Under a
        // thread-block cluster a workgroup's shared::cta addresses carry its rank above them
        // (they are its shared::cluster addresses), and the bits past the field would spill
        // into the leading byte offset: wgmma would read the second column block of an
        // MN-major operand from the wrong place in every workgroup but the first.
        writer_.instruction(fmt::format("and.b64 {0}, {0}, {1}", start, kAddressField));
        std::uint64_t const leading =
            transposed ? static_cast<std::uint64_t>(swizzle.rows * kSwizzleBytes) >> 4 : 1;
        std::uint64_t const fields = leading << 16 |
                                     static_cast<std::uint64_t>(kAtomBytes >> 4) << 32 |
                                     std::uint64_t{1} << 62;
        writer_.instruction(fmt::format("or.b64 {}, {}, {}", desc, start, fields));
        return desc;
    };
    // The byte offset of K step k0 from K = 0: along a K-major row (into the next column block
    // past 64), or down k0 MN-major rows.
    auto stepBytes = [&](Id shared, bool transposed, std::int64_t k0) {
        auto const& swizzle = shared_.swizzles.at(shared);
        return transposed ? k0 * kSwizzleBytes : (k0 / 64 * swizzle.rows * 64 + k0 % 64) * 2;
    };
    std::string const a = descriptor(plan.lhsShared, c.rowAxis, c.lhsK, wg.firstRow,
                                     plan.lhsTransposed),
                      b = descriptor(plan.rhsShared, c.colAxis, c.rhsK, wg.firstCol,
                                     plan.rhsTransposed);
    std::vector<std::string> d;
    for (std::size_t r : wg.registers)
        d.push_back(acc.registers[r]);
    std::string_view const type = plan.type == DataType::F16 ? "f16" : "bf16";
    auto at = [&](std::string const& desc, std::int64_t bytes) {
        if (bytes == 0)
            return desc;
        std::string const r = writer_.newRegister(PtxType::U64);
        writer_.instruction(fmt::format("add.s64 {}, {}, {}", r, desc, bytes >> 4));
        return r;
    };
    writer_.instruction("wgmma.fence.sync.aligned");
    for (std::int64_t k0 = 0; k0 < c.inner; k0 += 16)
        writer_.instruction(fmt::format(
            "wgmma.mma_async.sync.aligned.m64n{0}k16.f32.{2}.{2} {{{1}}}, {3}, {4}, 1, 1, 1, {5}, "
            "{6}",
            wg.n, fmt::join(d, ", "), type,
            at(a, stepBytes(plan.lhsShared, plan.lhsTransposed, k0)),
            at(b, stepBytes(plan.rhsShared, plan.rhsTransposed, k0)), plan.lhsTransposed ? 1 : 0,
            plan.rhsTransposed ? 1 : 0));
    writer_.instruction("wgmma.commit_group.sync.aligned");
    writer_.instruction(fmt::format("wgmma.wait_group.sync.aligned {}", warpgroupsInFlight_));
}

} // namespace kiln::lowering::detail
