#include "Subcommands.h"

#include "Tuning.h"

namespace kiln::cli {

std::span<const Subcommand> subcommands() {
    static constexpr Subcommand table[] = {
        {"translate", addTranslate}, {"interp", addInterp},
        {"lower", addLower},         {"rules", addRules},
        {"demo", addDemo},           {"arch", addArch},
        {"emit", addEmit},           {"run", addRun},
        {"tune", addTune},           {"db", addDb},
        {"worker", addWorker},       {"export", addExport},
        {"cache", addCache},
    };
    return table;
}

} // namespace kiln::cli
