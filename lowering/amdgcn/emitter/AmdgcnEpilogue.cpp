// The staged epilogue on AMD targets (EPILOGUE=1, StagedEpilogue.h): the walker stages the whole
// tile in LDS and the workgroup stores it (KernelWalkerStaged.cpp, StagingLayout.h); these are
// its instructions.
//
// - Each workitem's elements, converted to the tensor's type (f16/bf16 rounded from f32 and
//   packed two to a dword with v_pack_b32_f16 / bit operations), go to their places with one
//   ds_write of 2 to 16 bytes per group of neighbours (an MFMA fragment's registers are four rows
//   of one column: ds_write_b16 each; a SIMT register tile's row: ds_write_b64 or _b128).
// - Each run of the store is one ds_read of up to 16 bytes and one global_store of the same
//   bytes (global_store_dwordx4 for 8 f16 where the row's address is 16-byte aligned: checked
//   per lane where the row length is known only at launch), with exec = the lanes whose whole
//   run lies inside the tensor and is aligned; the other lanes (a ragged M or N, a misaligned
//   row) store element by element, each under its own mask, skipped when no lane needs it. The
//   conditions are a direct store's: an element is stored where it lies inside the tensor.
// - The tile reuses the LDS of the main loop from byte 0: the descriptor's and the manifest's
//   LDS is the larger of the two (finishStaging()).
#include "AmdgcnKernelWriter.h"
#include "kiln/graph/Simplify.h"
#include "kiln/lowering/StagedEpilogue.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::lowering::detail {

namespace {

int elementBytes(DataType t) {
    return t == DataType::Bool ? 1 : sizeInBytes(t);
}

void addUnique(std::vector<ExprPtr>& to, std::vector<ExprPtr> const& from) {
    for (auto const& c : from)
        if (std::none_of(to.begin(), to.end(), [&](ExprPtr const& e) { return equal(e, c); }))
            to.push_back(c);
}

} // namespace

std::int64_t AmdgcnKernelWriter::stagedBlockColumns(Id memory) const {
    if (!stagedEpilogue(options_.schedule))
        return 0;
    DataType const stored = storedType(memory);
    if (elementBytes(stored) < 4 && stored != DataType::F16 && stored != DataType::BF16)
        throw UserError(fmt::format("EPILOGUE=1 stages f16, bf16 and 32- or 64-bit results in "
                                    "LDS; {} is {}: use EPILOGUE=0",
                                    graph_.coordinates.node(memory).name, name(stored)));
    return kWholeTile;
}

std::pair<gcn::Value, int> AmdgcnKernelWriter::stagingAddress(SharedBases& bases,
                                                              ExprPtr const& bytes) {
    if (auto const near = nearbyBase(bases, bytes);
        near && near->second >= 0 && near->second < 65536)
        return {near->first, static_cast<int>(near->second)};
    gcn::ExpressionGenerator gen(b_, leaves());
    gen.reuse(&memo_);
    gcn::Value const wide = gen.convert(gen.generate(bytes), resultType(*bytes), DataType::I64);
    gcn::Value const address = b_.toVector(gcn::Builder::low(wide), DataType::I32);
    bases.emplace_back(bytes, address);
    return {address, 0};
}

void AmdgcnKernelWriter::writeStagingElements(ExprPtr const& address, Held const& held,
                                              std::vector<std::size_t> const& which,
                                              DataType stored) {
    if (stagingWrites_.empty() && wholeTile_)
        b_.add(gcn::Instruction::comment(fmt::format(
            "the result's tile staged in LDS: {} rows of {} bytes (a pitch of {}), {} cycles "
            "lost to bank conflicts",
            wholeTile_->rows, wholeTile_->columns * wholeTile_->elementBytes, wholeTile_->pitch,
            wholeTile_->conflictCycles)));
    gcn::ExpressionGenerator gen(b_, leaves());
    gen.reuse(&memo_);
    std::vector<gcn::Value> data;
    // f16 is rounded once, by the v_cvt_f16_f32 that narrows it (rounding to f16 in f32 first,
    // as an expression's convert does, gives the same bits); bf16 is rounded in f32, then its
    // high half taken.
    DataType const computing = stored == DataType::F16 ? DataType::F32 : stored;
    for (std::size_t c : which)
        data.push_back(b_.toVector(gen.convert(held.registers[c], held.type, computing), stored));
    auto const [at, offset] = stagingAddress(stagingWrites_, address);
    int const bytes = static_cast<int>(which.size()) * elementBytes(stored);
    memory_.storeLds(at, which.size() == 1 ? narrow(data[0], stored) : pack(data, stored), bytes,
                     offset);
    flush();
    memo_.clear();
}

void AmdgcnKernelWriter::copyStagedRun(Id memory, ExprPtr const& from, ExprPtr const& offset,
                                       std::size_t width,
                                       std::vector<std::vector<ExprPtr>> const& conditions,
                                       std::vector<ExprPtr> const& tail) {
    DataType const stored = storedType(memory);
    int const bytes = elementBytes(stored), total = static_cast<int>(width) * bytes;
    gcn::ExpressionGenerator gen(b_, leaves());
    gen.reuse(&memo_);
    // Addresses and masks first, while every lane is active.
    auto const [lds, ldsOffset] = stagingAddress(stagingReads_, from);
    gcn::Value const at = address(gen, memory, offset, stored);
    std::optional<gcn::Value> const some = mask(gen, tail);
    // The whole run where its last element lies inside (IndexFacts::strongest) and its address
    // is aligned (IndexFacts::alignedWhen: a row length a multiple of the run, known at launch).
    std::vector<ExprPtr> all;
    for (std::size_t k = 0; k < width; ++k)
        addUnique(all, conditions[k]);
    all = IndexFacts::strongest(all);
    if (width > 1)
        addUnique(all, facts_.alignedWhen(offset, static_cast<std::int64_t>(width)));
    std::optional<gcn::Value> const every = mask(gen, all);

    // exec = the lanes with a run (`lanes`), then those whose run goes whole.
    std::optional<gcn::Value> saved, lanes;
    if (some) {
        saved = saveExec(*some);
        lanes = b_.newMask("the lanes with a run");
        b_.op(maskOp("s_and"), {*lanes}, {*saved, *some});
    }
    gcn::Value const raw = memory_.loadLds(lds, total, ldsOffset);
    if (every) {
        if (!saved) {
            saved = saveExec(*every);
            lanes = saved;
        } else {
            andExec(*lanes, *every);
        }
    }
    memory_.storeGlobal(at, std::nullopt, raw, total);
    if (every) {
        // The other lanes' elements one by one, each where it lies inside the tensor.
        gcn::Value const rest = b_.newMask("the lanes of the edge path");
        b_.op(maskOp("s_andn2"), {rest}, {*lanes, *every});
        setExec(rest);
        std::string const skip = context_.newLabel("whole_runs_only");
        b_.op("s_cbranch_execz", {}, {gcn::Value::label(skip)});
        int const perDword = bytes < 4 ? 4 / bytes : 1;
        // Each element's mask computed here, for these lanes only: from what the run computed
        // for every lane (a copy of the memo), and nothing computed under this exec is reused
        // outside it.
        gcn::ExpressionGenerator::Memo edgeMemo = memo_;
        gcn::ExpressionGenerator edge(b_, leaves());
        edge.reuse(&edgeMemo);
        for (std::size_t k = 0; k < width; ++k) {
            int const index = static_cast<int>(k);
            setExec(rest);
            if (auto const m = mask(edge, conditions[k]))
                andExec(rest, *m);
            gcn::Value element =
                bytes >= 4 ? raw.sub(index * bytes / 4, bytes / 4) : raw.sub(index / perDword);
            if (int const shift = index % perDword * bytes * 8; bytes < 4 && shift > 0) {
                gcn::Value const moved = b_.newVector(DataType::I32, "an element's bits");
                b_.op("v_lshrrev_b32", {moved}, {gcn::Value::literal(shift), element});
                element = moved;
            }
            memory_.storeGlobal(at, std::nullopt, element, bytes, index * bytes);
        }
        b_.add(gcn::Instruction::label(skip));
    }
    if (saved)
        setExec(*saved);
    flush();
    memo_.clear();
}

void AmdgcnKernelWriter::finishStaging() {
    if (stagingBytes_ == 0)
        return;
    if (reductionScratchBytes(graph_, shape_) > 0)
        throw UserError("EPILOGUE=1 stages the result where the workgroup's other LDS lies, the "
                        "scratch of a cooperative Reduce included; a kernel with one is not "
                        "staged: use EPILOGUE=0");
    std::size_t const bytes = std::max(shared_.bytes, static_cast<std::size_t>(stagingBytes_));
    auto const lds = gcn::Target::named(kernel_.target).arch().fact("shared_bytes");
    if (lds && static_cast<std::int64_t>(bytes) > *lds)
        throw UserError(fmt::format("EPILOGUE=1 stages the result's tile in {} bytes of LDS; {} "
                                    "has {}: use EPILOGUE=0 or a smaller tile",
                                    stagingBytes_, kernel_.target, *lds));
    kernel_.sharedBytes = bytes;
    asm_.setLdsBytes(static_cast<int>(bytes));
}

} // namespace kiln::lowering::detail
