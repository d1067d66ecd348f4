// Global memory in the PTX code generator: addresses (near ones as an add or an immediate
// offset), vector accesses of consecutive aligned elements guarded by their conditions, and
// values read in place.
#include "OperationOrder.h"
#include "PtxCodegen.h"

#include <limits>
#include <set>
#include <type_traits>
#include <variant>
#include <vector>

namespace kiln::lowering::detail {

// A value read in place: each element loaded where it is used, guarded by its conditions.
std::string PtxCodegen::loadElement(Id memory, ExprPtr const& offset,
                                    std::vector<ExprPtr> const& conditions, DataType type) {
    DataType const stored = tensorType(memory);
    std::string const address = globalAddress(memory, offset, stored);
    std::string const p = writer_.emitConditions(conditions, bindings());
    return loadScalar(address, stored, type, p);
}

// Rows a later workgroup reads, asked of L2 by the copy engine (KernelWalker::
// prefetchLaterRows()): one instruction, no register written. sm_90 and later only.
void PtxCodegen::prefetch(Id memory, ExprPtr const& offset, std::int64_t bytes,
                          std::vector<ExprPtr> const& conditions) {
    if (!arch_.has(arch::Capability::HasTMA) || bytes <= 0 || bytes % 16 != 0 ||
        bytes > std::numeric_limits<std::uint32_t>::max())
        return;
    writer_.comment(fmt::format("{}: the rows of a later workgroup into L2",
                                graph_.coordinates.node(memory).name));
    std::string const p = writer_.emitConditions(conditions, bindings());
    std::string const address = globalAddress(memory, offset, tensorType(memory));
    writer_.instruction(fmt::format("{}cp.async.bulk.prefetch.L2.global [{}], {}",
                                    p.empty() ? "" : "@" + p + " ", address, bytes));
}

std::string PtxCodegen::readStagedElement(Id shared, std::map<Id, ExprPtr> const& k,
                                          DataType type) {
    SharedBases bases;
    return readShared(shared, {k}, type, bases).front();
}

// The address of element `offset` of `user`'s tensor. Near an address already in a
// register (a tile's next row: a distance of sizes and literals only) it is one add away,
// or an immediate offset, instead of the whole index arithmetic again.
std::string PtxCodegen::globalAddress(Id user, ExprPtr const& offset, DataType type) {
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

std::string PtxCodegen::zero(PtxType t) {
    return t == PtxType::F32 ? "0f00000000" : t == PtxType::F64 ? "0d0000000000000000" : "0";
}

// memory[address] (0 where `predicate` is false), converted to `type`.
std::string PtxCodegen::loadScalar(std::string const& address, DataType stored, DataType type,
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

std::string PtxCodegen::storable(std::string const& value, DataType type, DataType stored) {
    std::string const v = writer_.convert(value, type, isHalf(stored) ? DataType::F32 : stored);
    if (!isHalf(stored))
        return v;
    std::string const h = writer_.newRegister(PtxType::B16);
    writer_.instruction(
        fmt::format("cvt.rn.{}.f32 {}, {}", stored == DataType::F16 ? "f16" : "bf16", h, v));
    return h;
}

namespace {

// The values expression `e` reads.
void valuesRead(ExprPtr const& e, std::vector<Id>& out) {
    std::visit(
        [&](auto const& n) {
            using N = std::decay_t<decltype(n)>;
            if constexpr (std::is_same_v<N, expr::DataValue>) {
                out.push_back(n.dimension);
            } else if constexpr (std::is_same_v<N, expr::Unary> ||
                                 std::is_same_v<N, expr::Convert>) {
                valuesRead(n.arg, out);
            } else if constexpr (std::is_same_v<N, expr::Binary>) {
                valuesRead(n.lhs, out);
                valuesRead(n.rhs, out);
            } else if constexpr (std::is_same_v<N, expr::Select>) {
                valuesRead(n.condition, out);
                valuesRead(n.ifTrue, out);
                valuesRead(n.ifFalse, out);
            }
        },
        static_cast<Expression::variant const&>(*e));
}

// Whether the Assigns that compute `value` read a value in place (the C of alpha * AB + beta * C,
// a bias), directly or through the values they read: those elements are then loaded among the
// stores and live next to the accumulators. A Multiply's product ends the walk.
bool computedFromValuesReadInPlace(KernelGraph const& graph, std::map<Id, Id> const& views,
                                   Id value) {
    std::set<Id> seen;
    std::vector<Id> todo{value};
    while (!todo.empty()) {
        Id const d = todo.back();
        todo.pop_back();
        if (!seen.insert(d).second)
            continue;
        for (Id op : graph.control.nodes()) {
            auto const& o = graph.control.node(op);
            if (o.kind != OperationKind::Assign || !o.expression ||
                graph.mapping.get(op, role::dest) != d)
                continue;
            std::vector<Id> read;
            valuesRead(o.expression, read);
            for (Id x : read) {
                if (views.count(x))
                    return true;
                todo.push_back(x);
            }
        }
    }
    return false;
}

} // namespace

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

void PtxCodegen::move(Id value, Held& held, Id memory, bool isLoad) {
    moveElements(value, held, memory, isLoad);
    if (isLoad && holdingRows_)
        holdAsWords(held, tensorType(memory));
}

void PtxCodegen::holdAsWords(Held const& held, DataType stored) {
    if (!isHalf(stored) || held.type != stored)
        return;
    for (std::size_t c = 0; c + 1 < held.registers.size(); c += 2) {
        std::string const &first = held.registers[c], &second = held.registers[c + 1];
        if (loadedHalves_.contains(first) && loadedHalves_.contains(second))
            continue;
        std::string const low = storable(first, held.type, stored),
                          high = storable(second, held.type, stored),
                          word = writer_.newRegister(PtxType::B32);
        writer_.instruction(fmt::format("mov.b32 {}, {{{}, {}}}", word, low, high));
        loadedHalves_[first] = {word, 0, stored};
        loadedHalves_[second] = {word, 1, stored};
    }
}

// Loads or stores every element of a held value, in vector accesses where consecutive
// elements are consecutive in memory and aligned, each guarded by its elements' conditions.
void PtxCodegen::moveElements(Id value, Held& held, Id memory, bool isLoad) {
    DataType const stored = tensorType(memory);
    int const bytes = sizeInBytes(stored);
    std::size_t const count = held.elements.size();
    Placed const placed = place(value, held, memory);
    auto const& offsets = placed.offsets;
    auto const& conditions = placed.conditions;
    // Vector accesses where elements are consecutive in memory; alignment that the facts do
    // not prove is checked when the kernel runs.
    std::vector<ExprPtr> fast;
    std::vector<std::pair<std::size_t, std::size_t>> accesses; // start, width
    std::size_t const widest = static_cast<std::size_t>(16 / bytes);
    for (std::size_t start = 0; start < count;) {
        std::size_t const width = accessWidth(offsets, start, widest, bytes);
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
    // address live from the check to its access. A kernel on warpgroups (wgmma) that stores its
    // accumulators as they are shares one scope over the stores, so the arithmetic they have in
    // common (the workgroup's bases, the sizes' alignment tests) is written once: ptxas takes
    // 18% less time on the 128x256 f16 tile at the same speed on an H100
    // (bench/results/2026-11-26-epilogue-scope.md). Where the epilogue also reads a tensor (C,
    // a bias), the shared values spill (3.8% slower, bf16); mma.sync's tiles spilled too.
    if (accesses.size() > 16) {
        bool const shareScope = !isLoad && !shared_.swizzles.empty() &&
                                !computedFromValuesReadInPlace(graph_, views_, value);
        if (shareScope)
            writer_.pushScope();
        for (auto const& [start, width] : accesses) {
            if (!shareScope)
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
            } else if (auto const* loaded = isLoad && p.empty()
                                                ? preloaded(memory, offsets[start], width)
                                                : nullptr) {
                vector(held, start, width, stored, "", isLoad, ".global", "", loaded);
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
            if (!shareScope)
                writer_.popScope();
        }
        if (shareScope)
            writer_.popScope();
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
        else if (auto const* loaded =
                     isLoad && fast.empty() ? preloaded(memory, offsets[start], width) : nullptr)
            vector(held, start, width, stored, "", isLoad, ".global", "", loaded);
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
    for (std::size_t c = 0; c < count; ++c) {
        scalar(c, writer_.emitConditions(conditions[c], b));
        loadedHalves_.erase(held.registers[c]); // not always from the fast path's word
    }
    writer_.popScope();
    writer_.label(done);
}

// One vector access of `width` consecutive elements: 32-bit words (two 16-bit values each)
// or whole elements of 4 or 8 bytes.
void PtxCodegen::vector(Held& held, std::size_t start, std::size_t width, DataType stored,
                        std::string const& address, bool isLoad, std::string_view space,
                        std::string const& guard, std::vector<std::string> const* loaded) {
    bool const half = isHalf(stored);
    if (isLoad) {
        std::vector<std::string> const words =
            loaded ? *loaded : loadWords(width, stored, address, space, guard);
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
            // Where the load always runs, the element is its word's half (again()); a guarded
            // one is loaded element by element where it does not.
            if (half && held.type == stored && guard.empty())
                loadedHalves_[held.registers[start + k]] = {words[k / 2], k % 2, stored};
        }
        return;
    }
    auto const [words, list] = newWords(width, stored);
    for (std::size_t k = 0; k < width; ++k) {
        std::string const bits = storable(held.registers[start + k], held.type, stored);
        if (half) {
            halves_[k % 2] = bits;
            if (k % 2 == 1)
                writer_.instruction(
                    fmt::format("mov.b32 {}, {{{}, {}}}", words[k / 2], halves_[0], halves_[1]));
        } else {
            writer_.instruction(
                fmt::format("mov{} {}, {}", ptxName(registerType(stored)), words[k], bits));
        }
    }
    std::string const op = fmt::format(
        "st{}{}{}", space, words.size() > 1 ? fmt::format(".v{}", words.size()) : std::string(),
        half ? ".b32" : memoryType(stored));
    writer_.instruction(
        fmt::format("{}{} [{}], {}", guard.empty() ? "" : "@" + guard + " ", op, address, list));
}

// A 16-bit element widened again from the word it was loaded in: the word is what stays live.
std::string PtxCodegen::again(std::string const& r) {
    auto const loaded = loadedHalves_.find(r);
    if (loaded == loadedHalves_.end())
        return r;
    std::string const low = writer_.newRegister(PtxType::B16),
                      high = writer_.newRegister(PtxType::B16),
                      value = writer_.newRegister(PtxType::F32);
    writer_.instruction(fmt::format("mov.b32 {{{}, {}}}, {}", low, high, loaded->second.word));
    widen(value, loaded->second.half == 0 ? low : high, loaded->second.stored);
    return value;
}

std::pair<std::vector<std::string>, std::string> PtxCodegen::newWords(std::size_t width,
                                                                      DataType stored) {
    bool const half = isHalf(stored);
    std::vector<std::string> words;
    for (std::size_t k = 0; k < (half ? width / 2 : width); ++k)
        words.push_back(writer_.newRegister(half ? PtxType::B32 : registerType(stored)));
    std::string list;
    for (auto const& w : words)
        list += (list.empty() ? "" : ", ") + w;
    return {words, words.size() > 1 ? "{" + list + "}" : list};
}

std::vector<std::string> PtxCodegen::loadWords(std::size_t width, DataType stored,
                                               std::string const& address, std::string_view space,
                                               std::string const& guard) {
    bool const half = isHalf(stored);
    auto const [words, list] = newWords(width, stored);
    // One 32-bit word (two 16-bit values) is a plain access; more are a vector.
    std::string op = fmt::format(
        "ld{}{}{}", space, words.size() > 1 ? fmt::format(".v{}", words.size()) : std::string(),
        half ? ".b32" : memoryType(stored));
    // What is read again stays in L1 (evict_last); a last read does not take its room.
    if (space == ".global" && reuse_ != Reuse::None)
        op.insert(op.find(".global") + 7,
                  reuse_ == Reuse::Again ? ".L1::evict_last" : ".L1::no_allocate");
    writer_.instruction(
        fmt::format("{}{} {}, [{}]", guard.empty() ? "" : "@" + guard + " ", op, list, address));
    return words;
}

} // namespace kiln::lowering::detail
