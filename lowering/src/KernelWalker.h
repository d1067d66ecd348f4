// KernelWalker.h (internal): the walk of a lowered KernelGraph that every code generator shares,
// over the narrow interface each target implements.
//
// The walker decides everything that does not depend on the instruction set: the order of a
// body's operations (loads sunk to their first reader, a Multiply fused into the accumulator it
// feeds: OperationOrder.h), which values a workitem holds in registers and where each of their
// elements lies (HeldElements.h), which values are read in place and where each element read
// lies, how a held value's elements group into vector accesses, a ForLoop's shape (a counted
// loop, a loop written out once per value of an Unroll counter, the barrier that ends a body
// which stages shared memory), how a StoreShared deals a workgroup's tile out to its workitems
// in runs, a Reduce's rows (the accumulator's type, each row's element; for rows that workitems
// share, each one's part and how their partial values meet), whether a Multiply's
// accumulators and operands suit a matrix instruction (FragmentLayout.h), the checks and
// messages of every operation, and the SIMT contraction of a Multiply (per K index: read the
// operands of the rows and columns, one fma per accumulator). A target (PtxCodegen.h,
// AmdgcnKernelWriter.h) derives from it and writes the instructions: the virtual functions
// below are its emitter interface, in the walker's words. `Register` is what names a value in a
// register there (PTX: a register's name; AMDGCN: a gcn::Value).
#pragma once

#include "Contraction.h"
#include "FragmentLayout.h"
#include "StagingLayout.h"
#include "kiln/graph/Error.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/HeldElements.h"
#include "kiln/lowering/IndexExpressions.h"
#include "kiln/lowering/IndexFacts.h"
#include "kiln/lowering/LaunchShape.h"
#include "kiln/lowering/MeanVariance.h"
#include "kiln/lowering/OnlineSoftmax.h"
#include "kiln/lowering/Precision.h"

#include <cstdint>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::lowering::detail {

/// Runs `write`, the code of operation `op`, naming the operation in a UserError it throws
/// ("operation #12 (Multiply): ...").
template <class Write>
void naming(Id op, OperationKind kind, Write&& write) {
    try {
        write();
    } catch (UserError const& e) {
        if (std::string_view(e.what()).find("operation #") != std::string_view::npos)
            throw;
        throw UserError(fmt::format("operation #{} ({}): {}", op, name(kind), e.message()));
    }
}

/// A value held in a workitem's registers: one register per element, in register order
/// (heldElements: every index solved, and the conditions under which the element exists).
template <class Register>
struct Held {
    std::vector<IndexSolution> elements;
    std::vector<Register> registers;
    DataType type = DataType::F32;
};

/// Shared-memory addresses already in registers, by the element index they point at: another
/// index a constant away reuses one with an offset instead of its own arithmetic.
template <class Register>
using SharedBases = std::vector<std::pair<ExprPtr, Register>>;

/// Of the last kNearbyBases of `bases` (oldest first), the first a constant number of elements
/// from `index`, with that number. Only the last few are tried: a tile staged element by element
/// has thousands of addresses, and trying each against all before it took minutes.
inline constexpr std::size_t kNearbyBases = 64;
template <class Register>
std::optional<std::pair<Register, std::int64_t>> nearbyBase(SharedBases<Register> const& bases,
                                                            ExprPtr const& index) {
    std::size_t const first = bases.size() > kNearbyBases ? bases.size() - kNearbyBases : 0;
    for (std::size_t k = first; k < bases.size(); ++k)
        if (auto d = IndexFacts::difference(index, bases[k].first))
            return std::pair{bases[k].second, *d};
    return std::nullopt;
}

/// The staged tiles a Multiply's operands are read from, both of one 16-bit type: what the
/// matrix units (mma.sync, wgmma, v_mfma) multiply.
struct StagedOperands {
    Id lhsShared = 0, rhsShared = 0;
    DataType type = DataType::F16;
};

/// A StoreShared: `source`, a workgroup's tile read in place from tensor `memory` (whose
/// elements are `stored`), staged into Shared `shared` (as `staged`), dealt out to the workitems
/// in runs of `width` consecutive elements.
struct Staging {
    Id source = 0, shared = 0, memory = 0;
    DataType stored = DataType::F32, staged = DataType::F32;
    std::int64_t width = 1;
};

/// One round of a StoreShared: the run a workitem stages.
struct StagedRun {
    std::vector<std::map<Id, ExprPtr>> at; ///< each element's indices (the tile's local ones)
    std::vector<ExprPtr> places;           ///< each element's index in the Shared dimension
    std::vector<ExprPtr> tail; ///< where the workitem has a run at all (the last round only)
};

/// A Reduce: each element of the dest combines one row of `source` (its last axis, of `extent`
/// elements of type `element`), read in place through load `view`, in `accumulator`.
struct Reduction {
    Id source = 0, view = 0;
    std::vector<Id> sourceAxes, destAxes; ///< the row's axis last; the others, the dest's
    ExprPtr extent;
    DataType element = DataType::F32, accumulator = DataType::F32;
    /// A mean: the row's length, which the sum is divided by (in the accumulator's type) before
    /// it becomes the dest's type; null otherwise.
    ExprPtr divisor;
};

/// Operations that act on each element of values held with one layout alone (loads, Assigns),
/// ending in a store: run `chunk` registers at a time, `count` in all.
struct ElementwiseRun {
    std::vector<Id> ops; ///< in order, the store last
    std::size_t count = 0, chunk = 0;
};

/// A Reduce whose rows several workitems share (docs/codegen.md, "Cooperative reductions"): the
/// row's axis is tiled into `chunk` (a local index), a Workitem dimension (`lanes`) and constant
/// local indices (`unrolled`, the elements a workitem reads in each step, consecutive for a
/// row-major input); the dest does not depend on `lanes`. Each workitem combines its part of the
/// row, then the `count` workitems of a row combine their partial values: over the lanes of a
/// group of 32 (`distance` apart in the workgroup's linear numbering), then through shared
/// memory. Every workitem of the row ends with the whole row's value; the one with lane 0 stores.
/// Where the row is split over workgroups as well (`parts`: split-rows-over-workgroups), each
/// workgroup reads a contiguous span of it, and the parts' values meet in a workspace
/// (KernelWalkerSplitRows.cpp).
/// What one pass over a Reduce's shared rows reads (KernelWalker::beginRowPass()).
struct RowPass {
    Id memory = 0;                   ///< the tensor read; 0 where the rows are computed
    std::vector<std::int64_t> sizes; ///< the elements a workitem reads in each step, by axis
    std::int64_t steps = 1;          ///< their product
    ExprPtr chunks;                  ///< the chunks of a row
    ExprPtr lane;                    ///< the workitem's lane in its row
    bool held = false;               ///< chunks written out, whose loads are held (heldRows())
};

/// The elements of one chunk of a row a workitem reads in a one-pass row statistic
/// (KernelWalkerOnline.cpp): `part` holds them, loaded or computed; `where` each one's
/// conditions (it lies before the row's end), which the pass leaves it out of the statistics
/// without.
template <class Register>
struct RowChunk {
    Held<Register> part;
    std::vector<std::vector<ExprPtr>> where;
};

struct CooperativeRows {
    Id lanes = 0;               ///< the Workitem dimension whose workitems share a row
    std::int64_t count = 1;     ///< how many share one (the dimension's size, a power of two)
    std::int64_t stride = 1;    ///< the distance between two of them in the linear numbering
    Id chunk = 0;               ///< the local index each workitem's loop counts
    std::vector<Id> unrolled;   ///< the constant local indices read in each step
    Id parts = 0;               ///< the Workgroup dimension a row is split over; 0: none
    std::int64_t partCount = 1; ///< how many workgroups share a row (its size)

    /// How many workitems of a row exchange registers directly: those within one group of
    /// kLaneGroup lanes, where their distance is a power of two below it; 1 otherwise.
    std::int64_t exchanging() const;
    /// Whether the partial values of a row's groups meet in shared memory.
    bool throughShared() const { return count > exchanging(); }
};

/// The cooperative form of a Reduce whose row runs along `rowAxis`, when the row's axis is
/// tiled onto a Workitem dimension; nothing when it is not (one workitem reads its whole row).
/// A UserError for a tiling code generation cannot write (a row split over workgroups, a lane
/// count that is not a power of two, a second local index whose size is not a constant).
std::optional<CooperativeRows> cooperativeRows(KernelGraph const& graph, LaunchShape const& shape,
                                               Id rowAxis);
/// The bytes of shared memory the cooperative Reduces of `graph` exchange partial values
/// through: one f64 or i64 slot per workitem of the workgroup where a row's groups exchange
/// them; one slot where only a row split over workgroups needs it (the last-part flag); 0
/// without them.
std::size_t reductionScratchBytes(KernelGraph const& graph, LaunchShape const& shape);
/// Where a Reduce's rows are split over workgroups (KernelWalkerSplitRows.cpp), the workspace
/// the kernel takes: a 32-bit counter per block of rows, then an 8-byte slot per row of each
/// part. Both code generators and the manifest (kWorkspaceParameter) read it.
struct SplitRowsWorkspace {
    ExprPtr bytes;                 ///< the whole workspace's, an expression of the sizes
    ExprPtr countersBytes;         ///< the counters', before the slots (16-byte aligned)
    std::int64_t rowsPerBlock = 1; ///< rows of one block (ROWS x ROW_VEC)
};
/// The workspace of `graph`'s split rows; nothing where no Reduce's rows are split.
std::optional<SplitRowsWorkspace> splitRowsWorkspace(KernelGraph const& graph,
                                                     LaunchShape const& shape);
/// The lanes that exchange registers directly (shfl.sync on PTX, ds_swizzle on AMDGCN).
inline constexpr std::int64_t kLaneGroup = 32;

/// The two labels of a counted loop: its top (the condition) and what follows it.
struct LoopLabels {
    std::string top, done;
};

template <class Register>
class KernelWalker {
public:
    virtual ~KernelWalker() = default;

protected:
    /// `notWritten`: how messages name this code generator ("" or "AMDGCN ").
    KernelWalker(KernelGraph const& graph, CodegenOptions const& options,
                 std::string_view notWritten);

    // ---- The walk (KernelWalker.cpp) ------------------------------------------------------

    /// A body's operations in order, loads sunk and products fused into their accumulators.
    void list(std::vector<Id> const& sequence);
    /// One operation; a UserError names it ("operation #12 (Multiply): ...").
    void operation(Id op);
    void loop(Id op, Operation const& o);
    /// A loop counted by an Unroll dimension: its body written once per value of the counter.
    /// A copy whose condition is not a constant is guarded and skips the copies after it, as
    /// the loop would stop. It is not pipelined.
    void unrolledLoop(Id op);
    void load(Id op);
    void store(Id op);
    void loadShared(Id op);
    /// A workgroup's tile dealt out to its workitems in runs (stageRun() writes each).
    void storeShared(Id op);
    void assign(Id op, Operation const& o);
    /// The expression of Assign `op` as its elements are written: sets precision_ by the rule
    /// of Precision.h and rewrites the expression for it.
    ExprPtr assigned(Id op, Operation const& o);
    /// Where `ops[first]` starts an element-wise run that ends in a store (an epilogue: loads
    /// and Assigns of values held with the stored value's layout, of more elements than one
    /// chunk), the run; else nothing.
    std::optional<ElementwiseRun> elementwiseRun(std::vector<Id> const& ops, std::size_t first);
    /// An element-wise run, chunk by chunk: each chunk of registers loaded, computed and stored
    /// before the next, so that no more than a chunk of each value is live beside the
    /// accumulators (held whole, a bias or C of 128 registers a workitem sat next to 128
    /// accumulators and spilled).
    void elementwiseChunks(ElementwiseRun const& run);
    /// The run's loads whose places loop `loop` does not change, offered to preload() before it.
    void preloadRun(Id loop, ElementwiseRun const& run);
    /// The values of `run` that are dead once their chunk is stored.
    std::vector<Id> diesInItsChunk(ElementwiseRun const& run) const;
    /// Whether the value `run` stores is computed there, of the stored tensor's 16-bit type,
    /// and read by its store alone: then it is held in f32, and rounded once, by the store.
    bool roundedByItsStore(ElementwiseRun const& run) const;
    /// Whether the 16-bit value store `store` writes (to a tensor of its type) is read by that
    /// store alone: then, where an Assign computes it, it is held in f32 and rounded once.
    bool roundedByItsStore(Id store) const;

    // ---- A store staged through shared memory (EPILOGUE=1; StagedTile.h) --------------------
    /// The tile of tensor `memory` that held value `value` makes, in blocks of `blockColumns`.
    StagedTile stagedTileOf(Id value, Held<Register> const& held, Id memory,
                            std::int64_t blockColumns) const;
    /// A held value's store staged (stagedBlockColumns()): block by block, each block's
    /// staging buffer claimed (beginStagedBlock()), its elements written there (writeStaged()),
    /// and copied to the tensor (endStagedBlock()).
    void storeStaged(Id value, Held<Register>& held, Id memory, std::int64_t blockColumns);
    /// The elements `which` of `held`, as a value of their own.
    static Held<Register> partOf(Held<Register> const& held, std::vector<std::size_t> const& which);
    void reduce(Id op, Operation const& o);
    /// The element of element `c`'s row of `r` where the row's counter is `counter`.
    Register rowElement(Reduction const& r, Held<Register> const& held, std::size_t c,
                        Register const& counter);
    /// A Reduce whose workitems share rows: each combines its part, in a loop over its chunks
    /// (each chunk's elements one held value moved in vector accesses), then across the lanes
    /// of its row (combineAcrossLanes()) and through shared memory (writeScratch()).
    void reduceCooperatively(Operation const& o, Held<Register>& held, Reduction const& r,
                             CooperativeRows const& rows);
    /// The pass over `rows` of Reduce `r` (whose result `held` holds; `computed`: its rows are
    /// computed, not loaded), for reduceCooperatively() and reduceOnline(): UserErrors for a
    /// step of sizes that are not constants, chunks without a size and a result that differs
    /// between the workitems of a row. A row of one chunk is held for the next passes.
    RowPass beginRowPass(Held<Register> const& held, Reduction const& r,
                         CooperativeRows const& rows, bool computed);
    /// Element `step` of the current chunk of `row` (an element of the Reduce's dest) in
    /// `pass`, the unrolled axes numbered row-major, with the row's conditions besides its own.
    IndexSolution chunkElement(IndexSolution const& row, Reduction const& r,
                               CooperativeRows const& rows, RowPass const& pass, std::int64_t step);
    /// Whether the Command stores a value computed from its rows element by element (a softmax,
    /// a layer norm): then the passes before that store read rows that it reads again.
    bool rowsReadAgain() const;
    /// How long the lines a load brings are wanted (docs/codegen.md, "Rows read again"): a row
    /// that a later pass reads again, and an operand that every row reads (a layer norm's gamma),
    /// `Again`: the target keeps them in L1 where it can; a row's last read `Last`: it does not
    /// take L1's room from them. PTX writes `.L1::evict_last` and `.L1::no_allocate`.
    enum class Reuse { None, Again, Last };
    Reuse reuse_ = Reuse::None;
    /// Whether every row reads the same elements of tensor `memory` (a stride of 0 along an axis
    /// it splits into, other than its last: a layer norm's gamma and beta).
    bool everyRowReads(Id memory) const;
    /// A workitem's chunks of its rows, `chunks` of them, each through `body`: a loop, its
    /// counter from 0 (beginChunks(), endChunks()), or, where the kernel is made for sizes at
    /// which there are at most kMaxWrittenOutChunks (Codegen.h), the body once a chunk, the counter
    /// a constant in each body (shifted_), so that the target issues a chunk's loads before the
    /// arithmetic of the one before: the layer norm of 8192 x 8192 f16 over 256 lanes a row,
    /// 92.7 -> 91.7 us on the H100 (bench/results/2026-11-26-h100-eighth-layernorm.md).
    /// The body is given the chunk's index where it is written out.
    void forEachChunk(CooperativeRows const& rows, ExprPtr const& chunks,
                      std::function<void(std::optional<std::int64_t>)> const& body);
    LoopLabels beginChunks(CooperativeRows const& rows, ExprPtr const& chunks);
    void endChunks(LoopLabels const& labels, CooperativeRows const& rows);
    /// `part`'s elements of the Reduce's source: computed, loaded (held for the next passes
    /// where the row is one chunk), and `where`, each element's conditions where the pass must
    /// leave the elements outside the row out: always where they are computed (from zeros,
    /// which exp(0 - max) does not leave at 0), and where loaded if `loadedOut` (a missing
    /// element loads as 0, which a sum may add and a max or a min may not).
    void readRowPart(Reduction const& r, RowPass const& pass, bool computed, bool loadedOut,
                     Held<Register>& part, std::vector<std::vector<ExprPtr>>& where);
    /// acc = combine(acc, the acc of the workitem `distance` lanes across (laneValue())).
    void combineAcrossLanes(Combine combine, Register const& acc, DataType type,
                            std::int64_t distance);
    /// `acc` (of `type`), each workitem's partial value of its row, combined over the row's
    /// workitems: over the lanes of a group (combineAcrossLanes()), then through shared memory;
    /// the register that holds the row's value in every workitem of the row.
    Register combineAcrossRow(Combine combine, Register const& acc, DataType type,
                              CooperativeRows const& rows);
    /// How two workitems' statistics of a row merge (mergeAcrossRow()): from `mine` and
    /// `theirs` (a value each, in the order given), each side the merged statistics of `parts`
    /// workitems, the merged values in the same order. Both sides compute it, so it must give
    /// the same bits whichever side is whose (a sum or a product of the two, not a - b).
    using Merge = std::function<std::vector<ExprPtr>(
        std::vector<ExprPtr> const& mine, std::vector<ExprPtr> const& theirs, std::int64_t parts)>;
    /// Several statistics of each workitem's part of its row (`values`, one element each, all
    /// of `type`), merged over the row's workitems in one exchange by `merge`: over the lanes
    /// of a group (laneValue()), then through shared memory, where lane i of each group writes
    /// value i and every workitem reads its row's groups' values, one barrier for all of them
    /// where combineAcrossRow() takes one a value. Every workitem of the row ends with the
    /// row's values, in `values`. Rows of whole groups of consecutive lanes only (UserError).
    void mergeAcrossRow(std::vector<Held<Register>*> const& values, DataType type,
                        CooperativeRows const& rows, Merge const& merge);
    // ---- Rows split over workgroups (KernelWalkerSplitRows.cpp) -----------------------------
    /// The rows' values of a Reduce whose rows `rows` splits over workgroups, from each
    /// workgroup's `partials` (one per element of `held`, every workitem of a row holding its
    /// row's): written to the workspace (splitRowsWorkspace()), after which only the last
    /// workgroup of the block of rows to finish goes on, combining every part's value in part
    /// order.
    std::vector<Register> combineParts(Combine combine, Reduction const& r,
                                       CooperativeRows const& rows, Held<Register> const& held,
                                       std::vector<Register> const& partials);

    // ---- Rows read again (KernelWalkerRows.cpp) ---------------------------------------------
    /// Whether `d` is a value of rows that workitems share (its last axis tiled as a
    /// cooperative Reduce's rows) that no workitem holds whole: a row loaded, or computed from
    /// rows element by element (softmax's exp(x - max)), whose elements are computed where they
    /// are read, a chunk at a time.
    bool rowChunked(Id d) const;
    /// Whether `d` has the shape of `into` without its last axis: a row's value, broadcast
    /// along the row (docs/command.md, Execute).
    bool broadcastInto(Id d, Id into) const;
    /// A part of `value` with the elements of part `like` of value `likeValue` (same shape):
    /// the same indices along each axis, the same conditions.
    Held<Register> partLike(Id value, Id likeValue, Held<Register> const& like) const;
    /// The registers of `part` (its elements set): loaded where `value` is a tensor read in
    /// place, else computed by its Assign from the same elements of its operands (computed so
    /// in turn) and the values of their rows, which the workitem holds.
    void computeRowPart(Id value, Held<Register>& part);
    /// A store of row-chunked `value` into tensor `memory`: each workitem's loop over its
    /// chunks, each chunk's elements computed (computeRowPart()) and stored; in f32 and
    /// rounded by the store where `roundedByStore` (roundedByItsStore()).
    void storeRows(Id value, Id memory, bool roundedByStore);
    /// Where `d` (held as `h`) is broadcast along the rows of the value being computed, the
    /// register of the row of element `here`; nothing where it is not broadcast.
    std::optional<Register> broadcastValue(Id d, Held<Register> const& h,
                                           IndexSolution const& here);
    /// `e`, the expression of row-chunked `value` at its element `at`, with each largest part
    /// that reads only its rows' broadcast values, arguments and literals (a layer norm's
    /// rsqrt(var + eps)) computed once per row in the store's loop body and read from a
    /// register there (rowInvariants_), not once per element. Where the Assign is approximate
    /// (Precision.h), a quotient by such a part is a product with its reciprocal (a softmax's
    /// / sum): one rcp.approx per row, within the approximate quotient's 2 ulp.
    ExprPtr withRowInvariants(ExprPtr const& e, Id value, IndexSolution const& at);
    /// Whether `e` reads only values broadcast along the rows of `value`, arguments and
    /// literals.
    bool rowInvariant(ExprPtr const& e, Id value) const;
    /// A part of an expression computed for one row (withRowInvariants()): the row is the
    /// element's indices along the value's axes but the last.
    struct RowInvariant {
        ExprPtr expression;
        std::vector<ExprPtr> row;
        Register value;
    };
    /// The row invariants of the loop body being written (storeRows()); empty elsewhere, where
    /// nothing is hoisted.
    std::vector<RowInvariant> rowInvariants_;
    bool hoistingRows_ = false;
    /// Whether the parts of the rows the first pass loads are held for the next passes
    /// (rowsHeld_) instead of read again: chunks written out, and HOLD not 0.
    bool heldRows(ExprPtr const& chunks) const;
    /// The value of `e` (an expression of the sizes) for the problem the kernel is made for, if
    /// it is made for one and `e` reads nothing else.
    std::optional<Value> atKnownSizes(ExprPtr const& e) const;
    /// A size argument of the problem the kernel is made for, and its value.
    struct KnownSize {
        KernelArgument const* argument = nullptr;
        std::int64_t value = 0;
        /// argument == value: what the kernel's trap tests.
        ExprPtr holds() const;
    };
    /// The size arguments CodegenOptions::sizes gives (none for a kernel of any size). Each
    /// target's prologue traps where one differs (trapUnlessKnownSizes()), then calls
    /// assumeKnownSizes().
    std::vector<KnownSize> knownSizes() const;
    /// Past that trap: the sizes are facts in every range and divisor (IndexFacts::assumeSizes:
    /// the masks they rule out go), and each one's condition joins `assumptions`.
    void assumeKnownSizes(std::vector<KnownSize> const& sizes,
                          std::vector<std::string>& assumptions);
    /// `condition`'s text added to `assumptions` (the manifest's "assumes") unless it is there.
    static void assume(ExprPtr const& condition, std::vector<std::string>& assumptions);
    /// Loaded parts of rows kept for the next passes where the chunks are written out.
    std::map<Id, Held<Register>> rowsHeld_;
    bool holdingRows_ = false; ///< in a held-row pass: loaded rows are kept in rowsHeld_
    /// PREFETCH=D (a schedule parameter, > 0): before the first load of the rows a held-row
    /// pass reads (`value`'s `part`, from tensor `memory`: the first chunk), one workitem asks
    /// L2 for the rows that the workgroup D after it will read (prefetch()), so that DRAM
    /// streams the rows of workgroups yet to start while the running ones combine and store
    /// theirs. Once a kernel, and only where a workgroup's rows are one span of the tensor, the
    /// same distance apart from one workgroup to the next, 16-byte aligned; the last
    /// workgroup's (which may hold fewer rows) are not asked for.
    void prefetchLaterRows(Id value, Held<Register> const& part, Id memory);
    bool prefetchedRows_ = false; ///< prefetchLaterRows() has run

    // ---- A row's statistics in one pass, ONLINE=1 (KernelWalkerOnline.cpp) -----------------
    /// With ONLINE=1, max-then-exp-sum `p` (OnlineSoftmax.h) whose rows workitems share, in one
    /// pass: each workitem's running max and running sum of exp(x - max) over its chunks (in
    /// f32, the sum rescaled by exp(old max - new max) as the max grows), then the row's max
    /// over its workitems (combineAcrossRow()), each workitem's sum rescaled to it and summed.
    /// Sets `held` (the max's dest, Reduction `r`) and the sum's dest; the sum's Reduce is then
    /// not walked again (pairedReduces_).
    void reduceOnline(MaxExpSum const& p, Held<Register>& held, Reduction const& r,
                      CooperativeRows const& rows);
    /// With ONLINE=1, mean-then-variance `p` (MeanVariance.h) whose rows workitems share, in one
    /// pass (Welford): each workitem's count, mean and sum of squared deviations over its
    /// chunks (in f32, each chunk's merged by Chan et al.'s formula), then the row's mean over
    /// its workitems (the sum of count x mean, combineAcrossRow()), and each workitem's M2 +
    /// count (mean - the row's mean)^2 summed. Sets `held` (the mean's dest, Reduction `r`) and
    /// the variance's dest; the variance's Reduce is then not walked again (pairedReduces_).
    void reduceWelford(MeanVariance const& p, Held<Register>& held, Reduction const& r,
                       CooperativeRows const& rows);
    /// ONLINE=2: reduceOnline() and reduceWelford() merge each workitem's pair of statistics
    /// over the row in one exchange (mergeAcrossRow(), in f32), instead of two exchanges of
    /// sums in f64.
    bool mergedInOneExchange() const;
    /// Whether the rows of `r` that a one-pass statistic (named `pass`, for messages) reads are
    /// computed (else loaded); UserErrors for rows split over workgroups or read from shared
    /// memory, which are not written.
    bool onlineRowsComputed(Reduction const& r, CooperativeRows const& rows,
                            std::string_view pass) const;
    /// The held value `second` (the second Reduce's dest of a one-pass statistic), checked to be
    /// held as `held` (of value `first`, Reduction `r`) is: element c of both of row c. The
    /// names `what`, `pass` and `firstWhat` are for messages.
    Held<Register>& heldWithRows(Id second, Id first, Held<Register> const& held,
                                 Reduction const& r, std::string_view what, std::string_view pass,
                                 std::string_view firstWhat);
    /// The elements of the current chunk of `row` (an element of the first Reduce's dest) in
    /// `pass`: loaded (held for the store's pass where the row is one chunk) or computed.
    RowChunk<Register> chunkOf(IndexSolution const& row, Reduction const& r,
                               CooperativeRows const& rows, RowPass const& pass, bool computed);
    /// Register `r` (holding a `type`) as a leaf of an expression the walker builds: a data
    /// value of an id below 0, which no dimension has, that valueAt() reads from leaves_.
    ExprPtr leaf(Register const& r, DataType type);
    /// A new register of `type` = `e`, computed at element `at` (its indices bind `e`'s).
    Register materialize(ExprPtr const& e, DataType type, IndexSolution const& at);
    bool online_ = false;           ///< ONLINE=1 (onlineStatistics())
    std::set<Id> pairedReduces_;    ///< the second Reduces reduceOnline() and reduceWelford() set
    std::map<Id, Register> leaves_; ///< leaf() ids -> their registers

    /// A Multiply into a register tile, into accumulator `into` when fused (accumulator()).
    void multiply(Id op, Operation const& o, Id into = 0);
    /// The accumulator a Multiply fuses into (OperationOrder.h) when it is held with the layout
    /// the product would have; else 0.
    Id accumulator(Id op, Id next);

    /// Every hardware index of the launch shape (per axis x, y, z: the workgroup's, then the
    /// workitem's) in the register hardwareIndex() gives it; one of size 1 is known as 0
    /// (known()) where the target says so (unitIndicesAreZero()); then GROUP_M's tile order.
    void bindHardwareIndices();
    /// GROUP_M (a schedule parameter, > 0): the workgroup indices of axes 0 and 1 rebound to
    /// the tile of a grouped order, `group` rows of tiles walked together (Triton's and
    /// CUTLASS's swizzle), so that the operands the running workgroups share stay in L2.
    void orderTilesInGroups(std::int64_t group);

    // ---- Persistent tiles (PERSISTENT=1; KernelWalkerTiles.cpp) ---------------------------

    /// The Kernel operation's body: walked once, or with PERSISTENT=1 inside a loop over the
    /// output tiles the workgroup takes (forEachTile()), after what the target sets up once
    /// (beforeTiles()), each tile followed by betweenTiles().
    void kernelBody();
    /// PERSISTENT=1: `body` written once inside a loop over the output tiles this workgroup
    /// takes. The tiles are the grid of the Workgroup dimensions (the manifest's grid), numbered
    /// x fastest; the workgroup takes number linearWorkgroup(), then every workgroupsLaunched()-th
    /// after it, so that a launch of any number of workgroups computes every tile once. Before
    /// each, the Workgroup indices are rebound to the tile (bindTile()), so the body reads them
    /// as it would in a workgroup of its own. A target may run it more than once (a producer's
    /// loop beside the consumers').
    void forEachTile(std::function<void()> const& body);
    /// The Workgroup indices of tile number `tile`: GROUP_M's grouped order of axes 0 and 1 where
    /// set (TileOrder.h), else x fastest, as the hardware numbers workgroups.
    void bindTile(Register const& tile);

    // ---- Held values and views ------------------------------------------------------------

    /// Whether a workitem can hold `d` in registers: distributed over the grid with local
    /// indices of constant size, and not a tile that belongs to a whole workgroup (that one is
    /// shared by its workitems, not copied into each one's registers).
    bool holdable(Id d) const;
    /// Indices known everywhere in the kernel at this point: hardware indices and loop counters
    /// (a counter replaced where the target writes a constant for it: `shifted_`; a hardware
    /// index of size 1: 0).
    std::map<Id, ExprPtr> known() const;
    /// The elements of held value `d`, in register order.
    std::vector<IndexSolution> elements(Id d) const;
    /// The held value `d`, its registers allocated (allocate()) the first time.
    Held<Register>& hold(Id d);
    /// The register holding value `d` at the element being computed (element `element` of
    /// `current`): a held register at the same place, or a load of a value read in place.
    Register valueAt(Id d, Held<Register> const* current, std::size_t element);
    /// Element `k` of `value`, which load `op` reads in place, as `value`'s type; 0 where it does
    /// not exist (its address's conditions and `where`, those of the element being computed).
    Register readInPlace(Id op, Id value, std::map<Id, ExprPtr> const& k,
                         std::vector<ExprPtr> const& where);
    std::vector<Id> axes(Id d) const { return flattenAxes(graph_, d); }
    static ExprPtr index(Id d) { return kiln::index(d); }

    /// The element type of tensor `user`; a UserError where it names no tensor argument.
    DataType tensorType(Id user) const;

    // ---- Where accessed elements lie, and how they group into vector accesses --------------

    /// Each element of a held value at its place in a tensor: its offset, and the conditions
    /// under which it exists there.
    struct Placed {
        std::vector<ExprPtr> offsets;
        std::vector<std::vector<ExprPtr>> conditions;
    };
    /// The elements of held value `value` in tensor `memory`: its own conditions and its
    /// address's, less those the others imply (a flattened index inside its tensor when its axes
    /// are, a flattened index's row when the index is).
    Placed place(Id value, Held<Register> const& held, Id memory) const;
    /// The elements of one global access from element `start`: the widest power of two up to
    /// `widest` that starts at a multiple of itself, moves at least 4 bytes of `bytes` each and
    /// whose offsets are consecutive; 1 where none does.
    static std::size_t accessWidth(std::vector<ExprPtr> const& offsets, std::size_t start,
                                   std::size_t widest, int bytes);
    /// Elements `chunk` of `held`, value `value` of an element-wise run loaded from tensor
    /// `memory` (`places`: place() of all of them): each one an element of `recent` (loaded
    /// before, the latest last) already holds at the same offset, under conditions this one's
    /// imply, takes its register; the others are loaded (move()) and join `recent`, which keeps
    /// the last `keep`.
    void loadChunk(Id value, Held<Register>& held, Id memory, Placed const& places,
                   std::vector<std::size_t> const& chunk,
                   std::vector<std::pair<std::size_t, Register>>& recent, std::size_t keep);
    /// The chunks of `size` elements of `block` (elements of an element-wise run, in register
    /// order) in the order the run computes them: each one after the chunk whose loads (of
    /// `loaded`: each load's places) it shares a place with, where there is one.
    std::vector<std::vector<std::size_t>>
    chunksOf(std::vector<std::size_t> const& block, std::size_t size,
             std::map<Id, std::pair<Placed, std::vector<std::pair<std::size_t, Register>>>> const&
                 loaded) const;
    /// The indices of Shared `shared` at each of `at`; a UserError where a read may leave it.
    std::vector<ExprPtr> sharedIndices(Id shared,
                                       std::vector<std::map<Id, ExprPtr>> const& at) const;
    /// The elements of one shared-memory read from `start`: the widest power of two up to
    /// `widest` whose first index the facts prove a multiple of it, that moves at least
    /// `minBytes` of `bytes` each and whose indices are consecutive; 1 where none does.
    std::size_t sharedReadWidth(std::vector<ExprPtr> const& offsets, std::size_t start,
                                std::size_t widest, int bytes, int minBytes) const;

    // ---- A Multiply on matrix units: what every target checks ---------------------------

    /// The staged tiles of `c`'s operands, when both are read from shared memory and of one
    /// 16-bit type; nothing otherwise.
    std::optional<StagedOperands> stagedOperands(Contraction const& c) const;
    /// The index of staged tile `shared` at `where` along `along` and `k` along `kAxis`; nothing
    /// when the read might leave the tile.
    std::optional<ExprPtr> stagedIndex(Id shared, Id along, ExprPtr const& where, Id kAxis,
                                       ExprPtr const& k) const;

    // ---- The emitter: what each target writes ----------------------------------------------
    // Each function selects instructions, allocates registers and formats text for one step the
    // walker has decided; none walks the graph or decides what to compute.

    // Values in registers.
    /// The register holding the workgroup's (`workgroup`) or the workitem's index along `axis`,
    /// as an i64.
    virtual Register hardwareIndex(bool workgroup, int axis) = 0;
    /// Registers for the elements of `held`, which is about to hold value `d`.
    virtual void allocate(Id d, Held<Register>& held) = 0;
    /// Index `dest` (a loop counter or another index) = `e`.
    virtual void assignIndex(Id dest, ExprPtr const& e) = 0;
    /// Element `c` of `held` = `e`.
    virtual void assignElement(Held<Register>& held, std::size_t c, ExprPtr const& e) = 0;

    // Memory.
    /// Loads (or stores) every element of held value `value` from (to) tensor `memory`:
    /// place() and accessWidth() say where its elements lie and how they group; the target
    /// masks the elements that do not exist its own way.
    virtual void move(Id value, Held<Register>& held, Id memory, bool isLoad) = 0;
    /// Element `offset` of tensor `memory` as `type`, 0 where one of `conditions` fails.
    virtual Register loadElement(Id memory, ExprPtr const& offset,
                                 std::vector<ExprPtr> const& conditions, DataType type) = 0;
    /// The element of Shared `shared` at indices `k`, as `type` (a LoadShared read in place).
    virtual Register readStagedElement(Id shared, std::map<Id, ExprPtr> const& k,
                                       DataType type) = 0;
    /// One workitem's run of a StoreShared: loaded from the tensor (zeros outside it) and
    /// written to its slots, where `run.tail` holds. `bases`: the StoreShared's shared addresses.
    virtual void stageRun(Staging const& staging, StagedRun const& run,
                          SharedBases<Register>& bases) = 0;
    virtual void barrier() = 0;

    // Control flow.
    virtual void branch(Id op, Operation const& o) = 0;
    /// A counted loop's top: its labels, and a branch to `done` where `condition` fails.
    virtual LoopLabels beginLoop(ExprPtr const& condition) = 0;
    /// The branch back to the top, and the label after the loop.
    virtual void endLoop(LoopLabels const& labels) = 0;
    /// The label after an unrolled loop.
    virtual std::string beginUnrolled() = 0;
    /// The copy of an unrolled loop's body where `counter` is `value`: the counter set, and a
    /// branch to `done` where `condition` fails.
    virtual void beginCopy(Id counter, std::int64_t value, ExprPtr const& condition,
                           std::string const& done) = 0;
    virtual void endCopy(Id counter) = 0;
    virtual void endUnrolled(std::string const& done) = 0;

    // Reduce and Multiply.
    /// Each element of `held` combines one row of a Reduce's source (Reduction), in a loop
    /// whose counter rowElement() reads the row's element at.
    virtual void reduceRows(Operation const& o, Held<Register>& held, Reduction const& r) = 0;
    /// A cooperative Reduce's steps (reduceCooperatively()):
    /// a register of `type` holding the identity of `combine`,
    virtual Register combineIdentity(Combine combine, DataType type) = 0;
    /// acc = combine(acc, value) where every one of `conditions` holds (`value` of `valueType`),
    virtual void combineInto(Combine combine, Register const& acc, DataType accType,
                             Register const& value, DataType valueType,
                             std::vector<ExprPtr> const& conditions) = 0;
    /// a new register holding `value` of the workitem whose linear number is this one's xor
    /// `distance`, a power of two below kLaneGroup: every lane of the workgroup takes part
    /// (combineAcrossLanes() combines it into acc; mergeAcrossRow() merges several),
    virtual Register laneValue(Register const& value, DataType type, std::int64_t distance) = 0;
    /// slot `slot` (< the workgroup's size) of the reduction's scratch in shared memory
    /// (reductionScratchBytes()) written with acc, or read,
    virtual void writeScratch(Register const& acc, DataType type, ExprPtr const& slot) = 0;
    virtual Register readScratch(DataType type, ExprPtr const& slot) = 0;
    /// and element `c` of `held` = acc (of `r.accumulator`), converted to the dest's type;
    /// reduceRows() ends each row with reduced(), which calls it.
    virtual void setReduced(Held<Register>& held, std::size_t c, Register const& acc,
                            Reduction const& r) = 0;
    /// Element `c` of `held` = acc, divided by the row's length for a mean (`r.divisor`: a
    /// constant where the kernel is made for its sizes, which simplify() makes a product where
    /// it is a power of two: the f64 divisions between a layer norm's passes cost about 1 us of
    /// 90 on the H100), through the target's setReduced().
    void reduced(Held<Register>& held, std::size_t c, Register const& acc, Reduction const& r);
    /// A row split over workgroups (combineParts()): the workspace's bytes at `offset` written
    /// with acc (of `type`) where every one of `conditions` holds, visible to the workgroups
    /// that arrive after this one (arriveLast()),
    virtual void writeWorkspace(Register const& acc, DataType type, ExprPtr const& offset,
                                std::vector<ExprPtr> const& conditions) = 0;
    /// after a barrier, the workgroup's arrival at the 32-bit counter at byte `offset` of the
    /// workspace: every workgroup but the `parts`-th to arrive ends its kernel here; the last
    /// sets the counter back to 0 and sees every workspace write of those before it,
    virtual void arriveLast(ExprPtr const& offset, std::int64_t parts) = 0;
    /// and the workspace's value of `type` at byte `offset`, as another workgroup wrote it.
    virtual Register readWorkspace(DataType type, ExprPtr const& offset) = 0;
    /// A Multiply's accumulators (not fused: the product's own) set to zero.
    virtual void clearAccumulators(Held<Register>& acc) = 0;
    /// A Multiply on the target's matrix units (tensor cores, warpgroups, MFMA), where the
    /// accumulators' layout (fragmentLayout() over the target's LaneGrid) and the operands
    /// (stagedOperands()) allow it; false to run it as SIMT fmas.
    virtual bool multiplyOnMatrixUnits(Contraction const& c, Held<Register>& acc) = 0;
    /// A SIMT Multiply's operand elements at each of `at`, as f32, from the tile `view` makes of
    /// `operand` (shared memory, or the tensor read in place).
    virtual std::vector<Register> readOperand(Id view, Id operand,
                                              std::vector<std::map<Id, ExprPtr>> const& at,
                                              SharedBases<Register>& bases) = 0;
    /// acc += a * b, in f32.
    virtual void fma(Register const& acc, Register const& a, Register const& b) = 0;

    // Persistent tiles (forEachTile()).
    /// The workgroup's linear number in the grid launched (x fastest), and the number of
    /// workgroups launched, each an i64 in a register of its own.
    virtual Register linearWorkgroup() = 0;
    virtual Register workgroupsLaunched() = 0;
    /// The top of the loop over tiles: its labels, and a branch to `done` where `tile` is not
    /// below `tiles`.
    virtual LoopLabels beginTiles(Register const& tile, ExprPtr const& tiles) = 0;
    /// tile += step, the branch back to the top, and the label after the loop.
    virtual void endTiles(LoopLabels const& labels, Register const& tile, Register const& step) = 0;
    /// Index `dest` (a Workgroup dimension) = the i64 in register `from`.
    virtual void copyIndex(Id dest, Register const& from) = 0;

    // A store staged through shared memory (EPILOGUE=1; StagedTile.h).
    /// Where the target stages the stores to tensor `memory` (written to a staging buffer in
    /// shared memory, copied to the tensor block by block), the columns of a block, along the
    /// tensor's contiguous axis; 0 where it stores from registers (the default).
    virtual std::int64_t stagedBlockColumns(Id memory) const;
    /// Before block `block` of `tile` is written: its staging buffer free for every workitem.
    virtual void beginStagedBlock(StagedTile const& tile, std::size_t block);
    /// Elements `which` of `held` (all in one block) written to their places in `tile`'s staging
    /// buffer, converted to the type of tensor `memory`.
    virtual void writeStaged(StagedTile const& tile, Held<Register> const& held,
                             std::vector<std::size_t> const& which, Id memory);
    /// After every workitem wrote block `block`: the block copied to tensor `memory`.
    virtual void endStagedBlock(StagedTile const& tile, std::size_t block, Id memory);
    // By default (KernelWalkerStaged.cpp) the three above stage the whole tile (kWholeTile) in
    // shared memory (StagingLayout.h) from byte 0, reusing the workgroup's other shared memory
    // after a barrier, and the workgroup stores it in rounds of runs after another; a target
    // without a copy engine's store writes only these two:
    /// Elements `which` of `held` (neighbours along a row of the staged tile, stagingWrites())
    /// converted to `stored` and written to shared memory at byte `address` with one access.
    virtual void writeStagingElements(ExprPtr const& address, Held<Register> const& held,
                                      std::vector<std::size_t> const& which, DataType stored);
    /// `width` consecutive elements of the staged tile from shared byte `from` stored to tensor
    /// `memory` from element `offset`: element k where every one of `conditions[k]` holds (as a
    /// direct store's), none where one of `tail` fails; one access where all exist and the
    /// offset is aligned to the run (checked per workitem where the facts do not prove it).
    virtual void copyStagedRun(Id memory, ExprPtr const& from, ExprPtr const& offset,
                               std::size_t width,
                               std::vector<std::vector<ExprPtr>> const& conditions,
                               std::vector<ExprPtr> const& tail);
    /// The shared memory's banks, from arch-db, for stagingLayout().
    BankModel bankModel() const;

    // What a target may decide otherwise (each has a default).
    /// Before the loop over tiles, what the target sets up once for all of them in `body`
    /// (the kernel's): nothing by default.
    virtual void beforeTiles(std::vector<Id> const& body);
    /// After each tile: a barrier where the kernel stages shared memory (a StoreShared, or a
    /// tile staged whole), so that no workitem's next tile overwrites a tile another still reads
    /// (the default).
    virtual void betweenTiles();
    /// Whether a load into a holdable `dest` is better read in place all the same (false).
    virtual bool streamed(Id op, Id dest) const;
    /// Whether a hardware index of size 1 is the literal 0 in index expressions (false: its
    /// register is read).
    virtual bool unitIndicesAreZero() const;
    /// Whether a StoreShared's runs go along the local index that is contiguous in the tensor
    /// (false: along the last local index).
    virtual bool runsAlongContiguousAxis() const;
    /// A loop the target software-pipelines itself (false: it does not).
    virtual bool pipelinedLoop(Id op, Operation const& o);
    /// After an operation's code (and each K index of a SIMT Multiply): what the target keeps
    /// no longer (AMDGCN: the expression memo, scheduled instructions). Nothing by default.
    virtual void settle();
    /// A register of a held row that a later pass reads (computeRowPart()): the target may
    /// compute it again from what it was loaded as (PTX: a 16-bit element widened from its
    /// 32-bit word, so that the row is held as words, 16 registers for 32 f16 elements, not an
    /// f32 each). The register itself by default.
    virtual Register again(Register const& r) { return r; }
    /// Whether this run only plans and writes no store (PtxCodegen::findWarpgroupTiles; false).
    virtual bool planningOnly() const;
    /// Before a loop, a load of tensor `memory` at `places` (every element's place, which the
    /// loop does not change) that the element-wise run after the loop will make: the target may
    /// issue it now and have move() take what it loaded (PTX, within a register budget), until
    /// forgetPreloads() after the run. Nothing by default.
    virtual void preload(Id memory, Placed const& places);
    virtual void forgetPreloads();
    /// A hint: `bytes` of tensor `memory` from element `offset` (16-byte aligned, a multiple
    /// of 16) brought into L2 where `conditions` hold (PTX on sm_90: cp.async.bulk.prefetch.L2).
    /// Nothing by default.
    virtual void prefetch(Id memory, ExprPtr const& offset, std::int64_t bytes,
                          std::vector<ExprPtr> const& conditions);

    KernelGraph const& graph_;
    CodegenOptions const& options_;
    IndexFacts facts_;
    LaunchShape shape_;
    std::string_view notWritten_;
    std::map<Id, Register> indices_; ///< registers of hardware indices and loop counters
    std::map<Id, Held<Register>> held_;
    std::map<Id, Id> views_;      ///< values read in place -> the load that reads them
    std::map<Id, Id> rowAssigns_; ///< row-chunked values computed -> their Assign
    Id currentId_ = 0;            ///< the value whose element is being computed
    /// The precision of the Assign whose elements are being written (Precision.h); Exact
    /// everywhere else. assignElement() computes its expression so.
    Precision precision_ = Precision::Exact;
    std::map<Id, ExprPtr> shifted_; ///< counters the target replaces (see known())
    std::set<Id> units_;            ///< hardware indices of size 1: always 0
    /// The layout of the tile being staged whole (KernelWalkerStaged.cpp), and the most shared
    /// memory such a tile took.
    std::optional<StagingLayout> wholeTile_;
    std::int64_t stagingBytes_ = 0;
};

} // namespace kiln::lowering::detail
