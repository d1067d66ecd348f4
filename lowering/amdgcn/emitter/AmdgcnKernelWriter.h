// AmdgcnKernelWriter.h (internal): the AMDGCN target of the kernel walker (KernelWalker.h): its
// state and the instructions it writes for each part of the walk, defined in AmdgcnCodegen.cpp
// (kernel frame, element-wise and reduction operations),
// AmdgcnMemory.cpp (global loads and stores, exec masks, values read in place),
// AmdgcnReductions.cpp (a Reduce whose workitems share rows: ds_swizzle and an LDS scratch),
// AmdgcnWorkgroup.cpp (loops, LDS staging, Multiply), AmdgcnMatrixCores.cpp (Multiply on
// the matrix cores: v_mfma) and AmdgcnEpilogue.cpp (a result staged in LDS: EPILOGUE=1).
//
// emitKernel (Codegen.h) chooses it for AMD targets (gfx90a, gfx942, gfx1100): the same walk of
// the control graph, the same addresses solved from the coordinate transforms, the same elements
// per workitem and the same manifest as PTX, written as AMDGCN through kiln::amdgcn, which
// allocates registers and inserts waits and nops. Index math is 64-bit (uniform parts on the
// scalar unit); masks are lane masks in exec, so a ragged tile's vector access runs for the
// lanes whose elements all exist and one masked scalar access per element runs for the others;
// floating-point reductions accumulate in f64 (in f32 for 16-bit rows to 16-bit results). The code
// is assembly text: runtime/Assembler.h makes it a code object.
#pragma once

#include "KernelWalker.h"
#include "kiln/amdgcn/AssemblyKernel.h"
#include "kiln/amdgcn/ExpressionGenerator.h"
#include "kiln/amdgcn/MemoryInstructions.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/lowering/HeldElements.h"
#include "kiln/lowering/LaunchShape.h"

#include <array>
#include <optional>

namespace kiln::lowering::detail {

namespace gcn = kiln::amdgcn;

// A Multiply on the matrix cores (AmdgcnMatrixCores.cpp): the staged operands, the accumulators
// as v_mfma_f32_16x16x16's C/D fragments (four elements each, rows R..R+3 of column C at lane 0)
// and each fragment's four consecutive VGPRs.
struct MfmaPlan : StagedOperands {
    FragmentLayout layout;
    std::vector<gcn::Value> ranges; ///< per fragment
};

// Held values live in VGPRs: one register (pair for 64-bit types; f16/bf16 in f32) per element.
class AmdgcnKernelWriter : public KernelWalker<gcn::Value> {
public:
    using Held = detail::Held<gcn::Value>;
    using SharedBases = detail::SharedBases<gcn::Value>;

    AmdgcnKernelWriter(KernelGraph const& graph, CodegenOptions const& options);
    EmittedKernel run();

private:
    // ---- Frame and control (AmdgcnCodegen.cpp) --------------------------------------------
    static EmittedKernel describe(KernelGraph const& graph, CodegenOptions const& options,
                                  LaunchShape const& shape, SharedLayout const& shared);
    static gcn::KernelSpec specOf(KernelGraph const& graph, EmittedKernel const& kernel,
                                  LaunchShape const& shape);
    void prologue();
    /// A kernel made for one problem's sizes (CodegenOptions::sizes) traps at any other, as the
    /// PTX one does: the walker's choices from them (chunks written out, a row's length a
    /// constant) hold at every launch that runs; past it the sizes are facts
    /// (assumeKnownSizes()), though they stay arguments.
    void trapUnlessKnownSizes();
    void flush();
    void settle() override;
    void branch(Id op, Operation const& o) override;
    void barrier() override;
    gcn::Value hardwareIndex(bool workgroup, int axis) override;
    void allocate(Id d, Held& held) override;
    void assignIndex(Id dest, ExprPtr const& e) override;
    void assignElement(Held& held, std::size_t c, ExprPtr const& e) override;
    void reduceRows(Operation const& o, Held& held, Reduction const& r) override;
    // A Reduce whose workitems share rows (AmdgcnReductions.cpp); `identity`: the bits of the
    // combine's identity in `accType` (f64, i32 or i64; a UserError for another).
    static std::int64_t identity(Combine combine, DataType accType);
    // `layout` with the reduction scratch (reductionScratchBytes()) after everything else.
    static SharedLayout withScratch(SharedLayout layout, std::size_t scratchBytes);
    gcn::Value combineIdentity(Combine combine, DataType type) override;
    void combineInto(Combine combine, gcn::Value const& acc, DataType accType,
                     gcn::Value const& value, DataType valueType,
                     std::vector<ExprPtr> const& conditions) override;
    gcn::Value laneValue(gcn::Value const& value, DataType type, std::int64_t distance) override;
    // The LDS byte address of the scratch's slot `slot`, as a VGPR and an offset.
    std::pair<gcn::Value, int> scratchAddress(ExprPtr const& slot);
    void writeScratch(gcn::Value const& acc, DataType type, ExprPtr const& slot) override;
    gcn::Value readScratch(DataType type, ExprPtr const& slot) override;
    void setReduced(Held& held, std::size_t c, gcn::Value const& acc, Reduction const& r) override;
    // Rows split over workgroups (AmdgcnReductions.cpp): the workspace's bytes at `offset`.
    void writeWorkspace(gcn::Value const& acc, DataType type, ExprPtr const& offset,
                        std::vector<ExprPtr> const& conditions) override;
    void arriveLast(ExprPtr const& offset, std::int64_t parts) override;
    gcn::Value readWorkspace(DataType type, ExprPtr const& offset) override;
    // The 64-bit VGPR address of byte `offset` of the workspace.
    gcn::Value workspaceAddress(ExprPtr const& offset);
    // The cache bits of an access that other workgroups' accesses must see at the device's
    // scope (each family's, from LLVM's AMDGPU memory model).
    std::vector<std::string> deviceCoherent() const;
    // Element `c` of `held` becomes `value`; a value assigned again keeps its registers.
    void setHeld(Held& held, std::size_t c, gcn::Value const& value);

    gcn::Leaves leaves(Held const* current = nullptr, std::size_t element = 0);
    // `src` copied into the registers of `dst` (same size), dword by dword.
    void copy(gcn::Value const& dst, gcn::Value const& src);

    // ---- Persistent tiles (AmdgcnPersistent.cpp) ------------------------------------------
    gcn::Value linearWorkgroup() override;
    gcn::Value workgroupsLaunched() override;
    LoopLabels beginTiles(gcn::Value const& tile, ExprPtr const& tiles) override;
    void endTiles(LoopLabels const& labels, gcn::Value const& tile,
                  gcn::Value const& step) override;
    void copyIndex(Id dest, gcn::Value const& from) override;
    /// The workgroups launched along x, y and z (SGPRs), from the dispatch packet.
    std::array<gcn::Value, 3> launchedPerAxis();
    std::optional<std::array<gcn::Value, 3>> launched_;

    // ---- The staged epilogue (AmdgcnEpilogue.cpp; EPILOGUE=1, StagingLayout.h) -----------
    std::int64_t stagedBlockColumns(Id memory) const override;
    void writeStagingElements(ExprPtr const& address, Held const& held,
                              std::vector<std::size_t> const& which, DataType stored) override;
    void copyStagedRun(Id memory, ExprPtr const& from, ExprPtr const& offset, std::size_t width,
                       std::vector<std::vector<ExprPtr>> const& conditions,
                       std::vector<ExprPtr> const& tail) override;
    // The LDS byte address `bytes` as a VGPR and an offset: an address of `bases` a constant
    // (0 to 65535 bytes) before it, or its own.
    std::pair<gcn::Value, int> stagingAddress(SharedBases& bases, ExprPtr const& bytes);
    // After the body: the LDS the staged tile takes beside (over) the rest, checked against the
    // target's, in the descriptor and the manifest.
    void finishStaging();
    SharedBases stagingWrites_, stagingReads_; ///< the staged tile's addresses in VGPRs

    // ---- Workgroups (AmdgcnWorkgroup.cpp) ------------------------------------------------
    bool uniform(ExprPtr const& e) const;
    void drain();
    LoopLabels beginLoop(ExprPtr const& condition) override;
    void endLoop(LoopLabels const& labels) override;
    std::string beginUnrolled() override;
    void beginCopy(Id counter, std::int64_t value, ExprPtr const& condition,
                   std::string const& done) override;
    void endCopy(Id counter) override;
    void endUnrolled(std::string const& done) override;
    std::pair<gcn::Value, int> ldsAddress(Id shared, ExprPtr const& index, SharedBases& bases);
    std::vector<gcn::Value> readShared(Id shared, std::vector<std::map<Id, ExprPtr>> const& at,
                                       SharedBases& bases);
    void stageRun(Staging const& staging, StagedRun const& run, SharedBases& bases) override;
    void clearAccumulators(Held& acc) override;
    bool multiplyOnMatrixUnits(Contraction const& c, Held& acc) override;
    std::vector<gcn::Value> readOperand(Id view, Id operand,
                                        std::vector<std::map<Id, ExprPtr>> const& at,
                                        SharedBases& bases) override;
    void fma(gcn::Value const& acc, gcn::Value const& a, gcn::Value const& b) override;

    // ---- Matrix cores (AmdgcnMatrixCores.cpp) --------------------------------------------
    // The layout check: nothing when the accumulators are not MFMA fragments.
    std::optional<FragmentLayout> mfmaLayout(Contraction const& c,
                                             std::vector<IndexSolution> const& elements) const;
    // Before any code: which held values accumulate a Multiply (the product, or the X of a fused
    // X = X + product), so that hold() gives their fragments consecutive VGPRs.
    void reserveMfmaAccumulators();
    void reserveFragments(Id d, Held& held);
    std::optional<MfmaPlan> mfmaPlan(Contraction const& c, Id accumulator, Held const& acc) const;
    // The staged tile's indices of a lane's four operand elements at K k0 + 4y + j; nothing
    // when a read might leave the tile.
    std::optional<std::vector<ExprPtr>>
    mfmaOperandOffsets(Id shared, Id along, ExprPtr const& where, Id kAxis, std::int64_t k0) const;
    gcn::Value mfmaOperand(Id shared, Id along, ExprPtr const& where, Id kAxis, std::int64_t k0,
                           SharedBases& bases);
    std::string mfmaMnemonic(DataType type) const;
    void multiplyOnMatrixCores(MfmaPlan const& plan, Contraction const& c);

    // ---- Memory (AmdgcnMemory.cpp) ------------------------------------------------------
    void move(Id value, Held& held, Id memory, bool isLoad) override;
    gcn::Value loadElement(Id memory, ExprPtr const& offset, std::vector<ExprPtr> const& conditions,
                           DataType type) override;
    gcn::Value readStagedElement(Id shared, std::map<Id, ExprPtr> const& k, DataType type) override;
    gcn::Value unpack(gcn::Value const& raw, std::size_t k, DataType stored);
    gcn::Value pack(std::vector<gcn::Value> const& data, DataType stored);
    // The bits of one element as memory stores them (16-bit floats narrowed from f32).
    gcn::Value narrow(gcn::Value const& value, DataType stored);
    // The tensor's element type; a UserError for bool, which it cannot load or store yet.
    DataType storedType(Id user) const;
    // The 64-bit VGPR address of element `offset` of tensor `user`.
    gcn::Value address(gcn::ExpressionGenerator& gen, Id user, ExprPtr const& offset,
                       DataType type);
    // The lane mask where every condition holds; nullopt when there are none.
    std::optional<gcn::Value> mask(gcn::ExpressionGenerator& gen,
                                   std::vector<ExprPtr> const& conditions);
    // Exec masking: exec &= mask (returning the old exec); exec = a & b; exec = a & ~b.
    gcn::Value saveExec(gcn::Value const& mask);
    void setExec(gcn::Value const& value);
    void andExec(gcn::Value const& a, gcn::Value const& b);
    void andNotExec(gcn::Value const& a, gcn::Value const& b);
    std::string maskOp(std::string_view op) const; // "s_and" -> "s_and_b64" / "_b32"

    SharedLayout shared_;
    EmittedKernel kernel_;
    gcn::Context context_;
    gcn::KernelSpec spec_;
    gcn::AssemblyKernel asm_;
    gcn::EntryRegisters entry_;
    std::optional<gcn::ArgumentLoader> arguments_;
    gcn::Stream out_;
    gcn::Builder b_;
    gcn::MemoryInstructions memory_;
    gcn::ExpressionGenerator::Memo memo_;
    std::map<Id, Contraction> mfmaAccumulators_; ///< held value -> the Multiply it accumulates
    std::map<std::pair<Id, std::size_t>, gcn::Value> fragments_; ///< (value, first element)
    bool mfmaSinceDrain_ = false; ///< an MFMA since the last drain(): its hazards are longer
    int loopDepth_ = 0;
    /// The reduction scratch's address computed last since its write: slot, VGPR.
    std::optional<std::pair<ExprPtr, gcn::Value>> scratchBase_;
    std::set<std::string> guardedCopies_; ///< unrolled loops (their labels) with a guarded copy
};

} // namespace kiln::lowering::detail
