// Global loads and stores of the AMDGCN code generator: addresses, lane masks in exec, vector
// accesses of consecutive elements, and values read in place.
#include "AmdgcnKernelWriter.h"
#include "kiln/graph/Simplify.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::lowering {

namespace detail {

namespace {

void addUnique(std::vector<ExprPtr>& to, std::vector<ExprPtr> const& from) {
    for (auto const& c : from)
        if (std::none_of(to.begin(), to.end(), [&](ExprPtr const& e) { return equal(e, c); }))
            to.push_back(c);
}

int elementBytes(DataType t) {
    return t == DataType::Bool ? 1 : sizeInBytes(t);
}

} // namespace

DataType AmdgcnKernelWriter::storedType(Id user) const {
    DataType const type = tensorType(user);
    if (type == DataType::Bool)
        throw UserError("tensors of bool are not supported by code generation yet");
    return type;
}

gcn::Value AmdgcnKernelWriter::address(gcn::ExpressionGenerator& gen, Id user,
                                       ExprPtr const& offset, DataType type) {
    gcn::Value const base =
        arguments_->load(graph_.coordinates.node(user).name, out_).as(DataType::I64);
    ExprPtr const bytes = simplify(offset * literal(elementBytes(type)));
    gcn::Value const o = gen.convert(gen.generate(bytes), resultType(*bytes), DataType::I64);
    gcn::Value const sum =
        b_.toVector(gen.binary(BinaryOp::Add, base, o, DataType::I64), DataType::I64);
    flush();
    return sum;
}

std::optional<gcn::Value> AmdgcnKernelWriter::mask(gcn::ExpressionGenerator& gen,
                                                   std::vector<ExprPtr> const& conditions) {
    std::optional<gcn::Value> all;
    for (auto const& c : conditions) {
        gcn::Value const m = gen.convert(gen.generate(c), resultType(*c), DataType::Bool);
        flush(); // instructions waiting in a stream keep their registers
        if (m.isLiteral() && m.literalValue() != 0)
            continue; // holds for every lane
        if (!all) {
            all = m;
            continue;
        }
        gcn::Value both = b_.newMask("a tile's mask");
        b_.op(maskOp("s_and"), {both}, {*all, m});
        all = both;
    }
    return all;
}

std::string AmdgcnKernelWriter::maskOp(std::string_view op) const {
    return std::string(op) + (context_.target().waveSize() == 64 ? "_b64" : "_b32");
}

gcn::Value AmdgcnKernelWriter::saveExec(gcn::Value const& m) {
    gcn::Value saved = b_.newMask("the saved exec mask");
    b_.op(maskOp("s_and_saveexec"), {saved}, {m}).writesImplicitly(context_.exec());
    return saved;
}

void AmdgcnKernelWriter::setExec(gcn::Value const& value) {
    b_.op(maskOp("s_mov"), {context_.exec()}, {value});
}

void AmdgcnKernelWriter::andExec(gcn::Value const& a, gcn::Value const& m) {
    b_.op(maskOp("s_and"), {context_.exec()}, {a, m});
}

void AmdgcnKernelWriter::andNotExec(gcn::Value const& a, gcn::Value const& m) {
    b_.op(maskOp("s_andn2"), {context_.exec()}, {a, m});
}

// Loads or stores every element of a held value: consecutive, aligned elements as one vector
// access of up to 16 bytes, each element guarded by its conditions. Where a vector's elements
// may not all exist, the vector access runs for the lanes where they do (exec = their mask) and
// one scalar access per element for the other lanes (skipped when there are none); loaded
// values are then picked per lane. Addresses and masks are computed before exec changes, so
// that every lane has them.
void AmdgcnKernelWriter::move(Id value, Held& held, Id memory, bool isLoad) {
    DataType const stored = storedType(memory);
    int const bytes = elementBytes(stored);
    std::size_t const count = held.elements.size();
    Placed const placed = place(value, held, memory);
    auto const& offsets = placed.offsets;
    auto const& conditions = placed.conditions;
    bool const packable = bytes >= 4 || stored == DataType::F16 || stored == DataType::BF16;
    std::size_t const widest = packable ? static_cast<std::size_t>(16 / bytes) : 1;
    gcn::ExpressionGenerator gen(b_, leaves());
    gen.reuse(&memo_);
    gcn::Value const zero = gcn::Value::literal(0, stored);
    for (std::size_t start = 0; start < count;) {
        std::size_t const width = accessWidth(offsets, start, widest, bytes);
        gcn::Value const at = address(gen, memory, offsets[start], stored);
        std::vector<std::optional<gcn::Value>> masks(width);
        std::vector<ExprPtr> all;
        for (std::size_t k = 0; k < width; ++k) {
            masks[k] = mask(gen, conditions[start + k]);
            addUnique(all, conditions[start + k]);
        }
        // Alignment the facts do not prove (a row length known at launch) is checked per lane:
        // a misaligned lane takes the scalar path.
        if (width > 1 &&
            facts_.powerOfTwoDivisor(offsets[start]) < static_cast<std::int64_t>(width))
            all.push_back(binary(BinaryOp::Equal, offsets[start] % literal(width), literal(0)));
        std::optional<gcn::Value> const every = width > 1 ? mask(gen, all) : masks[0];
        std::vector<gcn::Value> data(width);
        if (!isLoad)
            for (std::size_t k = 0; k < width; ++k)
                data[k] =
                    b_.toVector(gen.convert(held.registers[start + k], held.type, stored), stored);
        // The other lanes' scalar accesses: exec = saved & ~every, & each element's mask.
        auto scalarPath = [&](gcn::Value const& saved, auto&& access) {
            gcn::Value const rest = b_.newMask("the lanes of the scalar path");
            b_.op(maskOp("s_andn2"), {rest}, {saved, *every});
            setExec(rest);
            std::string const skip = context_.newLabel("vector_only");
            b_.op("s_cbranch_execz", {}, {gcn::Value::label(skip)});
            for (std::size_t k = 0; k < width; ++k) {
                if (masks[k])
                    andExec(rest, *masks[k]);
                else
                    setExec(rest);
                access(k);
            }
            b_.add(gcn::Instruction::label(skip));
        };
        if (width == 1) {
            std::optional<gcn::Value> saved;
            if (every)
                saved = saveExec(*every);
            if (isLoad) {
                gcn::Value v = memory_.loadGlobalValue(at, std::nullopt, stored);
                if (saved) {
                    setExec(*saved);
                    v = gen.select(*every, v, zero, stored);
                }
                setHeld(held, start, gen.convert(v, stored, held.type));
            } else {
                memory_.storeGlobalValue(at, std::nullopt, data[0], stored);
                if (saved)
                    setExec(*saved);
            }
            ++start;
            flush();
            memo_.clear();
            continue;
        }
        int const total = static_cast<int>(width) * bytes;
        if (isLoad) {
            std::optional<gcn::Value> saved;
            if (every)
                saved = saveExec(*every);
            gcn::Value const raw = memory_.loadGlobal(at, std::nullopt, total);
            std::vector<gcn::Value> scalar(width);
            if (saved) {
                scalarPath(*saved, [&](std::size_t k) {
                    scalar[k] = memory_.loadGlobalValue(at, std::nullopt, stored,
                                                        static_cast<int>(k) * bytes);
                });
                setExec(*saved);
            }
            for (std::size_t k = 0; k < width; ++k) {
                gcn::Value v = unpack(raw, k, stored);
                if (saved) {
                    gcn::Value const other =
                        masks[k] ? gen.select(*masks[k], scalar[k], zero, stored) : scalar[k];
                    v = gen.select(*every, v, other, stored);
                }
                setHeld(held, start + k, gen.convert(v, stored, held.type));
                flush();
            }
        } else {
            gcn::Value const packed = pack(data, stored);
            std::optional<gcn::Value> saved;
            if (every)
                saved = saveExec(*every);
            memory_.storeGlobal(at, std::nullopt, packed, total);
            if (saved) {
                scalarPath(*saved, [&](std::size_t k) {
                    memory_.storeGlobalValue(at, std::nullopt, data[k], stored,
                                             static_cast<int>(k) * bytes);
                });
                setExec(*saved);
            }
        }
        start += width;
        flush();
        // What this access computed stays in registers while the memo names it: a tile's
        // accesses recompute their shared parts rather than hold every address and mask.
        memo_.clear();
    }
}

// Element `k` of a vector load, as expressions compute it (f16/bf16 widened to f32).
gcn::Value AmdgcnKernelWriter::unpack(gcn::Value const& raw, std::size_t k, DataType stored) {
    int const index = static_cast<int>(k);
    switch (elementBytes(stored)) {
    case 4:
        return raw.sub(index).as(stored);
    case 8:
        return raw.sub(2 * index, 2).as(stored);
    default:
        break;
    }
    gcn::Value const word = raw.sub(index / 2);
    gcn::Value out = b_.newVector(DataType::F32, "an unpacked element");
    bool const high = index % 2 == 1;
    if (stored == DataType::F16) {
        gcn::Value half = word;
        if (high) {
            half = b_.newVector(DataType::I32, "a high half");
            b_.op("v_lshrrev_b32", {half}, {gcn::Value::literal(16), word});
        }
        b_.op("v_cvt_f32_f16", {out}, {half});
    } else if (high) { // bf16: its bits are the top half of an f32
        b_.op("v_and_b32", {out}, b_.legalize({gcn::Value::literal(0xffff0000LL), word}, true));
    } else {
        b_.op("v_lshlrev_b32", {out}, {gcn::Value::literal(16), word});
    }
    return out.as(stored);
}

// The dwords of a vector store: elements of 4 or 8 bytes as they are, 16-bit floats rounded
// and packed two to a dword.
gcn::Value AmdgcnKernelWriter::pack(std::vector<gcn::Value> const& data, DataType stored) {
    int const bytes = elementBytes(stored);
    int const dwords = static_cast<int>(data.size()) * bytes / 4;
    gcn::Value out = context_.allocateVector(DataType::I32, dwords, "the data of a vector store");
    if (bytes >= 4) {
        for (std::size_t k = 0; k < data.size(); ++k)
            copy(out.sub(static_cast<int>(k) * bytes / 4, bytes / 4), data[k]);
        return out;
    }
    for (int j = 0; j < dwords; ++j) {
        gcn::Value const& lo = data[static_cast<std::size_t>(2 * j)];
        gcn::Value const& hi = data[static_cast<std::size_t>(2 * j + 1)];
        if (stored == DataType::F16) {
            gcn::Value const a = b_.newVector(DataType::I32, "a low half");
            gcn::Value const c = b_.newVector(DataType::I32, "a high half");
            b_.op("v_cvt_f16_f32", {a}, {lo});
            b_.op("v_cvt_f16_f32", {c}, {hi});
            b_.op("v_pack_b32_f16", {out.sub(j)}, {a, c});
        } else {
            gcn::Value const a = b_.newVector(DataType::I32, "a low half");
            gcn::Value const c = b_.newVector(DataType::I32, "a high half");
            b_.op("v_lshrrev_b32", {a}, {gcn::Value::literal(16), lo});
            b_.op("v_and_b32", {c}, b_.legalize({gcn::Value::literal(0xffff0000LL), hi}, true));
            b_.op("v_or_b32", {out.sub(j)}, {a, c});
        }
    }
    return out;
}

gcn::Value AmdgcnKernelWriter::narrow(gcn::Value const& value, DataType stored) {
    if (stored != DataType::F16 && stored != DataType::BF16)
        return value;
    gcn::Value const v = b_.toVector(value, DataType::F32);
    gcn::Value out = b_.newVector(DataType::I32, "a narrowed element");
    if (stored == DataType::F16)
        b_.op("v_cvt_f16_f32", {out}, {v});
    else // already rounded to bf16: its low 16 bits are zero
        b_.op("v_lshrrev_b32", {out}, {gcn::Value::literal(16), v});
    return out;
}

// Element `offset` of a tensor, 0 in the lanes where a condition fails: the load runs with
// exec masked to the others.
gcn::Value AmdgcnKernelWriter::loadElement(Id memory, ExprPtr const& offset,
                                           std::vector<ExprPtr> const& conditions, DataType type) {
    DataType const stored = storedType(memory);
    gcn::ExpressionGenerator gen(b_, leaves());
    gen.reuse(&memo_);
    gcn::Value const at = address(gen, memory, offset, stored);
    std::optional<gcn::Value> const m = mask(gen, conditions);
    std::optional<gcn::Value> saved;
    if (m)
        saved = saveExec(*m);
    gcn::Value v = memory_.loadGlobalValue(at, std::nullopt, stored);
    if (saved) {
        setExec(*saved);
        v = gen.select(*m, v, gcn::Value::literal(0, stored), stored);
    }
    return gen.convert(v, stored, type);
}

gcn::Value AmdgcnKernelWriter::readStagedElement(Id, std::map<Id, ExprPtr> const&, DataType) {
    throw UserError("reading shared memory in place is not written yet for AMDGCN");
}

} // namespace detail

} // namespace kiln::lowering
