// libFuzzer target: KernelGraph JSON. Any input must either load or fail with a UserError that
// points into the input; anything else is a finding. A graph that loads must save to a text
// that loads again and saves to the same text (the round-trip promise of GraphJson.h).
#include "kiln/graph/GraphJson.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    std::string saved;
    try {
        saved = kiln::saveGraph(kiln::parseGraph(text, "fuzz.json"));
    } catch (kiln::UserError const& e) {
        if (e.location().line <= 0 || e.location().column <= 0) {
            std::fprintf(stderr, "a UserError without a location: %s\n", e.what());
            std::abort();
        }
        return 0;
    }
    try {
        std::string const again = kiln::saveGraph(kiln::parseGraph(saved, "saved.json"));
        if (again != saved) {
            std::fprintf(stderr, "save(load(save(g))) != save(g):\n%s\n---\n%s\n", saved.c_str(),
                         again.c_str());
            std::abort();
        }
    } catch (kiln::UserError const& e) {
        std::fprintf(stderr, "a saved graph does not load: %s\n%s\n", e.what(), saved.c_str());
        std::abort();
    }
    return 0;
}
