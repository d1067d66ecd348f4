// libFuzzer target: search space JSON. Any input must either load or fail with a UserError that
// points into the input; a space that loads is then solved for sm_90a (at most 100000 partial
// points), where it may fail only with a located UserError too (an unknown arch fact, a
// constraint that divides by zero, an empty space). Anything else is a finding.
#include "kiln/rules/ArchFacts.h"
#include "kiln/scheduler/SearchSpace.h"
#include "kiln/scheduler/Solver.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {
void check(kiln::UserError const& e) {
    if (e.location().line <= 0 || e.location().column <= 0) {
        std::fprintf(stderr, "a UserError without a location: %s\n", e.what());
        std::abort();
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    static kiln::rules::ArchFacts const arch = kiln::rules::archFacts("sm_90a");
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    std::optional<kiln::scheduler::SearchSpace> space;
    try {
        space = kiln::scheduler::parseSearchSpace(text, "fuzz.space.json");
    } catch (kiln::UserError const& e) {
        check(e);
        return 0;
    }
    try {
        kiln::scheduler::Solver const solver(*space, arch);
        std::int64_t valid = 0;
        auto const stats = solver.enumerate(
            [&](kiln::scheduler::Point const& p) {
                if (!solver.valid(p)) {
                    std::fprintf(stderr, "the solver produced an invalid point\n");
                    std::abort();
                }
                return ++valid < 1000;
            },
            100000);
        if (stats.validPoints != valid) {
            std::fprintf(stderr, "the solver miscounted its points\n");
            std::abort();
        }
    } catch (kiln::UserError const& e) {
        check(e);
    }
    return 0;
}
