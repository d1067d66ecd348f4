// Tuning.h: the subcommands of tuning, added to the table in Subcommands.cpp.
//   kiln tune    sweep a search space, record every candidate, report, export the winner
//   kiln db      list, best and merge tuning databases
//   kiln export  write a winner's kernel, manifest and C++ header
//   kiln worker  the child processes of a sweep (compile one candidate; measure candidates)
//   kiln cache   where the compile cache is and how much it holds; clear it
#pragma once

namespace CLI {
class App;
}

namespace kiln::cli {

void addTune(CLI::App& app);
void addDb(CLI::App& app);
void addWorker(CLI::App& app);
void addExport(CLI::App& app);
void addCache(CLI::App& app);

} // namespace kiln::cli
