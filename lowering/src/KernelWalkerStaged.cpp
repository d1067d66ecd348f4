// A staged store without a copy engine (EPILOGUE=1 on AMD targets; StagingLayout.h): the tile
// held whole in shared memory, written by each workitem, then stored by the workgroup.
//
//     barrier                          every workitem done with the shared memory the tile reuses
//     each workitem: its elements, converted to the tensor's type, to their places (neighbours
//                    along a row in one access of up to 16 bytes), chunk by chunk as computed
//     barrier                          the whole tile written
//     each round: each workitem one run of up to 16 bytes of a row, read from shared memory and
//                 stored with one access where all its elements lie inside the tensor and the
//                 address is aligned, element by element at the edges (the direct store's
//                 conditions: inside the tensor)
//     (the barrier between tiles, betweenTiles(), before the next tile's writes)
//
// The tile starts at byte 0: the main loop's staged operands are dead once its last barrier is
// passed, so the tile takes max(the operands, the tile), not their sum. The target writes two
// things only: writeStagingElements() and copyStagedRun().
#include "KernelWalker.h"
#include "kiln/amdgcn/Register.h"
#include "kiln/arch-db/ArchLibrary.h"

#include <fmt/format.h>

namespace kiln::lowering::detail {

template <class Register>
BankModel KernelWalker<Register>::bankModel() const {
    arch::Arch const& arch = arch::ArchLibrary::get(options_.target);
    BankModel banks;
    banks.banks = static_cast<std::int64_t>(arch.fact("shared_banks").value_or(32));
    banks.bankBytes = static_cast<std::int64_t>(arch.fact("shared_bank_bytes").value_or(4));
    banks.lanes = kLaneGroup;
    return banks;
}

template <class Register>
void KernelWalker<Register>::beginStagedBlock(StagedTile const& tile, std::size_t) {
    KILN_ASSERT(tile.blocks() == 1, "{}a staged tile of {} blocks is written whole", notWritten_,
                tile.blocks());
    wholeTile_.reset(); // laid out at the first write, which knows the tensor's type
    barrier();
}

template <class Register>
void KernelWalker<Register>::writeStaged(StagedTile const& tile, Held<Register> const& held,
                                         std::vector<std::size_t> const& which, Id memory) {
    DataType const stored = tensorType(memory);
    std::int64_t const bytes = sizeInBytes(stored);
    if (!wholeTile_) {
        wholeTile_ = stagingLayout(tile, facts_, shape_, bytes, 0, bankModel());
        stagingBytes_ = std::max(stagingBytes_, wholeTile_->bytes());
    }
    for (StagingWrite const& write : stagingWrites(tile, facts_, which, bytes)) {
        std::size_t const first = which[write.first];
        std::vector<std::size_t> const elements(
            which.begin() + static_cast<std::ptrdiff_t>(write.first),
            which.begin() + static_cast<std::ptrdiff_t>(write.first + write.count));
        writeStagingElements(wholeTile_->at(tile.inner[first], tile.outer[first]), held, elements,
                             stored);
    }
}

template <class Register>
void KernelWalker<Register>::endStagedBlock(StagedTile const& tile, std::size_t, Id memory) {
    KILN_ASSERT(wholeTile_.has_value(), "{}a staged tile stored before it is written", notWritten_);
    barrier();
    auto const geometry = tensorGeometry(graph_, graph_.coordinates.node(memory).name);
    KILN_ASSERT(geometry.has_value(), "a staged tile of a tensor without its geometry");
    for (CooperativeRound const& round :
         cooperativeRounds(tile, *wholeTile_, *geometry, shape_, facts_)) {
        copyStagedRun(memory, round.from, round.offset,
                      static_cast<std::size_t>(wholeTile_->runElements), round.conditions,
                      round.tail);
        settle();
    }
}

template <class Register>
void KernelWalker<Register>::writeStagingElements(ExprPtr const&, Held<Register> const&,
                                                  std::vector<std::size_t> const&, DataType) {
    throw UserError(fmt::format("{}a store staged through shared memory without the copy "
                                "engine is not written yet",
                                notWritten_));
}

template <class Register>
void KernelWalker<Register>::copyStagedRun(Id, ExprPtr const&, ExprPtr const&, std::size_t,
                                           std::vector<std::vector<ExprPtr>> const&,
                                           std::vector<ExprPtr> const&) {
    throw UserError(fmt::format("{}a store staged through shared memory without the copy "
                                "engine is not written yet",
                                notWritten_));
}

#define KILN_STAGED_INSTANTIATE(Register)                                                          \
    template BankModel KernelWalker<Register>::bankModel() const;                                  \
    template void KernelWalker<Register>::beginStagedBlock(StagedTile const&, std::size_t);        \
    template void KernelWalker<Register>::writeStaged(StagedTile const&, Held<Register> const&,    \
                                                      std::vector<std::size_t> const&, Id);        \
    template void KernelWalker<Register>::endStagedBlock(StagedTile const&, std::size_t, Id);      \
    template void KernelWalker<Register>::writeStagingElements(                                    \
        ExprPtr const&, Held<Register> const&, std::vector<std::size_t> const&, DataType);         \
    template void KernelWalker<Register>::copyStagedRun(                                           \
        Id, ExprPtr const&, ExprPtr const&, std::size_t, std::vector<std::vector<ExprPtr>> const&, \
        std::vector<ExprPtr> const&);
KILN_STAGED_INSTANTIATE(std::string)
KILN_STAGED_INSTANTIATE(amdgcn::Value)
#undef KILN_STAGED_INSTANTIATE

} // namespace kiln::lowering::detail
