// PtxCodegen.h (internal): the PTX target of the kernel walker (KernelWalker.h): its state and
// the instructions it writes for each part of the walk, defined in PtxCodegen.cpp (kernel frame,
// control flow, element-wise and reduction operations), PtxMemory.cpp (global loads and stores,
// values read in place), PtxWorkgroup.cpp (shared-memory staging, the SIMT Multiply's operands),
// PtxTensorCores.cpp (mma.sync), PtxWarpgroups.cpp (wgmma), PtxPipeline.cpp (prefetch, TMA),
// PtxClusters.cpp (thread-block clusters, TMA multicast), PtxPingpong.cpp (two consumer
// warpgroups taking the tiles in turn) and
// PtxReductions.cpp (a Reduce whose workitems share rows: shfl.sync and a shared scratch).
#pragma once

#include "KernelWalker.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/Clusters.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/HeldElements.h"
#include "kiln/lowering/IndexExpressions.h"
#include "kiln/lowering/LaunchShape.h"
#include "kiln/lowering/PtxWriter.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <optional>
#include <set>

namespace kiln::lowering::detail {

// A Multiply on the tensor cores (PtxTensorCores.cpp): the staged operands, the accumulators
// as the fragments of mma.sync.m16n8k16 (d0..d3), and how to read the operands' fragments with
// ldmatrix.
struct MmaPlan : StagedOperands {
    FragmentLayout layout;
    bool lhsTransposed = false, rhsTransposed = false; ///< staged contiguous along M (N), not K
    bool pairedColumns = false; ///< B's slabs two at a time (ldmatrix.x4), else one (.x2)
};

// The same Multiply on Hopper's warpgroups (PtxWarpgroups.cpp): four warps that stack their
// 16-row slabs over the same columns are one wgmma.mma_async.m64nNk16 per 16 of K, which reads
// both operands from shared memory through descriptors instead of ldmatrix.
struct WarpgroupPlan {
    std::int64_t n = 0;                 ///< N of m64nNk16: the warp's columns
    std::vector<std::size_t> registers; ///< the accumulator's registers in wgmma's d order
    ExprPtr firstRow, firstCol;         ///< the warpgroup's first row and column, in the tile
    std::set<Id> tiles;                 ///< the staged tiles it reads: they must be swizzled
};

class PtxCodegen : public KernelWalker<std::string> {
public:
    using Held = detail::Held<std::string>;
    using SharedBases = detail::SharedBases<std::string>;

    /// `swizzled`: the staged tiles to lay out with the 128-byte swizzle, so that wgmma can
    /// read them; a first run finds them (warpgroupTiles()).
    PtxCodegen(KernelGraph const& graph, CodegenOptions const& options, std::set<Id> swizzled = {});

    EmittedKernel run();
    /// The staged tiles a Multiply on warpgroups would read (WarpgroupPlan::tiles), found by
    /// run(): swizzled, they let a second run use wgmma.
    std::set<Id> const& warpgroupTiles() const { return warpgroupTiles_; }

    /// warpgroupTiles() from a run that writes only what decides them: it walks the graph and
    /// plans every Multiply but writes no staging, no multiply and no store to a tensor (most of
    /// the work, and none of it changes a plan). Its code is not for use.
    std::set<Id> const& findWarpgroupTiles();

private:
    // ---- Kernel frame (PtxCodegen.cpp) ---------------------------------------------------
    void prologue(EmittedKernel const& kernel);
    /// For a kernel made for one problem: a trap where a size differs from it, each size then
    /// a register holding its constant, and the sizes given to IndexFacts (assumeKnownSizes()).
    void trapUnlessKnownSizes();
    std::string text(EmittedKernel const& kernel) const;
    static std::string paramName(std::string const& name) { return "param_" + name; }
    // f16/bf16 bits in `h` -> f32 register `r`.
    void widen(std::string const& r, std::string const& h, DataType type);
    PtxBindings bindings(Held const* current = nullptr, std::size_t element = 0);

    // ---- Control flow and element-wise operations (PtxCodegen.cpp) ------------------------
    void branch(Id op, Operation const& o) override;
    LoopLabels beginLoop(ExprPtr const& condition) override;
    void endLoop(LoopLabels const& labels) override;
    std::string beginUnrolled() override;
    void beginCopy(Id counter, std::int64_t value, ExprPtr const& condition,
                   std::string const& done) override;
    void endCopy(Id counter) override;
    void endUnrolled(std::string const& done) override;
    std::string hardwareIndex(bool workgroup, int axis) override;
    bool unitIndicesAreZero() const override { return true; }
    void allocate(Id d, Held& held) override;
    void assignIndex(Id dest, ExprPtr const& e) override;
    void assignElement(Held& held, std::size_t c, ExprPtr const& e) override;
    void reduceRows(Operation const& o, Held& held, Reduction const& r) override;
    // A Reduce whose workitems share rows (PtxReductions.cpp).
    std::string combineIdentity(Combine combine, DataType type) override;
    void combineInto(Combine combine, std::string const& acc, DataType accType,
                     std::string const& value, DataType valueType,
                     std::vector<ExprPtr> const& conditions) override;
    std::string laneValue(std::string const& value, DataType type, std::int64_t distance) override;
    void writeScratch(std::string const& acc, DataType type, ExprPtr const& slot) override;
    std::string readScratch(DataType type, ExprPtr const& slot) override;
    void setReduced(Held& held, std::size_t c, std::string const& acc, Reduction const& r) override;
    // The shared address of the reduction scratch's slot `slot` (8 bytes each).
    std::string scratchAddress(ExprPtr const& slot);
    // Rows split over workgroups (PtxReductions.cpp): the workspace's bytes at `offset`.
    void writeWorkspace(std::string const& acc, DataType type, ExprPtr const& offset,
                        std::vector<ExprPtr> const& conditions) override;
    void arriveLast(ExprPtr const& offset, std::int64_t parts) override;
    std::string readWorkspace(DataType type, ExprPtr const& offset) override;
    // The global address of byte `offset` of the workspace.
    std::string workspaceAddress(ExprPtr const& offset);
    bool planningOnly() const override { return discovering_; }

    // ---- Global memory (PtxMemory.cpp) ---------------------------------------------------
    bool streamed(Id op, Id dest) const override;
    std::string loadElement(Id memory, ExprPtr const& offset,
                            std::vector<ExprPtr> const& conditions, DataType type) override;
    std::string readStagedElement(Id shared, std::map<Id, ExprPtr> const& k,
                                  DataType type) override;
    // The address of element `offset` of `user`'s tensor.
    std::string globalAddress(Id user, ExprPtr const& offset, DataType type);
    static bool isHalf(DataType t) { return t == DataType::F16 || t == DataType::BF16; }
    static std::string zero(PtxType t);
    // memory[address] (0 where `predicate` is false), converted to `type`.
    std::string loadScalar(std::string const& address, DataType stored, DataType type,
                           std::string const& predicate);
    // The bits to store for `value` (held as `type`) in memory of type `stored`.
    std::string storable(std::string const& value, DataType type, DataType stored);
    void move(Id value, Held& held, Id memory, bool isLoad) override;
    void moveElements(Id value, Held& held, Id memory, bool isLoad);
    /// A held row's 16-bit elements that no load always left as a word's halves (a masked row
    /// end: loaded element by element, or by a guarded vector load) packed into words once the
    /// load is done, so that the row is held as words there too (again()).
    void holdAsWords(Held const& held, DataType stored);
    void vector(Held& held, std::size_t start, std::size_t width, DataType stored,
                std::string const& address, bool isLoad, std::string_view space = ".global",
                std::string const& guard = "", std::vector<std::string> const* loaded = nullptr);
    // Fresh registers for `width` elements of `stored` in one vector access (32-bit words of two
    // 16-bit values, or whole elements), and their operand list ("{%b1, %b2}", or one register).
    std::pair<std::vector<std::string>, std::string> newWords(std::size_t width, DataType stored);
    // One vector load of `width` elements of `stored` at `address`: its 32-bit words (two
    // 16-bit values each) or whole elements of 4 or 8 bytes.
    std::vector<std::string> loadWords(std::size_t width, DataType stored,
                                       std::string const& address, std::string_view space,
                                       std::string const& guard);
    // Epilogue loads issued before the loop (PtxPreload.cpp).
    void preload(Id memory, Placed const& places) override;
    void prefetch(Id memory, ExprPtr const& offset, std::int64_t bytes,
                  std::vector<ExprPtr> const& conditions) override;
    void forgetPreloads() override;
    // The words preload() loaded for the access of `width` elements of `memory` at `offset`.
    std::vector<std::string> const* preloaded(Id memory, ExprPtr const& offset,
                                              std::size_t width) const;

    // ---- Workgroup operations (PtxWorkgroup.cpp) ------------------------------------------
    void layOutShared();
    void requireShared(std::int64_t copies, std::int64_t each);
    void stageRun(Staging const& staging, StagedRun const& run, SharedBases& bases) override;
    bool runsAlongContiguousAxis() const override { return true; }
    void copyToShared(std::string const& to, std::string const& from, std::int64_t bytes);
    void copyBranchFree(std::string const& to, std::string const& from, ExprPtr const& offset,
                        std::int64_t width, DataType stored,
                        std::vector<std::vector<ExprPtr>> const& conditions,
                        std::vector<ExprPtr> const& tail);
    // A staged run's elements' conditions as one edge (PtxWorkgroup.cpp, runEdge).
    struct RunEdge {
        std::vector<ExprPtr> common;                     ///< every element's
        std::optional<std::pair<ExprPtr, ExprPtr>> edge; ///< x and n: element v needs x + v < n
    };
    static std::optional<RunEdge> runEdge(std::vector<std::vector<ExprPtr>> const& conditions,
                                          std::vector<ExprPtr> const& tail,
                                          std::vector<ExprPtr> const& extra);
    std::string elementsInside(RunEdge const& edges, std::int64_t width, std::int64_t scale);
    bool copyElementwise(std::string const& to, std::string const& from, std::int64_t width,
                         DataType stored, std::vector<std::vector<ExprPtr>> const& conditions,
                         std::vector<ExprPtr> const& tail);
    void barrier() override;
    void clearAccumulators(Held& acc) override;
    bool multiplyOnMatrixUnits(Contraction const& c, Held& acc) override;
    std::vector<std::string> readOperand(Id view, Id operand,
                                         std::vector<std::map<Id, ExprPtr>> const& at,
                                         SharedBases& bases) override;
    void fma(std::string const& acc, std::string const& a, std::string const& b) override;
    /// Shared-memory addresses already in registers, by their element index: another index
    /// a constant away reuses one as `[register+bytes]`.
    std::string sharedAddress(Id shared, ExprPtr const& index, SharedBases& bases);
    std::vector<std::string> readShared(Id shared, std::vector<std::map<Id, ExprPtr>> const& at,
                                        DataType type, SharedBases& bases);
    // Prefetch (PtxPipeline.cpp): false when the loop is not one it pipelines.
    bool pipelinedLoop(Id op, Operation const& o) override;
    struct Pipeline {
        Id op;
        Operation const& o;
        Id counter, increment;
        std::int64_t stages, stageBytes;
        std::vector<Id> producer, consumer;
    };
    /// The pipeline of loop `op` (its producer and consumer, its copies of shared memory, whose
    /// bytes it sets), where it is one the target pipelines; nothing otherwise.
    std::optional<Pipeline> pipelineOf(Id op, Operation const& o);
    void emitPipeline(Pipeline const& pipeline, bool fast);
    // TMA=1 (PtxPipeline.cpp): the pipeline's tiles loaded by the copy engine into the swizzled
    // layout wgmma reads, completion on one mbarrier per copy of shared memory.
    struct TmaCopy {
        std::string map;               ///< the tensor-map parameter
        ExprPtr inner, outer;          ///< the box's first element in the tensor
        std::int64_t sharedOffset = 0; ///< bytes from the copy's start in shared memory
        /// Clusters: rows of the box this workgroup loads and multicasts, from its cluster rank
        /// x this many on (0: the whole box, for this workgroup alone).
        std::int64_t multicastRows = 0;
    };
    bool tmaRequested() const;
    std::vector<TmaCopy> tmaCopies(Id storeShared, std::int64_t& bytes);
    std::string tensorMapParameter(std::string const& tensor, std::int64_t rows);
    void emitTmaPipeline(Pipeline const& pipeline);
    void produceTma(Pipeline const& pipeline, std::int64_t shift, std::string const& base,
                    std::string const& full, ExprPtr const& issuer);
    void waitOnMbarrier(std::string const& barrier, std::string const& phase,
                        std::int64_t polls = 0);
    void nextCopy(Pipeline const& pipeline, std::string const& first, std::string const& data,
                  std::vector<std::pair<std::string, std::string>> const& barriers,
                  std::string const& phase);
    // WARP_SPECIALIZE=1: a producer warpgroup issues the copies, the graph's warps consume.
    bool warpSpecialized() const;
    void emitWarpSpecializedPipeline(Pipeline const& pipeline);
    /// The ring of copies of shared memory a loop goes round: the copy at `data` and its "full"
    /// and "empty" mbarriers (registers that move round the ring), the first of each, the
    /// consumers' previous slice's empty mbarrier, and the phase the next wait expects.
    struct Ring {
        std::string data, firstFull, firstEmpty, full, empty, previous, phase;
        /// PINGPONG=1: the running number of the consumer's next K slice (u32); the ring's
        /// registers are set from it at each tile's start.
        std::string count;
    };
    void produceSlices(Pipeline const& pipeline, Ring const& ring, ExprPtr const& issuer);
    void consumeSlices(Pipeline const& pipeline, Ring const& ring);
    ExprPtr releasesPrevious(Pipeline const& pipeline) const;

    // Thread-block clusters (PtxClusters.cpp; CLUSTER_M, CLUSTER_N).
    bool clustered() const;
    /// The u32 register of %cluster_ctarank, read the first time.
    std::string clusterRank();
    /// After the pipeline's mbarriers are initialised: the fence that shows them to the copy
    /// engine and to the cluster, and a barrier of the workgroup, or of the cluster (no peer
    /// arrives on them or copies into this workgroup before they exist; the cluster rank is
    /// read there, before any branch, for the producers' later use).
    void mbarriersInitialized();
    /// The kernel's end in a cluster, so that no workgroup leaves while a peer may still copy
    /// into it or arrive on its mbarriers: a barrier of the cluster (not aligned: the producers
    /// and the consumers reach it on their own paths), then ret.
    void leaveCluster();
    /// The pipeline's barrier without a producer warpgroup: the workgroup's, or the cluster's
    /// where peers copy into this workgroup's shared memory.
    void stageBarrier();
    /// Where `predicate` holds, the copy whose empty mbarrier is at `empty` goes back to the
    /// producers: an arrival on it, and on the same mbarrier of the peer in the cluster.
    void releaseCopy(std::string const& predicate, std::string const& empty);
    /// Whether a staged tile at `origin` (tmaCopies: its place in shared memory, then in the
    /// tensor) is the same for every workgroup of the cluster: the operand they share.
    bool sharedAcrossCluster(std::array<ExprPtr, 3> const& origin) const;

    // The staged epilogue (PtxEpilogue.cpp; EPILOGUE=1): the result written to a swizzled
    // staging buffer and copied to the tensor by TMA stores.
    std::int64_t stagedBlockColumns(Id memory) const override;
    void beginStagedBlock(StagedTile const& tile, std::size_t block) override;
    void writeStaged(StagedTile const& tile, Held const& held,
                     std::vector<std::size_t> const& which, Id memory) override;
    void endStagedBlock(StagedTile const& tile, std::size_t block, Id memory) override;
    /// After the kernel's body: the issuing workitem waits until its stores have read shared
    /// memory, which ends with the workgroup.
    void finishStagedStores();
    /// The staging buffers, placed the first time a staged store needs them.
    struct EpilogueStaging {
        std::int64_t offset = 0, slots = 1, slotBytes = 0; ///< in kiln_shared
        std::int64_t rows = 0;
    };
    EpilogueStaging const& epilogueStaging(StagedTile const& tile);
    /// The consumers' barrier (bar.sync 0 without a producer warpgroup; with PINGPONG=1, the
    /// named barrier of this consumer warpgroup alone).
    void consumerBarrier();
    /// Where this consumer's staging buffers start: kiln_shared's address, or with PINGPONG=1
    /// the second consumer's after the first's.
    std::string stagingBase(EpilogueStaging const& s);
    std::optional<EpilogueStaging> staging_;

    // Persistent tiles (PtxPersistent.cpp): the loop over tiles, and the TMA pipeline carried
    // from tile to tile.
    std::string linearWorkgroup() override;
    std::string workgroupsLaunched() override;
    LoopLabels beginTiles(std::string const& tile, ExprPtr const& tiles) override;
    void endTiles(LoopLabels const& labels, std::string const& tile,
                  std::string const& step) override;
    void copyIndex(Id dest, std::string const& from) override;
    void beforeTiles(std::vector<Id> const& body) override;
    void betweenTiles() override;
    /// TMA=1 without a producer warpgroup: one tile's pipeline, going on round carried_.
    void emitCarriedTmaPipeline(Pipeline const& pipeline);
    /// WARP_SPECIALIZE=1: one tile's consumers, going on round carried_.
    void consumeCarriedTile(Pipeline const& pipeline);
    // PINGPONG=1 (PtxPingpong.cpp): two consumer warpgroups, each the graph's warps for every
    // other tile of the workgroup, fed in turn from the producer's one ring.
    bool pingpong() const;
    /// In the consumers' code after the split: which consumer this warpgroup is (a u32 register,
    /// 0 or 1), from the warp index, which is then rebound to the warpgroup's own warps.
    void becomeConsumer(std::int64_t consumerWarps);
    /// The K slices of one tile (a u32 register): the K loop's trip count, the same for every
    /// tile (refused by name where the loop's bounds are not of the form the check reads).
    std::string slicesPerTile(Pipeline const& pipeline);
    /// One tile of a ping-pong consumer: the ring set from its slice count, its turn on the
    /// tensor cores (named barriers with the other consumer), its slices, then the other
    /// consumer's skipped.
    void consumePingpongTile(Pipeline const& pipeline);
    /// A u32 register holding named barrier `first` + the consumer's number (`other`: the other
    /// consumer's).
    std::string namedBarrier(std::int64_t first, bool other);
    struct Pingpong {
        std::string consumer;    ///< u32: 0 or 1
        std::string launched;    ///< s64: the workgroups launched (the producer's step)
        std::string step;        ///< s64: the consumers' step over tiles, twice that
        std::string tile;        ///< s64: the tile the consumers' loop is at
        ExprPtr tiles;           ///< the number of tiles
        std::string slicesTwice; ///< u32: the K slices of two tiles, a consumer's step
    };
    std::optional<Pingpong> pingpong_;
    /// The named barriers: the consumers' own (1, and 2 for the second consumer), and the turns
    /// on the tensor cores (kTurnBarrier + consumer: where that consumer waits for its turn).
    static constexpr std::int64_t kConsumerBarrier = 1, kTurnBarrier = 3;
    /// Registers a producer keeps after setmaxnreg; it gives the rest to the consumers.
    static constexpr std::int64_t kProducerRegisters = 40;
    /// Polls after which a warp-specialized pipeline's mbarrier wait traps (about 2^24).
    static constexpr std::int64_t kMbarrierPolls = std::int64_t{1} << 24;
    /// Whether all of `conditions` hold at the known sizes; nothing when no sizes are known or
    /// a condition needs more than them.
    std::optional<bool> holdAtKnownSizes(std::vector<ExprPtr> const& conditions) const;
    // Tensor cores (PtxTensorCores.cpp).
    std::optional<MmaPlan> tensorCorePlan(Contraction const& c, Held const& acc);
    void multiplyOnTensorCores(MmaPlan const& plan, Contraction const& c, Held& acc);
    // Warpgroups (PtxWarpgroups.cpp).
    std::optional<WarpgroupPlan> warpgroupPlan(MmaPlan const& plan, Contraction const& c,
                                               Held const& acc);
    void multiplyOnWarpgroups(WarpgroupPlan const& wg, MmaPlan const& plan, Contraction const& c,
                              Held& acc);
    // Before a barrier after which wgmma reads what the workgroup wrote to shared memory: the
    // writes must be made visible to the async proxy wgmma reads through.
    void fenceForWarpgroups();

    std::set<Id> swizzled_;               ///< the staged tiles wgmma reads (see the constructor)
    std::set<Id> warpgroupTiles_;         ///< those this run found
    bool discovering_ = false;            ///< only finding them (findWarpgroupTiles)
    std::int64_t warpgroupsInFlight_ = 0; ///< wgmma groups a Multiply may leave running
    PtxWriter writer_;
    arch::Arch const& arch_; ///< the target's facts and capabilities
    std::map<std::string, std::string> pointers_;
    std::size_t sharedBytes_ = 0;
    std::optional<std::size_t> scratchOffset_; ///< the reduction scratch's place in kiln_shared
    std::string halves_[2]; ///< the two 16-bit halves of the word being packed or unpacked
    /// A 16-bit element loaded into an f32 register: its word, which half, its type (again()).
    struct LoadedHalf {
        std::string word;
        std::size_t half;
        DataType stored;
    };
    std::map<std::string, LoadedHalf> loadedHalves_; ///< by the element's register
    std::string again(std::string const& r) override;
    /// Words preload() loaded, by access (tensor, offset, width), and how many.
    std::map<std::string, std::vector<std::string>> preloaded_;
    std::size_t preloadedWords_ = 0;
    SharedLayout shared_;       ///< where each Shared dimension lies in kiln_shared
    bool asyncPending_ = false; ///< cp.async copies issued since the last barrier
    // A pipelined loop's fast version (PtxPipeline.cpp): staged runs copied without branches.
    bool branchFree_ = false;
    bool branchFreeFailed_ = false;           ///< a run needed a branch after all
    std::vector<ExprPtr> assumed_;            ///< launch-time conditions the copies assume
    std::vector<std::string> assumptions_;    ///< those a kernel for known sizes traps on
    std::vector<ExprPtr> producerConditions_; ///< every copy's, as well as its own
    std::string sharedBase_;                  ///< u32 register: kiln_shared's address
    std::vector<ParameterInfo> tensorMaps_;   ///< the TMA tensor maps the kernel takes, in order
    std::int64_t producerWarps_ = 0;       ///< warps WARP_SPECIALIZE adds to the graph's workgroup
    std::int64_t secondConsumerWarps_ = 0; ///< warps PINGPONG adds: the second consumer
    std::int64_t consumerThreads_ = 0;     ///< after its split, barriers count only these
    std::string exitLabel_;                ///< where the producers go when done: the kernel's end
    /// PERSISTENT=1 with TMA=1: the pipeline is set up once before the loop over tiles
    /// (hoisting_ while it is), and the consumers' ring goes on from tile to tile (carried_).
    bool hoisting_ = false;
    std::optional<Ring> carried_;
    std::string clusterRank_; ///< clusterRank()'s register, once read
};

} // namespace kiln::lowering::detail
