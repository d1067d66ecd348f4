// PtxCodegen.h (internal): the PTX code generator's state and its parts, shared by the files
// that write each kind of operation: PtxCodegen.cpp (kernel frame, control flow, the elements a
// workitem holds, global loads and stores, element-wise and reduction operations) and
// PtxWorkgroup.cpp (what a workgroup does together: shared-memory staging and Multiply).
#pragma once

#include "Contraction.h"
#include "OperationOrder.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/Distribution.h"
#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Simplify.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/UnrolledLoop.h"
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

namespace kiln::lowering {

// Defined in Manifest.cpp: parameters, hash and the common fields of the manifest.
void describeInterface(KernelGraph const& graph, CodegenOptions const& options,
                       LaunchShape const& shape, EmittedKernel& kernel);

namespace detail {

// One element a workitem computes: where it is (every index solved on the way, its own and its
// axes' among them) and when it exists.
struct Element {
    IndexSolution at;
};

// A value held in a workitem's registers: one register per combination of its local indices.
struct Held {
    std::vector<Element> elements;
    std::vector<std::string> registers;
    DataType type = DataType::F32;
};

// A Multiply on the tensor cores (PtxTensorCores.cpp): the accumulators grouped into the
// fragments of mma.sync.m16n8k16, and how to read the operands' fragments with ldmatrix.
struct MmaPlan {
    std::vector<Fragments::Fragment> fragments;        ///< d0..d3; slabs index rowBases, colBases
    std::vector<ExprPtr> rowBases, colBases;           ///< each slab's first row (column) at lane 0
    Id lhsShared = 0, rhsShared = 0;                   ///< the staged tiles
    DataType type = DataType::F16;                     ///< the operands'
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

class PtxCodegen {
public:
    /// `swizzled`: the staged tiles to lay out with the 128-byte swizzle, so that wgmma can
    /// read them; a first run finds them (warpgroupTiles()).
    PtxCodegen(KernelGraph const& graph, CodegenOptions const& options, std::set<Id> swizzled = {})
        : swizzled_(std::move(swizzled))
        , graph_(graph)
        , options_(options)
        , facts_(graph)
        , writer_(graph, facts_)
        , shape_(launchShape(graph))
        , arch_(arch::ArchLibrary::get(options.target)) {}

    EmittedKernel run() {
        EmittedKernel kernel;
        describeInterface(graph_, options_, shape_, kernel);
        prologue(kernel);
        list(graph_.sequence(graph_.kernel(), ControlEdgeKind::Body));
        kernel.sharedBytes = sharedBytes_; // a pipelined loop keeps several copies
        kernel.assumptions = assumptions_;
        writer_.instruction("ret");
        kernel.code = text(kernel);
        return kernel;
    }
    /// The staged tiles a Multiply on warpgroups would read (WarpgroupPlan::tiles), found by
    /// run(): swizzled, they let a second run use wgmma.
    std::set<Id> const& warpgroupTiles() const { return warpgroupTiles_; }

    /// warpgroupTiles() from a run that writes only what decides them: it walks the graph and
    /// plans every Multiply but writes no staging, no multiply and no store to a tensor (most of
    /// the work, and none of it changes a plan). Its code is not for use.
    std::set<Id> const& findWarpgroupTiles() {
        discovering_ = true;
        run();
        return warpgroupTiles_;
    }

private:
    // ---- Kernel frame -------------------------------------------------------------------

    void prologue(EmittedKernel const& kernel) {
        for (auto const& p : kernel.parameters) {
            auto const* arg = graph_.findArgument(p.name);
            KILN_ASSERT(arg, "parameter {} has no argument", p.name);
            if (p.pointer) {
                std::string const raw = writer_.newRegister(PtxType::S64),
                                  global = writer_.newRegister(PtxType::S64);
                writer_.instruction(fmt::format("ld.param.u64 {}, [{}]", raw, paramName(p.name)));
                writer_.instruction(fmt::format("cvta.to.global.u64 {}, {}", global, raw));
                pointers_[p.name] = global;
                continue;
            }
            DataType const type = arg->dtype;
            std::string const r = writer_.newRegister(registerType(type));
            if (type == DataType::F16 || type == DataType::BF16) {
                std::string const h = writer_.newRegister(PtxType::B16);
                writer_.instruction(fmt::format("ld.param.b16 {}, [{}]", h, paramName(p.name)));
                widen(r, h, type);
            } else {
                writer_.instruction(
                    fmt::format("ld.param{} {}, [{}]", memoryType(type), r, paramName(p.name)));
            }
            writer_.bindArgument(p.name, r);
        }
        layOutShared();
        static constexpr char const* axes[] = {"x", "y", "z"};
        for (int a = 0; a < 3; ++a) {
            for (bool group : {true, false}) {
                auto const& d = group ? shape_.workgroups[a] : shape_.workitems[a];
                if (!d)
                    continue;
                std::string const r32 = writer_.newRegister(PtxType::B32),
                                  r = writer_.newRegister(PtxType::S64);
                writer_.instruction(
                    fmt::format("mov.u32 {}, %{}.{}", r32, group ? "ctaid" : "tid", axes[a]));
                writer_.instruction(fmt::format("cvt.u64.u32 {}, {}", r, r32));
                indices_[*d] = r;
                if (auto const& size = graph_.coordinates.node(*d).size;
                    size && literalInt(simplify(size)) == std::int64_t{1})
                    units_.insert(*d);
            }
        }
    }

    std::string text(EmittedKernel const& kernel) const {
        std::string params;
        for (auto const& p : kernel.parameters) {
            auto const* arg = graph_.findArgument(p.name);
            std::string_view const type =
                p.pointer ? ".u64"
                : arg->dtype == DataType::F16 || arg->dtype == DataType::BF16
                    ? ".b16"
                    : memoryType(arg->dtype);
            params += fmt::format("{}    .param {} {}", params.empty() ? "" : ",\n", type,
                                  paramName(p.name));
        }
        // Dynamic shared memory (the launch gives the manifest's shared_bytes): a kernel may
        // then use more than the 48 KB a static array is limited to.
        std::string shared;
        if (sharedBytes_ > 0)
            shared = fmt::format(".extern .shared .align {} .b8 kiln_shared[];\n\n",
                                 shared_.swizzles.empty() ? 128 : 1024);
        // MIN_BLOCKS (a schedule parameter): workgroups that must fit on one multiprocessor at
        // once, which caps the registers ptxas may give each workitem.
        std::string occupancy;
        if (auto it = options_.schedule.find("MIN_BLOCKS");
            it != options_.schedule.end() && it->second > 1)
            occupancy = fmt::format(".minnctapersm {}\n", it->second);
        return fmt::format("//\n// Generated by Kiln from KernelGraph \"{}\" for {}.\n//\n"
                           ".version 8.0\n.target {}\n.address_size 64\n\n{}"
                           ".visible .entry {}(\n{}\n)\n.maxntid {}, {}, {}\n{}{{\n{}\n{}}}\n",
                           graph_.name, kernel.target, kernel.target, shared, kernel.entry, params,
                           kernel.block[0], kernel.block[1], kernel.block[2], occupancy,
                           writer_.declarations(), writer_.body());
    }

    static std::string paramName(std::string const& name) { return "param_" + name; }

    // f16/bf16 bits in `h` -> f32 register `r`.
    void widen(std::string const& r, std::string const& h, DataType type) {
        if (type == DataType::F16) {
            writer_.instruction(fmt::format("cvt.f32.f16 {}, {}", r, h));
            return;
        }
        std::string const w = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("mov.b32 {}, {{0, {}}}", w, h));
        writer_.instruction(fmt::format("mov.b32 {}, {}", r, w));
    }

    // ---- Control flow ---------------------------------------------------------------------

    void list(std::vector<Id> const& sequence) {
        auto const ops = sinkLoads(graph_, sequence, [this](Id d) { return holdable(d); });
        for (std::size_t i = 0; i < ops.size(); ++i) {
            // A product that is added to an accumulator right away goes straight into it: the
            // adds fuse into the fmas, and the product needs no registers of its own.
            if (i + 1 < ops.size()) {
                if (Id const into = accumulator(ops[i], ops[i + 1])) {
                    multiply(ops[i], graph_.control.node(ops[i]), into);
                    ++i;
                    continue;
                }
            }
            operation(ops[i]);
        }
    }

    void operation(Id op) {
        auto const& o = graph_.control.node(op);
        try {
            switch (o.kind) {
            case OperationKind::Kernel:
            case OperationKind::Nop:
                return;
            case OperationKind::Barrier:
                return barrier();
            case OperationKind::ForLoop:
                return loop(op, o);
            case OperationKind::If:
                return branch(op, o);
            case OperationKind::LoadLinear:
            case OperationKind::LoadTiled:
                return load(op);
            case OperationKind::StoreLinear:
            case OperationKind::StoreTiled:
                return discovering_ ? void() : store(op);
            case OperationKind::Assign:
                return assign(op, o);
            case OperationKind::Reduce:
                return reduce(op, o);
            case OperationKind::StoreShared:
                return discovering_ ? void() : storeShared(op);
            case OperationKind::LoadShared:
                return loadShared(op);
            case OperationKind::Multiply:
                return multiply(op, o);
            default:
                throw UserError(
                    fmt::format("code generation for {} is not written yet", name(o.kind)));
            }
        } catch (UserError const& e) {
            if (std::string_view(e.what()).find("operation #") != std::string_view::npos)
                throw;
            throw UserError(fmt::format("operation #{} ({}): {}", op, name(o.kind), e.message()));
        }
    }

    void loop(Id op, Operation const& o) {
        if (unrolledLoop(op))
            return;
        if (pipelinedLoop(op, o))
            return;
        for (Id init : graph_.successors(op, ControlEdgeKind::Initialize))
            operation(init);
        std::string const top = writer_.newLabel("loop"), done = writer_.newLabel("done");
        writer_.label(top);
        writer_.pushScope();
        std::string const p = writer_.emit(o.expression, DataType::Bool, bindings());
        writer_.instruction(fmt::format("@!{} bra {}", p, done));
        auto const body = graph_.sequence(op, ControlEdgeKind::Body);
        list(body);
        // The next iteration overwrites what this one staged in shared memory: every workitem
        // must be done reading it first.
        if (std::any_of(body.begin(), body.end(), [&](Id b) {
                return graph_.control.node(b).kind == OperationKind::StoreShared;
            }))
            barrier();
        for (Id step : graph_.successors(op, ControlEdgeKind::ForLoopIncrement))
            operation(step);
        writer_.popScope();
        writer_.instruction(fmt::format("bra.uni {}", top));
        writer_.label(done);
    }

    // A loop counted by an Unroll dimension: its body written once per value of the counter,
    // which is a constant in each copy (its register holds it too). A copy whose condition is
    // not a constant is guarded, and skips the copies after it, as the loop would stop. It is
    // not pipelined: a loop around it stages without prefetch.
    bool unrolledLoop(Id op) {
        Id const counter = graph_.mapping.get(op, role::counter);
        if (graph_.coordinates.node(counter).kind != DimensionKind::Unroll)
            return false;
        auto const copies = unrolledCopies(graph_, op);
        for (Id init : graph_.successors(op, ControlEdgeKind::Initialize))
            operation(init);
        std::string const done = writer_.newLabel("unrolled");
        auto const body = graph_.sequence(op, ControlEdgeKind::Body);
        for (auto const& [value, condition] : copies) {
            writer_.pushScope();
            writer_.instruction(fmt::format("mov.s64 {}, {}", indices_.at(counter), value));
            if (!literalInt(condition))
                writer_.instruction(fmt::format(
                    "@!{} bra {}", writer_.emit(condition, DataType::Bool, bindings()), done));
            shifted_[counter] = literal(value);
            list(body);
            shifted_.erase(counter);
            if (std::any_of(body.begin(), body.end(), [&](Id b) {
                    return graph_.control.node(b).kind == OperationKind::StoreShared;
                }))
                barrier();
            writer_.popScope();
        }
        writer_.label(done);
        return true;
    }

    void branch(Id op, Operation const& o) {
        std::string const otherwise = writer_.newLabel("else"), done = writer_.newLabel("endif");
        std::string const p = writer_.emit(o.expression, DataType::Bool, bindings());
        writer_.instruction(fmt::format("@!{} bra {}", p, otherwise));
        writer_.pushScope();
        list(graph_.sequence(op, ControlEdgeKind::Body));
        writer_.popScope();
        writer_.instruction(fmt::format("bra.uni {}", done));
        writer_.label(otherwise);
        writer_.pushScope();
        list(graph_.sequence(op, ControlEdgeKind::Else));
        writer_.popScope();
        writer_.label(done);
    }

    // ---- Elements -------------------------------------------------------------------------

    // The axes a data dimension is the Flatten of (its own index when it is not one).
    std::vector<Id> axes(Id d) const {
        for (Id e : graph_.coordinates.incoming(d))
            if (graph_.coordinates.edge(e).kind == CoordinateEdgeKind::Flatten)
                return graph_.coordinates.tails(e);
        return {d};
    }

    // Indices known everywhere in the kernel at this point: hardware indices and loop counters
    // (a counter shifted where a pipelined loop's producer runs ahead).
    std::map<Id, ExprPtr> known() const {
        std::map<Id, ExprPtr> k;
        for (auto const& [d, r] : indices_) {
            auto const shifted = shifted_.find(d);
            k.emplace(d, shifted != shifted_.end() ? shifted->second
                         : units_.contains(d)      ? literal(0) // one warp, one workgroup
                                                   : index(d));
        }
        return k;
    }

    // Whether the tile a load `op` reads into `dest` is better read in place (PtxCodegen.cpp).
    bool streamed(Id op, Id dest) const;
    // Whether `d` can live in registers: distributed, with constant-size local indices.
    bool holdable(Id d) const {
        Distribution const dist = distributionOf(graph_, d);
        if (!dist.distributed)
            return false;
        // A tile that belongs to a whole workgroup is shared by its workitems, not copied into
        // each one's registers.
        if (!dist.overWorkitems && shape_.workgroupSize() > 1)
            return false;
        for (Id l : dist.locals) {
            auto const& size = graph_.coordinates.node(l).size;
            if (!size || !literalInt(simplify(size)))
                return false;
        }
        return true;
    }

    // Every element of a held value, in register order (last local index fastest).
    std::vector<Element> elements(Id d) const {
        Distribution const dist = distributionOf(graph_, d);
        std::vector<std::int64_t> sizes;
        std::int64_t count = 1;
        for (Id l : dist.locals) {
            sizes.push_back(*literalInt(simplify(graph_.coordinates.node(l).size)));
            count *= sizes.back();
        }
        if (count > 256)
            throw UserError(fmt::format("#{} would need {} registers per workitem; tile it "
                                        "further",
                                        d, count));
        std::vector<Id> targets = axes(d);
        targets.push_back(d);
        std::vector<Element> out;
        for (std::int64_t c = 0; c < count; ++c) {
            auto k = known();
            std::int64_t rest = c;
            for (std::size_t i = dist.locals.size(); i-- > 0;) {
                k[dist.locals[i]] = literal(rest % sizes[i]);
                rest /= sizes[i];
            }
            out.push_back({solveIndices(graph_, k, targets, facts_)});
        }
        return out;
    }

    Held& hold(Id d) {
        auto it = held_.find(d);
        if (it != held_.end())
            return it->second;
        Held h;
        h.type = graph_.coordinates.node(d).dtype.value_or(DataType::F32);
        h.elements = elements(d);
        for (std::size_t c = 0; c < h.elements.size(); ++c)
            h.registers.push_back(writer_.newRegister(registerType(h.type)));
        return held_.emplace(d, std::move(h)).first->second;
    }

    PtxBindings bindings(Held const* current = nullptr, std::size_t element = 0) {
        PtxBindings b;
        b.index = [this](Id d) {
            auto it = indices_.find(d);
            return it == indices_.end() ? std::string() : it->second;
        };
        b.dataValue = [this, current, element](Id d, DataType) {
            return valueAt(d, current, element);
        };
        return b;
    }

    // The register holding value `d` at the element being computed (element `element` of
    // `current`): a held register at the same place, or a load of a value read in place.
    std::string valueAt(Id d, Held const* current, std::size_t element) {
        KILN_ASSERT(current, "value#{} read outside an element", d);
        auto const& here = current->elements[element].at;
        if (auto it = held_.find(d); it != held_.end()) {
            Held const& h = it->second;
            if (h.elements.size() != current->elements.size() ||
                !equal(h.elements[element].at.at(d), here.at(currentId_)))
                throw UserError(
                    fmt::format("value#{} is held with another layout than #{}", d, currentId_));
            return h.registers[element];
        }
        auto view = views_.find(d);
        if (view == views_.end())
            throw UserError(fmt::format("value#{} is read before it is computed", d));
        // Read in place: the same axes, when the two values have the same shape.
        auto k = known();
        auto const mine = axes(d), theirs = axes(currentId_);
        if (mine.size() == theirs.size()) {
            for (std::size_t a = 0; a < mine.size(); ++a)
                k[mine[a]] = here.at(theirs[a]);
        } else {
            k[d] = here.at(currentId_);
        }
        return readInPlace(view->second, d, k, here.conditions);
    }

    // Loads element `k` of a value that a LoadLinear/LoadTiled `op` reads in place; `where`
    // are the conditions of the element being computed, which guard the load too.
    std::string readInPlace(Id op, Id value, std::map<Id, ExprPtr> const& k,
                            std::vector<ExprPtr> const& where) {
        Id const memory = graph_.mapping.get(op, role::source);
        if (graph_.control.node(op).kind == OperationKind::LoadShared) {
            SharedBases bases;
            return readShared(memory, {k},
                              graph_.coordinates.node(value).dtype.value_or(DataType::F32), bases)
                .front();
        }
        auto solution = solveIndices(graph_, k, {memory}, facts_);
        for (auto const& c : where)
            if (std::none_of(solution.conditions.begin(), solution.conditions.end(),
                             [&](ExprPtr const& e) { return equal(e, c); }))
                solution.conditions.push_back(c);
        DataType const type = graph_.coordinates.node(value).dtype.value_or(DataType::F32);
        DataType const stored = tensorType(memory);
        std::string const address = globalAddress(memory, solution.at(memory), stored);
        std::string const p = writer_.emitConditions(solution.conditions, bindings());
        return loadScalar(address, stored, type, p);
    }

    DataType tensorType(Id user) const {
        auto const* arg = graph_.findArgument(graph_.coordinates.node(user).name);
        if (!arg || arg->kind != KernelArgument::Kind::Tensor)
            throw UserError(fmt::format("#{} names no tensor argument", user));
        return arg->dtype;
    }

    // The address of element `offset` of `user`'s tensor. Near an address already in a
    // register (a tile's next row: a distance of sizes and literals only) it is one add away,
    // or an immediate offset, instead of the whole index arithmetic again.
    std::string globalAddress(Id user, ExprPtr const& offset, DataType type) {
        std::int64_t const size = sizeInBytes(type);
        for (auto const& near : writer_.recentAddresses(user, 4)) {
            ExprPtr const d = IndexFacts::launchTimeDifference(offset, near.offset);
            if (!d)
                continue;
            if (auto n = literalInt(d); n && *n * size >= INT32_MIN && *n * size <= INT32_MAX)
                return *n == 0 ? near.reg : fmt::format("{}{:+}", near.reg, *n * size);
            std::string const o = writer_.emitIndex(simplify(d * literal(size)), bindings());
            std::string const r = writer_.newRegister(PtxType::S64);
            writer_.instruction(fmt::format("add.s64 {}, {}, {}", r, near.reg, o));
            writer_.rememberAddress(user, offset, r);
            return r;
        }
        std::string const base = pointers_.at(graph_.coordinates.node(user).name);
        std::string const o = writer_.emitIndex(simplify(offset * literal(size)), bindings());
        std::string const r = writer_.newRegister(PtxType::S64);
        writer_.instruction(fmt::format("add.s64 {}, {}, {}", r, base, o));
        writer_.rememberAddress(user, offset, r);
        return r;
    }

    static bool isHalf(DataType t) { return t == DataType::F16 || t == DataType::BF16; }

    static std::string zero(PtxType t) {
        return t == PtxType::F32 ? "0f00000000" : t == PtxType::F64 ? "0d0000000000000000" : "0";
    }

    // memory[address] (0 where `predicate` is false), converted to `type`.
    std::string loadScalar(std::string const& address, DataType stored, DataType type,
                           std::string const& predicate) {
        if (stored == DataType::Bool)
            throw UserError("tensors of bool are not supported by code generation yet");
        PtxType const rawType = isHalf(stored) ? PtxType::B16 : registerType(stored);
        std::string const raw = writer_.newRegister(rawType);
        if (!predicate.empty())
            writer_.instruction(fmt::format("mov{} {}, {}", ptxName(rawType), raw, zero(rawType)));
        writer_.instruction(fmt::format("{}ld.global{} {}, [{}]",
                                        predicate.empty() ? "" : "@" + predicate + " ",
                                        memoryType(stored), raw, address));
        std::string value = raw;
        if (isHalf(stored)) {
            value = writer_.newRegister(PtxType::F32);
            widen(value, raw, stored);
        }
        return writer_.convert(value, stored, type);
    }

    // The bits to store for `value` (held as `type`) in memory of type `stored`.
    std::string storable(std::string const& value, DataType type, DataType stored) {
        std::string const v = writer_.convert(value, type, isHalf(stored) ? DataType::F32 : stored);
        if (!isHalf(stored))
            return v;
        std::string const h = writer_.newRegister(PtxType::B16);
        writer_.instruction(
            fmt::format("cvt.rn.{}.f32 {}, {}", stored == DataType::F16 ? "f16" : "bf16", h, v));
        return h;
    }

    ExprPtr index(Id d) const { return kiln::index(d); }

    // ---- Data operations ------------------------------------------------------------------

    void load(Id op);
    void store(Id op);
    void assign(Id op, Operation const& o);
    void reduce(Id op, Operation const& o);

    // Workgroup operations (PtxWorkgroup.cpp).
    void layOutShared();
    void requireShared(std::int64_t copies, std::int64_t each);
    void storeShared(Id op);
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
    void barrier();
    void loadShared(Id op);
    void multiply(Id op, Operation const& o, Id into = 0);
    // Prefetch (PtxPipeline.cpp): false when the loop is not one it pipelines.
    bool pipelinedLoop(Id op, Operation const& o);
    struct Pipeline {
        Id op;
        Operation const& o;
        Id counter, increment;
        std::int64_t stages, stageBytes;
        std::vector<Id> producer, consumer;
    };
    void emitPipeline(Pipeline const& pipeline, bool fast);
    /// Whether all of `conditions` hold at the known sizes; nothing when no sizes are known or
    /// a condition needs more than them.
    std::optional<bool> holdAtKnownSizes(std::vector<ExprPtr> const& conditions) const;
    // Tensor cores (PtxTensorCores.cpp).
    std::optional<MmaPlan> tensorCorePlan(Contraction const& c, Held const& acc);
    std::optional<ExprPtr> operandIndex(Id shared, Id along, ExprPtr const& where, Id kAxis,
                                        ExprPtr const& k);
    void multiplyOnTensorCores(MmaPlan const& plan, Contraction const& c, Held& acc);
    // Warpgroups (PtxWarpgroups.cpp).
    std::optional<WarpgroupPlan> warpgroupPlan(MmaPlan const& plan, Contraction const& c,
                                               Held const& acc);
    void multiplyOnWarpgroups(WarpgroupPlan const& wg, MmaPlan const& plan, Contraction const& c,
                              Held& acc);
    // Before a barrier after which wgmma reads what the workgroup wrote to shared memory: the
    // writes must be made visible to the async proxy wgmma reads through.
    void fenceForWarpgroups() {
        if (!shared_.swizzles.empty())
            writer_.instruction("fence.proxy.async.shared::cta");
    }
    Id accumulator(Id op, Id next);
    /// Shared-memory addresses already in registers, by their element index: another index
    /// a constant away reuses one as `[register+bytes]`.
    using SharedBases = std::vector<std::pair<ExprPtr, std::string>>;
    std::string sharedAddress(Id shared, ExprPtr const& index, SharedBases& bases);
    std::vector<std::string> readShared(Id shared, std::vector<std::map<Id, ExprPtr>> const& at,
                                        DataType type, SharedBases& bases);
    void move(Held& held, Id memory, bool isLoad);
    void vector(Held& held, std::size_t start, std::size_t width, DataType stored,
                std::string const& address, bool isLoad, std::string_view space = ".global",
                std::string const& guard = "");

    std::set<Id> swizzled_;               ///< the staged tiles wgmma reads (see the constructor)
    std::set<Id> warpgroupTiles_;         ///< those this run found
    bool discovering_ = false;            ///< only finding them (findWarpgroupTiles)
    std::int64_t warpgroupsInFlight_ = 0; ///< wgmma groups a Multiply may leave running
    KernelGraph const& graph_;
    CodegenOptions const& options_;
    IndexFacts facts_;
    PtxWriter writer_;
    LaunchShape shape_;
    arch::Arch const& arch_; ///< the target's facts and capabilities
    std::size_t sharedBytes_ = 0;
    std::map<std::string, std::string> pointers_;
    std::map<Id, std::string> indices_; ///< s64 registers of hardware indices and counters
    std::map<Id, Held> held_;
    std::map<Id, Id> views_; ///< values read in place -> the load that reads them
    Id currentId_ = 0;
    std::string halves_[2];         ///< the two 16-bit halves of the word being packed or unpacked
    SharedLayout shared_;           ///< where each Shared dimension lies in kiln_shared
    bool asyncPending_ = false;     ///< cp.async copies issued since the last barrier
    std::map<Id, ExprPtr> shifted_; ///< loop counters as a pipelined loop's producer sees them
    std::set<Id> units_;            ///< hardware indices of size 1: always 0
    // A pipelined loop's fast version (PtxPipeline.cpp): staged runs copied without branches.
    bool branchFree_ = false;
    bool branchFreeFailed_ = false;           ///< a run needed a branch after all
    std::vector<ExprPtr> assumed_;            ///< launch-time conditions the copies assume
    std::vector<std::string> assumptions_;    ///< those a kernel for known sizes traps on
    std::vector<ExprPtr> producerConditions_; ///< every copy's, as well as its own
    std::string sharedBase_;                  ///< u32 register: kiln_shared's address
};

} // namespace detail

} // namespace kiln::lowering
