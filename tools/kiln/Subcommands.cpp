#include "Subcommands.h"

namespace kiln::cli {

std::span<const Subcommand> subcommands() {
    static constexpr Subcommand table[] = {
        {"translate", addTranslate},
    };
    return table;
}

} // namespace kiln::cli
