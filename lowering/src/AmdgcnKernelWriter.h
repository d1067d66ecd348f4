// AmdgcnKernelWriter.h (internal): the AMDGCN code generator's state, shared by the files that
// write each part: AmdgcnCodegen.cpp (kernel frame, element-wise and reduction operations),
// AmdgcnMemory.cpp (global loads and stores, exec masks, values read in place),
// AmdgcnWorkgroup.cpp (loops, LDS staging, Multiply) and AmdgcnMatrixCores.cpp (Multiply on
// the matrix cores: v_mfma).
#pragma once

#include "Contraction.h"
#include "kiln/amdgcn/AssemblyKernel.h"
#include "kiln/amdgcn/ExpressionGenerator.h"
#include "kiln/amdgcn/MemoryInstructions.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/AmdgcnCodegen.h"
#include "kiln/lowering/HeldElements.h"
#include "kiln/lowering/LaunchShape.h"

#include <array>
#include <optional>

namespace kiln::lowering {

// Defined in Manifest.cpp: parameters, hash and the common fields of the manifest.
void describeInterface(KernelGraph const& graph, CodegenOptions const& options,
                       LaunchShape const& shape, EmittedKernel& kernel);

namespace detail {

namespace gcn = kiln::amdgcn;

// A value held in a workitem's VGPRs: one register (pair for 64-bit types; f16/bf16 in f32) per
// element.
struct GcnHeld {
    std::vector<IndexSolution> elements;
    std::vector<gcn::Value> registers;
    DataType type = DataType::F32;
};

// A wave's accumulators as v_mfma_f32_16x16x16's C/D fragments (AmdgcnMatrixCores.cpp): four
// elements each, rows R..R+3 of column C at lane 0.
struct MfmaLayout {
    std::vector<Fragments::Fragment> fragments; ///< rows R..R+3; slabs index rowBases, colBases
    std::vector<ExprPtr> rowBases, colBases;    ///< each slab's first row (column) at lane 0
};

// A Multiply on the matrix cores: the layout, each fragment's four consecutive VGPRs, and the
// staged tiles the operand fragments come from.
struct MfmaPlan {
    MfmaLayout layout;
    std::vector<gcn::Value> ranges; ///< per fragment
    Id lhsShared = 0, rhsShared = 0;
    DataType type = DataType::F16; ///< the operands'
};

class AmdgcnKernelWriter {
public:
    AmdgcnKernelWriter(KernelGraph const& graph, CodegenOptions const& options);
    EmittedKernel run();

private:
    // ---- Frame and control (AmdgcnCodegen.cpp) --------------------------------------------
    static EmittedKernel describe(KernelGraph const& graph, CodegenOptions const& options,
                                  LaunchShape const& shape, SharedLayout const& shared);
    static gcn::KernelSpec specOf(KernelGraph const& graph, EmittedKernel const& kernel,
                                  LaunchShape const& shape);
    void prologue();
    void flush();
    void operation(Id op);
    void assign(Id op, Operation const& o);
    void reduce(Id op, Operation const& o);
    // Element `c` of `held` becomes `value`; a value assigned again keeps its registers.
    void setHeld(GcnHeld& held, std::size_t c, gcn::Value const& value);

    std::map<Id, ExprPtr> known() const;
    GcnHeld& hold(Id d);
    gcn::Leaves leaves(GcnHeld const* current = nullptr, std::size_t element = 0);
    // `src` copied into the registers of `dst` (same size), dword by dword.
    void copy(gcn::Value const& dst, gcn::Value const& src);

    // ---- Workgroups (AmdgcnWorkgroup.cpp) ------------------------------------------------
    using LdsBases = std::vector<std::pair<ExprPtr, gcn::Value>>;
    bool inRegisters(Id d) const;
    void list(std::vector<Id> const& sequence);
    bool uniform(ExprPtr const& e) const;
    void drain();
    void loop(Id op, Operation const& o);
    void unrolledLoop(Id op);
    std::pair<gcn::Value, int> ldsAddress(Id shared, ExprPtr const& index, LdsBases& bases);
    std::vector<gcn::Value> readShared(Id shared, std::vector<std::map<Id, ExprPtr>> const& at,
                                       LdsBases& bases);
    void storeShared(Id op);
    void loadShared(Id op);
    Id accumulator(Id op, Id next);
    void multiply(Id op, Operation const& o, Id into = 0);

    // ---- Matrix cores (AmdgcnMatrixCores.cpp) --------------------------------------------
    // The layout check: nothing when the accumulators are not MFMA fragments.
    std::optional<MfmaLayout> mfmaLayout(Contraction const& c,
                                         std::vector<IndexSolution> const& elements) const;
    // Before any code: which held values accumulate a Multiply (the product, or the X of a fused
    // X = X + product), so that hold() gives their fragments consecutive VGPRs.
    void reserveMfmaAccumulators();
    void reserveFragments(Id d, GcnHeld& held);
    std::optional<MfmaPlan> mfmaPlan(Contraction const& c, Id accumulator,
                                     GcnHeld const& acc) const;
    // The staged tile's indices of a lane's four operand elements at K k0 + 4y + j; nothing
    // when a read might leave the tile.
    std::optional<std::vector<ExprPtr>>
    mfmaOperandOffsets(Id shared, Id along, ExprPtr const& where, Id kAxis, std::int64_t k0) const;
    gcn::Value mfmaOperand(Id shared, Id along, ExprPtr const& where, Id kAxis, std::int64_t k0,
                           LdsBases& bases);
    std::string mfmaMnemonic(DataType type) const;
    void multiplyOnMatrixCores(MfmaPlan const& plan, Contraction const& c);

    // ---- Memory (AmdgcnMemory.cpp) ------------------------------------------------------
    void load(Id op);
    void store(Id op);
    void move(Id value, GcnHeld& held, Id memory, bool isLoad);
    gcn::Value valueAt(Id d, GcnHeld const* current, std::size_t element);
    gcn::Value readInPlace(Id op, Id value, std::map<Id, ExprPtr> const& k,
                           std::vector<ExprPtr> const& where);
    gcn::Value unpack(gcn::Value const& raw, std::size_t k, DataType stored);
    gcn::Value pack(std::vector<gcn::Value> const& data, DataType stored);
    // The bits of one element as memory stores them (16-bit floats narrowed from f32).
    gcn::Value narrow(gcn::Value const& value, DataType stored);
    DataType tensorType(Id user) const;
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

    KernelGraph const& graph_;
    CodegenOptions const& options_;
    IndexFacts facts_;
    LaunchShape shape_;
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
    std::map<Id, gcn::Value> indices_; ///< i64 hardware indices and loop counters
    std::map<Id, GcnHeld> held_;
    std::map<Id, Id> views_; ///< values read in place -> the load that reads them
    std::map<Id, Contraction> mfmaAccumulators_; ///< held value -> the Multiply it accumulates
    std::map<std::pair<Id, std::size_t>, gcn::Value> fragments_; ///< (value, first element)
    bool mfmaSinceDrain_ = false; ///< an MFMA since the last drain(): its hazards are longer
    Id currentId_ = 0;
    int loopDepth_ = 0;
};

} // namespace detail

} // namespace kiln::lowering
