// The PTX code generator: walks the control graph of a lowered KernelGraph and writes one
// kernel. See Codegen.h for what it does; the comments below say how.
#include "PtxCodegen.h"

namespace kiln::lowering {

namespace detail {

void PtxCodegen::load(Id op) {
    Id const memory = graph_.mapping.get(op, role::source),
             dest = graph_.mapping.get(op, role::dest);
    if (graph_.coordinates.node(memory).kind != DimensionKind::User)
        throw UserError("a load from a dimension that is not a tensor is not written yet");
    if (!holdable(dest) || streamed(op, dest)) {
        views_[dest] = op; // read in place, element by element, where it is used
        return;
    }
    move(hold(dest), memory, /*isLoad=*/true);
}

// A large tile that only element-wise Assigns read (a GEMM epilogue's C) is read in place, each
// element as the Assign computes the element that needs it: held whole, it would be live next
// to the accumulators, 128 registers of each, and spill.
bool PtxCodegen::streamed(Id op, Id dest) const {
    if (elements(dest).size() <= 64)
        return false;
    for (Id reader : graph_.control.nodes()) {
        auto const kind = graph_.control.node(reader).kind;
        if (reader == op || kind == OperationKind::Kernel || kind == OperationKind::ForLoop ||
            kind == OperationKind::If)
            continue;
        if (readsValue(graph_, reader, dest) && kind != OperationKind::Assign)
            return false;
    }
    return true;
}

void PtxCodegen::store(Id op) {
    Id const source = graph_.mapping.get(op, role::source),
             memory = graph_.mapping.get(op, role::dest);
    if (graph_.coordinates.node(memory).kind != DimensionKind::User)
        throw UserError("a store to a dimension that is not a tensor is not written yet");
    auto it = held_.find(source);
    if (it == held_.end())
        throw UserError(fmt::format("value#{} is stored but not held in registers (is it "
                                    "distributed over the grid?)",
                                    source));
    move(it->second, memory, /*isLoad=*/false);
}

// Loads or stores every element of a held value, in vector accesses where consecutive
// elements are consecutive in memory and aligned, each guarded by its elements' conditions.
void PtxCodegen::move(Held& held, Id memory, bool isLoad) {
    Id const value = [&] {
        for (auto const& [d, h] : held_)
            if (&h == &held)
                return d;
        return Id{0};
    }();
    DataType const stored = tensorType(memory);
    int const bytes = sizeInBytes(stored);
    std::size_t const count = held.elements.size();
    std::vector<ExprPtr> offsets(count);
    std::vector<std::vector<ExprPtr>> conditions(count);
    auto const valueAxes = axes(value);
    for (std::size_t c = 0; c < count; ++c) {
        auto k = known();
        for (Id a : valueAxes)
            k[a] = held.elements[c].at.at(a);
        auto const solution = solveIndices(graph_, k, {memory}, facts_);
        offsets[c] = solution.at(memory);
        conditions[c] = held.elements[c].at.conditions;
        for (auto const& extra : solution.conditions)
            if (std::none_of(conditions[c].begin(), conditions[c].end(),
                             [&](ExprPtr const& e) { return equal(e, extra); }))
                conditions[c].push_back(extra);
        // A flattened index inside its tensor when its axes are: no check of its own.
        for (std::size_t i = conditions[c].size(); i-- > 0;) {
            std::vector<ExprPtr> others = conditions[c];
            others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
            if (facts_.impliedBy(conditions[c][i], others))
                conditions[c] = std::move(others);
        }
    }
    // Vector accesses where elements are consecutive in memory; alignment that the facts do
    // not prove is checked when the kernel runs.
    std::vector<ExprPtr> fast;
    auto consecutive = [&](std::size_t start, std::size_t width) {
        if (start % width != 0 || start + width > count)
            return false;
        for (std::size_t k = 1; k < width; ++k) {
            auto d = IndexFacts::difference(offsets[start + k], offsets[start]);
            if (!d || *d != static_cast<std::int64_t>(k))
                return false;
        }
        return true;
    };
    std::vector<std::pair<std::size_t, std::size_t>> accesses; // start, width
    std::size_t const widest = static_cast<std::size_t>(16 / bytes);
    for (std::size_t start = 0; start < count;) {
        std::size_t width = 1;
        for (std::size_t w = widest; w > 1; w /= 2)
            if (w * static_cast<std::size_t>(bytes) >= 4 && consecutive(start, w)) {
                width = w;
                break;
            }
        if (width > 1)
            for (auto const& c :
                 facts_.alignedWhen(offsets[start], static_cast<std::int64_t>(width)))
                fast.push_back(c);
        accesses.emplace_back(start, width);
        start += width;
    }
    PtxBindings const b = bindings();
    std::vector<std::string> addresses(count);
    auto address = [&](std::size_t c) -> std::string const& {
        if (addresses[c].empty())
            addresses[c] = globalAddress(memory, offsets[c], stored);
        return addresses[c];
    };
    auto scalar = [&](std::size_t c, std::string const& guard) {
        std::string const& reg = held.registers[c];
        if (isLoad) {
            std::string const v = loadScalar(address(c), stored, held.type, guard);
            writer_.instruction(
                fmt::format("mov{} {}, {}", ptxName(registerType(held.type)), reg, v));
        } else {
            std::string const bits = storable(reg, held.type, stored);
            writer_.instruction(fmt::format("{}st.global{} [{}], {}",
                                            guard.empty() ? "" : "@" + guard + " ",
                                            memoryType(stored), address(c), bits));
        }
    };
    // A tile of many accesses (a tensor-core warp's fragments: pairs scattered over its tile)
    // guards each access on its own: moved whole where it is inside the tensor and aligned,
    // element by element, masked, where not. One check for the whole tile would keep every
    // address live from the check to its access.
    if (accesses.size() > 16) {
        for (auto const& [start, width] : accesses) {
            writer_.pushScope();
            std::vector<ExprPtr> whole;
            for (std::size_t c = start; c < start + width; ++c)
                whole.insert(whole.end(), conditions[c].begin(), conditions[c].end());
            if (width > 1)
                for (auto const& c :
                     facts_.alignedWhen(offsets[start], static_cast<std::int64_t>(width)))
                    whole.push_back(c);
            std::string const p = writer_.emitConditions(IndexFacts::strongest(whole), b);
            if (width == 1) {
                scalar(start, p);
            } else {
                vector(held, start, width, stored, address(start), isLoad, ".global", p);
                if (!p.empty()) {
                    std::string const otherwise = writer_.newRegister(PtxType::Pred);
                    writer_.instruction(fmt::format("not.pred {}, {}", otherwise, p));
                    for (std::size_t c = start; c < start + width; ++c) {
                        std::string const q = writer_.newRegister(PtxType::Pred);
                        std::string const own = writer_.emitConditions(conditions[c], b);
                        if (own.empty())
                            writer_.instruction(fmt::format("mov.pred {}, {}", q, otherwise));
                        else
                            writer_.instruction(
                                fmt::format("and.pred {}, {}, {}", q, otherwise, own));
                        if (!isLoad) {
                            scalar(c, q);
                            continue;
                        }
                        // Loaded element by element (zero outside the tensor) only where the
                        // vector load did not run.
                        std::string const v = loadScalar(address(c), stored, held.type, q);
                        writer_.instruction(fmt::format("@{} mov{} {}, {}", otherwise,
                                                        ptxName(registerType(held.type)),
                                                        held.registers[c], v));
                    }
                }
            }
            writer_.popScope();
        }
        return;
    }
    // Otherwise one check for the whole register tile: inside the tensor and aligned, every
    // access is unguarded; otherwise (a tile on the tensor's edge) each element is moved on its
    // own, masked.
    for (auto const& c : conditions)
        fast.insert(fast.end(), c.begin(), c.end());
    fast = IndexFacts::strongest(fast);
    // Each path computes its own addresses, in its own scope: neither runs the other's code.
    std::string const slow = writer_.newLabel("masked"), done = writer_.newLabel("moved");
    if (!fast.empty())
        writer_.instruction(fmt::format("@!{} bra {}", writer_.emitConditions(fast, b), slow));
    writer_.pushScope();
    for (auto const& [start, width] : accesses) {
        if (width == 1)
            scalar(start, "");
        else
            vector(held, start, width, stored, address(start), isLoad);
    }
    writer_.popScope();
    if (fast.empty())
        return;
    writer_.instruction(fmt::format("bra.uni {}", done));
    writer_.label(slow);
    writer_.pushScope();
    std::fill(addresses.begin(), addresses.end(), std::string());
    for (std::size_t c = 0; c < count; ++c)
        scalar(c, writer_.emitConditions(conditions[c], b));
    writer_.popScope();
    writer_.label(done);
}

// One vector access of `width` consecutive elements: 32-bit words (two 16-bit values each)
// or whole elements of 4 or 8 bytes.
void PtxCodegen::vector(Held& held, std::size_t start, std::size_t width, DataType stored,
                        std::string const& address, bool isLoad, std::string_view space,
                        std::string const& guard) {
    int const bytes = sizeInBytes(stored);
    bool const half = isHalf(stored);
    std::size_t const lanes = half ? width / 2 : width;
    PtxType const laneType = half ? PtxType::B32 : registerType(stored);
    std::string_view const laneName = half ? ".b32" : memoryType(stored);
    std::vector<std::string> words;
    for (std::size_t k = 0; k < lanes; ++k)
        words.push_back(writer_.newRegister(laneType));
    std::string list;
    for (auto const& w : words)
        list += (list.empty() ? "" : ", ") + w;
    if (lanes > 1)
        list = "{" + list + "}";
    // One 32-bit word (two 16-bit values) is a plain access; more are a vector.
    std::string const op =
        fmt::format("{}{}{}{}", isLoad ? "ld" : "st", space,
                    lanes > 1 ? fmt::format(".v{}", lanes) : std::string(), laneName);
    (void)bytes;
    if (isLoad) {
        writer_.instruction(fmt::format("{}{} {}, [{}]", guard.empty() ? "" : "@" + guard + " ", op,
                                        list, address));
        for (std::size_t k = 0; k < width; ++k) {
            std::string value;
            if (half) {
                if (k % 2 == 0) {
                    halves_[0] = writer_.newRegister(PtxType::B16);
                    halves_[1] = writer_.newRegister(PtxType::B16);
                    writer_.instruction(fmt::format("mov.b32 {{{}, {}}}, {}", halves_[0],
                                                    halves_[1], words[k / 2]));
                }
                value = writer_.newRegister(PtxType::F32);
                widen(value, halves_[k % 2], stored);
            } else {
                value = words[k];
            }
            writer_.instruction(fmt::format("mov{} {}, {}", ptxName(registerType(held.type)),
                                            held.registers[start + k],
                                            writer_.convert(value, stored, held.type)));
        }
        return;
    }
    for (std::size_t k = 0; k < width; ++k) {
        std::string const bits = storable(held.registers[start + k], held.type, stored);
        if (half) {
            halves_[k % 2] = bits;
            if (k % 2 == 1)
                writer_.instruction(
                    fmt::format("mov.b32 {}, {{{}, {}}}", words[k / 2], halves_[0], halves_[1]));
        } else {
            writer_.instruction(fmt::format("mov{} {}, {}", ptxName(laneType), words[k], bits));
        }
    }
    writer_.instruction(
        fmt::format("{}{} [{}], {}", guard.empty() ? "" : "@" + guard + " ", op, address, list));
}

void PtxCodegen::assign(Id op, Operation const& o) {
    Id const dest = graph_.mapping.get(op, role::dest);
    auto const& dim = graph_.coordinates.node(dest);
    if (!holdsData(dim.kind)) { // a loop counter or another index
        auto it = indices_.find(dest);
        if (it == indices_.end())
            it = indices_.emplace(dest, writer_.newRegister(PtxType::S64)).first;
        std::string const v = writer_.emitIndex(o.expression, bindings());
        writer_.instruction(fmt::format("mov.s64 {}, {}", it->second, v));
        return;
    }
    if (!holdable(dest))
        throw UserError(fmt::format("#{} is not distributed over the grid with constant-size "
                                    "local indices, so no workitem can hold it",
                                    dest));
    Held& h = hold(dest);
    currentId_ = dest;
    for (std::size_t c = 0; c < h.elements.size(); ++c) {
        writer_.pushScope();
        std::string const v = writer_.emit(o.expression, h.type, bindings(&h, c));
        writer_.instruction(
            fmt::format("mov{} {}, {}", ptxName(registerType(h.type)), h.registers[c], v));
        writer_.popScope();
    }
}

// Each element of the dest combines one row of the source (its last axis), read in place.
void PtxCodegen::reduce(Id op, Operation const& o) {
    Id const source = graph_.mapping.get(op, role::source),
             dest = graph_.mapping.get(op, role::dest);
    auto view = views_.find(source);
    if (view == views_.end())
        throw UserError(
            fmt::format("Reduce reads value#{}, which is not a tensor read in place", source));
    if (!holdable(dest))
        throw UserError(
            fmt::format("the Reduce's dest #{} is not distributed over the grid", dest));
    auto const& shape = graph_.coordinates.node(source).shape;
    auto const sourceAxes = axes(source), destAxes = axes(dest);
    if (shape.empty() || sourceAxes.size() != destAxes.size() + 1)
        throw UserError(
            fmt::format("Reduce from #{} to #{}: the source needs one axis more", source, dest));
    Held& h = hold(dest);
    currentId_ = dest;
    // Floating-point rows accumulate in f64: a long f32 sum drifts from the exact one by more
    // than f32's tolerance, and the loop is bound by memory, not by the adds.
    DataType const accType = isFloat(h.type) ? DataType::F64 : h.type;
    PtxType const acc = registerType(accType);
    Id const along = sourceAxes.back();
    for (std::size_t c = 0; c < h.elements.size(); ++c) {
        writer_.pushScope();
        std::string const sum = writer_.newRegister(acc), p = writer_.newRegister(PtxType::S64);
        bool const floating = acc == PtxType::F64;
        std::string const init = o.combine == Combine::Sum ? zero(acc)
                                 : o.combine == Combine::Max
                                     ? (floating ? "0dFFF0000000000000" : "-9223372036854775807")
                                     : (floating ? "0d7FF0000000000000" : "9223372036854775807");
        writer_.instruction(fmt::format("mov{} {}, {}", ptxName(acc), sum, init));
        writer_.instruction(fmt::format("mov.s64 {}, 0", p));
        std::string const last = writer_.emitIndex(simplify(shape.back()), bindings());
        std::string const top = writer_.newLabel("reduce"), done = writer_.newLabel("reduced");
        writer_.label(top);
        std::string const finished = writer_.newRegister(PtxType::Pred);
        writer_.instruction(fmt::format("setp.ge.s64 {}, {}, {}", finished, p, last));
        writer_.instruction(fmt::format("@{} bra {}", finished, done));
        writer_.pushScope();
        indices_[along] = p;
        auto k = known();
        for (std::size_t a = 0; a < destAxes.size(); ++a)
            k[sourceAxes[a]] = h.elements[c].at.at(destAxes[a]);
        std::string const v =
            writer_.convert(readInPlace(view->second, source, k, h.elements[c].at.conditions),
                            graph_.coordinates.node(source).dtype.value_or(accType), accType);
        indices_.erase(along);
        writer_.instruction(fmt::format("{}{} {}, {}, {}",
                                        o.combine == Combine::Sum   ? "add"
                                        : o.combine == Combine::Max ? "max"
                                                                    : "min",
                                        ptxName(acc), sum, sum, v));
        writer_.popScope();
        writer_.instruction(fmt::format("add.s64 {}, {}, 1", p, p));
        writer_.instruction(fmt::format("bra.uni {}", top));
        writer_.label(done);
        writer_.instruction(fmt::format("mov{} {}, {}", ptxName(registerType(h.type)),
                                        h.registers[c], writer_.convert(sum, accType, h.type)));
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

EmittedKernel emitKernel(KernelGraph const& graph, CodegenOptions const& options) {
    if (!options.target.starts_with("sm_"))
        throw UserError(fmt::format("no code generator for target '{}' (PTX targets are sm_*)",
                                    options.target));
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
