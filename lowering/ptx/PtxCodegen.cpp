// The PTX code generator: the kernel frame, control flow, element-wise and reduction
// operations, and emitKernel. The walk itself is KernelWalker.h's; see Codegen.h for what the
// kernel does.
#include "PtxCodegen.h"

#include "CodeGenerators.h"
#include "kiln/lowering/Occupancy.h"

namespace kiln::lowering {

namespace detail {

PtxCodegen::PtxCodegen(KernelGraph const& graph, CodegenOptions const& options,
                       std::set<Id> swizzled)
    : KernelWalker(graph, options, "")
    , swizzled_(std::move(swizzled))
    , writer_(graph, facts_)
    , arch_(arch::ArchLibrary::get(options.target)) {}

EmittedKernel PtxCodegen::run() {
    EmittedKernel kernel;
    describeInterface(graph_, options_, shape_, kernel);
    prologue(kernel);
    kernelBody();
    finishStagedStores();
    if (tmaRequested() && !discovering_ && tensorMaps_.empty())
        throw UserError(fmt::format("TMA=1 loads the tiles of a K loop pipelined over STAGES >= 2 "
                                    "copies (UNROLL=1) that wgmma reads; this kernel has none "
                                    "(schedule {})",
                                    scheduleText(options_.schedule)));
    // The tensor maps after the graph's arguments, each 64-byte aligned.
    for (ParameterInfo p : tensorMaps_) {
        ParameterInfo const& last = kernel.parameters.back();
        p.offset = (last.offset + last.size + 63) / 64 * 64;
        kernel.parameters.push_back(std::move(p));
    }
    kernel.sharedBytes = sharedBytes_; // a pipelined loop keeps several copies
    kernel.assumptions = assumptions_;
    // WARP_SPECIALIZE's producer warpgroup, and PINGPONG's second consumer warpgroup.
    kernel.block[2] += producerWarps_ + secondConsumerWarps_;
    if (persistentTiles(options_.schedule)) // registers: not known before ptxas
        kernel.workgroupsPerMultiprocessor = workgroupsPerMultiprocessor(kernel, 0);
    if (!exitLabel_.empty())
        writer_.label(exitLabel_);
    // Clusters: no workgroup leaves while a peer may still copy into its shared memory or
    // arrive on its mbarriers (PtxClusters.cpp).
    kernel.cluster = launchCluster(options_.schedule);
    if (clustered() && !discovering_)
        leaveCluster();
    else
        writer_.instruction("ret");
    kernel.code = text(kernel);
    return kernel;
}

std::set<Id> const& PtxCodegen::findWarpgroupTiles() {
    discovering_ = true;
    run();
    return warpgroupTiles_;
}

void PtxCodegen::prologue(EmittedKernel const& kernel) {
    for (auto const& p : kernel.parameters) {
        auto const* arg = graph_.findArgument(p.name);
        KILN_ASSERT(arg || p.workspaceBytes, "parameter {} has no argument", p.name);
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
    trapUnlessKnownSizes();
    layOutShared();
    bindHardwareIndices();
}

// A kernel made for one problem's sizes (CodegenOptions::sizes) traps at any other, so that
// what code generation proves from them (IndexFacts::assumeSizes: the masks of elements that
// are never missing) holds at every launch that runs. Past the trap each size is its constant
// (a register moved from it, not the parameter), which ptxas folds into the indices and the
// loop bounds: a layer norm of 8192 x 8192 f16, 94.4 -> 92.7 us on the H100
// (bench/results/2026-11-26-h100-eighth-layernorm.md).
void PtxCodegen::trapUnlessKnownSizes() {
    auto const sizes = knownSizes();
    if (sizes.empty())
        return;
    std::vector<ExprPtr> conditions;
    for (KnownSize const& size : sizes)
        conditions.push_back(size.holds());
    std::string const holds = writer_.emitConditions(conditions, bindings());
    writer_.instruction(fmt::format("@!{} trap", holds));
    for (KnownSize const& size : sizes) {
        PtxType const type = registerType(size.argument->dtype);
        std::string const r = writer_.newRegister(type);
        writer_.instruction(fmt::format("mov{} {}, {}", ptxName(type), r, size.value));
        writer_.bindArgument(size.argument->name, r);
    }
    assumeKnownSizes(sizes, assumptions_);
}

std::string PtxCodegen::hardwareIndex(bool workgroup, int axis) {
    std::string const r32 = writer_.newRegister(PtxType::B32),
                      r = writer_.newRegister(PtxType::S64);
    writer_.instruction(
        fmt::format("mov.u32 {}, %{}.{}", r32, workgroup ? "ctaid" : "tid", "xyz"[axis]));
    writer_.instruction(fmt::format("cvt.u64.u32 {}, {}", r, r32));
    return r;
}

std::string PtxCodegen::text(EmittedKernel const& kernel) const {
    std::string params;
    for (auto const& p : kernel.parameters) {
        if (p.tensorMap) { // opaque, read by the copy engine through its generic address
            params += fmt::format("{}    .param .align 64 .b8 {}[128]", params.empty() ? "" : ",\n",
                                  paramName(p.name));
            continue;
        }
        auto const* arg = graph_.findArgument(p.name);
        std::string_view const type = p.pointer ? ".u64"
                                      : arg->dtype == DataType::F16 || arg->dtype == DataType::BF16
                                          ? ".b16"
                                          : memoryType(arg->dtype);
        params +=
            fmt::format("{}    .param {} {}", params.empty() ? "" : ",\n", type, paramName(p.name));
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
    else if (producerWarps_ > 0) // setmaxnreg needs a register limit at the kernel's entry
        occupancy = ".minnctapersm 1\n";
    // CLUSTER_M, CLUSTER_N: the cluster every launch must give (the manifest's "cluster").
    std::string cluster;
    if (kernel.cluster[0] * kernel.cluster[1] * kernel.cluster[2] > 1)
        cluster = fmt::format(".reqnctapercluster {}, {}, {}\n", kernel.cluster[0],
                              kernel.cluster[1], kernel.cluster[2]);
    return fmt::format("//\n// Generated by Kiln from KernelGraph \"{}\" for {}.\n//\n"
                       ".version 8.0\n.target {}\n.address_size 64\n\n{}"
                       ".visible .entry {}(\n{}\n)\n.maxntid {}, {}, {}\n{}{}{{\n{}\n{}}}\n",
                       graph_.name, kernel.target, kernel.target, shared, kernel.entry, params,
                       kernel.block[0], kernel.block[1], kernel.block[2], cluster, occupancy,
                       writer_.declarations(), writer_.body());
}

void PtxCodegen::widen(std::string const& r, std::string const& h, DataType type) {
    if (type == DataType::F16) {
        writer_.instruction(fmt::format("cvt.f32.f16 {}, {}", r, h));
        return;
    }
    std::string const w = writer_.newRegister(PtxType::B32);
    writer_.instruction(fmt::format("mov.b32 {}, {{0, {}}}", w, h));
    writer_.instruction(fmt::format("mov.b32 {}, {}", r, w));
}

PtxBindings PtxCodegen::bindings(Held const* current, std::size_t element) {
    PtxBindings b;
    b.index = [this](Id d) {
        auto it = indices_.find(d);
        return it == indices_.end() ? std::string() : it->second;
    };
    b.dataValue = [this, current, element](Id d, DataType) { return valueAt(d, current, element); };
    return b;
}

void PtxCodegen::branch(Id op, Operation const& o) {
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

LoopLabels PtxCodegen::beginLoop(ExprPtr const& condition) {
    LoopLabels const labels{writer_.newLabel("loop"), writer_.newLabel("done")};
    writer_.label(labels.top);
    writer_.pushScope();
    std::string const p = writer_.emit(condition, DataType::Bool, bindings());
    writer_.instruction(fmt::format("@!{} bra {}", p, labels.done));
    return labels;
}

void PtxCodegen::endLoop(LoopLabels const& labels) {
    writer_.popScope();
    writer_.instruction(fmt::format("bra.uni {}", labels.top));
    writer_.label(labels.done);
}

std::string PtxCodegen::beginUnrolled() {
    return writer_.newLabel("unrolled");
}

// The counter is a constant in each copy (its register holds it too): addresses fold it.
void PtxCodegen::beginCopy(Id counter, std::int64_t value, ExprPtr const& condition,
                           std::string const& done) {
    writer_.pushScope();
    writer_.instruction(fmt::format("mov.s64 {}, {}", indices_.at(counter), value));
    if (!literalInt(condition))
        writer_.instruction(
            fmt::format("@!{} bra {}", writer_.emit(condition, DataType::Bool, bindings()), done));
    shifted_[counter] = literal(value);
}

void PtxCodegen::endCopy(Id counter) {
    shifted_.erase(counter);
    writer_.popScope();
}

void PtxCodegen::endUnrolled(std::string const& done) {
    writer_.label(done);
}

void PtxCodegen::allocate(Id, Held& held) {
    for (std::size_t c = 0; c < held.elements.size(); ++c)
        held.registers.push_back(writer_.newRegister(registerType(held.type)));
}

void PtxCodegen::fenceForWarpgroups() {
    if (!shared_.swizzles.empty())
        writer_.instruction("fence.proxy.async.shared::cta");
}

void PtxCodegen::assignIndex(Id dest, ExprPtr const& e) {
    auto it = indices_.find(dest);
    if (it == indices_.end())
        it = indices_.emplace(dest, writer_.newRegister(PtxType::S64)).first;
    // In a scope of its own: what it computes from dest's old value is not reused after.
    writer_.pushScope();
    std::string const v = writer_.emitIndex(e, bindings());
    writer_.instruction(fmt::format("mov.s64 {}, {}", it->second, v));
    writer_.popScope();
}

void PtxCodegen::assignElement(Held& held, std::size_t c, ExprPtr const& e) {
    writer_.pushScope();
    std::string const v = writer_.emit(e, held.type, bindings(&held, c), precision_);
    writer_.instruction(
        fmt::format("mov{} {}, {}", ptxName(registerType(held.type)), held.registers[c], v));
    writer_.popScope();
}

// Each element's row is a loop over the source's last axis, reading it in place.
void PtxCodegen::reduceRows(Operation const& o, Held& held, Reduction const& r) {
    PtxType const acc = registerType(r.accumulator);
    for (std::size_t c = 0; c < held.elements.size(); ++c) {
        writer_.pushScope();
        std::string const sum = writer_.newRegister(acc), p = writer_.newRegister(PtxType::S64);
        bool const max = o.combine == Combine::Max;
        std::string const init =
            o.combine == Combine::Sum ? zero(acc)
            : acc == PtxType::F64     ? (max ? "0dFFF0000000000000" : "0d7FF0000000000000")
            : acc == PtxType::F32     ? (max ? "0fFF800000" : "0f7F800000")
                                      : (max ? "-9223372036854775807" : "9223372036854775807");
        writer_.instruction(fmt::format("mov{} {}, {}", ptxName(acc), sum, init));
        writer_.instruction(fmt::format("mov.s64 {}, 0", p));
        std::string const last = writer_.emitIndex(simplify(r.extent), bindings());
        std::string const top = writer_.newLabel("reduce"), done = writer_.newLabel("reduced");
        writer_.label(top);
        std::string const finished = writer_.newRegister(PtxType::Pred);
        writer_.instruction(fmt::format("setp.ge.s64 {}, {}, {}", finished, p, last));
        writer_.instruction(fmt::format("@{} bra {}", finished, done));
        writer_.pushScope();
        std::string const v = writer_.convert(rowElement(r, held, c, p), r.element, r.accumulator);
        writer_.instruction(fmt::format("{}{} {}, {}, {}",
                                        o.combine == Combine::Sum   ? "add"
                                        : o.combine == Combine::Max ? "max"
                                                                    : "min",
                                        ptxName(acc), sum, sum, v));
        writer_.popScope();
        writer_.instruction(fmt::format("add.s64 {}, {}, 1", p, p));
        writer_.instruction(fmt::format("bra.uni {}", top));
        writer_.label(done);
        reduced(held, c, sum, r);
        writer_.popScope();
    }
}

} // namespace detail

namespace {

// A kernel the target cannot launch is bad input, named with the limit and the schedule that
// asked for it, not code for the driver to refuse later.
EmittedKernel withinLimits(EmittedKernel kernel) {
    arch::Arch const& arch = arch::ArchLibrary::get(kernel.target);
    std::string const schedule = scheduleText(kernel.schedule);
    auto const limit = [&](char const* fact, double fallback) {
        return arch.fact(fact).value_or(fallback);
    };
    std::int64_t const workitems = kernel.block[0] * kernel.block[1] * kernel.block[2];
    double const most = limit("max_threads_per_block", 1024);
    if (static_cast<double>(workitems) > most)
        throw UserError(fmt::format("the workgroup has {} workitems ({} x {} x {}); {} launches at "
                                    "most {} (max_threads_per_block), schedule {}",
                                    workitems, kernel.block[0], kernel.block[1], kernel.block[2],
                                    kernel.target, most, schedule));
    double const shared = limit("shared_bytes", 49152);
    if (static_cast<double>(kernel.sharedBytes) > shared)
        throw UserError(fmt::format("the workgroup needs {} bytes of shared memory; {} has at most "
                                    "{} (shared_bytes), schedule {}",
                                    kernel.sharedBytes, kernel.target, shared, schedule));
    return kernel;
}

} // namespace

EmittedKernel detail::emitPtxKernel(KernelGraph const& graph, CodegenOptions const& options) {
    checkCodegenParameters(options);
    // A Multiply that warpgroups can run (wgmma) needs its staged tiles swizzled, which is
    // known only once the walk reaches it: a first run that only plans finds them, and the run
    // that writes the kernel lays them out so. Where the input is bad, the run that writes the
    // kernel reports it, with the message of the first operation that fails (the first run
    // leaves some out).
    if (!arch::ArchLibrary::get(options.target).has(arch::Capability::HasWGMMA))
        return withinLimits(detail::PtxCodegen(graph, options).run());
    std::set<Id> tiles;
    try {
        tiles = detail::PtxCodegen(graph, options).findWarpgroupTiles();
    } catch (UserError const&) {
        tiles.clear();
    }
    return withinLimits(detail::PtxCodegen(graph, options, tiles).run());
}

} // namespace kiln::lowering
