// Epilogue loads issued before the loop on PTX (KernelWalker::preloadRun() offers them): the
// words of each vector load of a GEMM epilogue's bias are loaded before the K loop and held
// across it, and the epilogue converts them where it would have loaded them. Loaded after the
// loop, each staging block of the 128 x 256 wgmma tile waited on its bias: with the bias
// loaded before, fused/plain fell 1.061 -> 1.052 (H100, bench/results/2026-11-26-h100-seventh.md).
//
// Only accesses that need no test (every element inside the tensor and aligned, as in a kernel
// for known sizes) are preloaded, each once (the rows of a bias share theirs), and only while
// they hold at most kPreloadWords registers a workitem: the accumulators of that tile leave
// about 40 of the consumers' 168 (ptxas spilled at more).
#include "PtxCodegen.h"

namespace kiln::lowering::detail {

namespace {

constexpr std::size_t kPreloadWords = 32;

std::string accessKey(Id memory, ExprPtr const& offset, std::size_t width) {
    return fmt::format("{}@{}x{}", memory, toString(simplify(offset)), width);
}

} // namespace

void PtxCodegen::preload(Id memory, Placed const& places) {
    DataType const stored = tensorType(memory);
    int const bytes = sizeInBytes(stored);
    auto const& offsets = places.offsets;
    if (stored == DataType::Bool || std::any_of(places.conditions.begin(), places.conditions.end(),
                                                [](auto const& c) { return !c.empty(); }))
        return;
    std::vector<std::pair<std::size_t, std::size_t>> accesses; // start, width
    std::set<std::string> keys;
    std::size_t words = 0;
    for (std::size_t start = 0; start < offsets.size();) {
        std::size_t const width =
            accessWidth(offsets, start, static_cast<std::size_t>(16 / bytes), bytes);
        if (width == 1 ||
            !facts_.alignedWhen(offsets[start], static_cast<std::int64_t>(width)).empty())
            return; // an access that needs a test: the epilogue loads them all
        if (keys.insert(accessKey(memory, offsets[start], width)).second) {
            accesses.emplace_back(start, width);
            words += (width * static_cast<std::size_t>(bytes) + 3) / 4;
        }
        start += width;
    }
    if (accesses.empty() || preloadedWords_ + words > kPreloadWords)
        return;
    writer_.comment(fmt::format("{} loaded before the loop", graph_.coordinates.node(memory).name));
    writer_.pushScope();
    for (auto const& [start, width] : accesses)
        preloaded_[accessKey(memory, offsets[start], width)] =
            loadWords(width, stored, globalAddress(memory, offsets[start], stored), ".global", "");
    writer_.popScope();
    preloadedWords_ += words;
}

void PtxCodegen::forgetPreloads() {
    preloaded_.clear();
    preloadedWords_ = 0;
}

std::vector<std::string> const* PtxCodegen::preloaded(Id memory, ExprPtr const& offset,
                                                      std::size_t width) const {
    if (preloaded_.empty())
        return nullptr;
    auto const it = preloaded_.find(accessKey(memory, offset, width));
    return it == preloaded_.end() ? nullptr : &it->second;
}

} // namespace kiln::lowering::detail
