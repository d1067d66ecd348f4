// Subcommands.h: the table of `kiln` subcommands.
//
// Each subcommand lives in its own file and adds itself to the CLI::App through the function
// listed in Subcommands.cpp; its callback throws kiln::UserError for bad input, which Main.cpp
// turns into one message and a non-zero exit.
#pragma once

#include <span>

namespace CLI {
class App;
}

namespace kiln::cli {

/// One `kiln` subcommand: its name and the function that adds it (options, help, callback).
struct Subcommand {
    const char* name;
    void (*add)(CLI::App& app);
};

/// Every subcommand, in the order `kiln --help` lists them.
std::span<const Subcommand> subcommands();

void addTranslate(CLI::App& app);
void addInterp(CLI::App& app);
void addDemo(CLI::App& app);
void addLower(CLI::App& app);
void addRules(CLI::App& app);
void addArch(CLI::App& app);
void addEmit(CLI::App& app);
void addRun(CLI::App& app);

} // namespace kiln::cli
