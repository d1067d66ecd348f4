// libFuzzer target: Command JSON. Any input must either load or fail with a UserError that
// points into the input (line and column); an InternalError, any other exception, a crash, a
// leak or undefined behaviour is a finding. A Command that loads must also translate and
// verify, since the loader promises a valid Command.
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/graph/Verify.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    kiln::Command command;
    try {
        command = kiln::parseCommand(text, "fuzz.json");
    } catch (kiln::UserError const& e) {
        if (e.location().line <= 0 || e.location().column <= 0) {
            std::fprintf(stderr, "a UserError without a location: %s\n", e.what());
            std::abort();
        }
        return 0;
    }
    try {
        kiln::KernelGraph const graph = kiln::translate(command);
        kiln::verifyOrFail(graph);
    } catch (kiln::UserError const&) {
        // Translation may refuse what it cannot do yet; it must say so as a UserError.
    }
    return 0;
}
