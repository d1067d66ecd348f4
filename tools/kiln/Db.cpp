// kiln db list DB | kiln db best DB [--key HASH] | kiln db merge OUT IN...
// Reads tuning databases (scheduler/TuningDatabase.h). `list` shows each key (problem, target,
// GPU, driver, Kiln version, pipeline hash, evaluator) with its counts and best time; `best`
// shows the winner of each key (or one key) as the sweep would pick it; `merge` appends to OUT
// the records of the INs that OUT does not already have under the same key. Damaged lines are
// reported with their line numbers and skipped.
#include "Tuning.h"
#include "kiln/graph/Error.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/core.h>

namespace kiln::cli {

namespace {

void warn(scheduler::TuningDatabase const& db) {
    for (auto const& p : db.problems())
        fmt::print(stderr, "{}:{}: warning: skipped: {}\n", db.path(), p.line, p.message);
}

std::string pointText(std::map<std::string, std::int64_t> const& point) {
    std::string s;
    for (auto const& [k, v] : point)
        s += fmt::format("{}{}={}", s.empty() ? "" : ",", k, v);
    return s;
}

scheduler::TuningDatabase const& existing(std::unique_ptr<scheduler::TuningDatabase>& slot,
                                          std::string const& path) {
    if (!std::filesystem::exists(path))
        fail("no tuning database at '{}'", path);
    slot = std::make_unique<scheduler::TuningDatabase>(path);
    warn(*slot);
    return *slot;
}

} // namespace

void addDb(CLI::App& app) {
    auto* sub = app.add_subcommand("db", "List, query and merge tuning databases");
    sub->require_subcommand(1);

    auto listPath = std::make_shared<std::string>();
    auto* list = sub->add_subcommand("list", "Each key of a database: counts and best time");
    list->add_option("database", *listPath, "Tuning database (JSON Lines)")->required();
    list->callback([listPath] {
        std::unique_ptr<scheduler::TuningDatabase> slot;
        auto const& db = existing(slot, *listPath);
        fmt::print("{:<16}  {:<28}  {:<8}  {:<24}  {:<22}  {:>5}  {:>6}  {:>12}\n", "key",
                   "problem", "target", "gpu", "evaluator", "ok", "failed", "best (us)");
        for (auto const& key : db.keys()) {
            int ok = 0, failed = 0;
            for (auto const& r : db.records())
                if (r.key == key)
                    (r.status == scheduler::RecordStatus::Ok ? ok : failed) += 1;
            auto const best = db.best(key);
            fmt::print("{:<16}  {:<28}  {:<8}  {:<24}  {:<22}  {:>5}  {:>6}  {:>12}\n", key.hash(),
                       key.summary, key.target, key.gpu, key.evaluator, ok, failed,
                       best ? fmt::format("{:.3f}", best->microseconds) : "-");
        }
    });

    auto bestPath = std::make_shared<std::string>();
    auto bestKey = std::make_shared<std::string>();
    auto* best = sub->add_subcommand("best", "The winner of each key (near-ties broken stably)");
    best->add_option("database", *bestPath, "Tuning database (JSON Lines)")->required();
    best->add_option("--key", *bestKey, "Only this key (its hash, as `kiln db list` prints)");
    best->callback([bestPath, bestKey] {
        std::unique_ptr<scheduler::TuningDatabase> slot;
        auto const& db = existing(slot, *bestPath);
        bool found = false;
        for (auto const& key : db.keys()) {
            if (!bestKey->empty() && key.hash() != *bestKey)
                continue;
            found = true;
            auto const b = db.best(key);
            fmt::print("{}  {} on {} ({}): {}\n", key.hash(), key.summary, key.target,
                       key.evaluator,
                       b ? fmt::format("{:.3f} us (spread {:.1f}%) at {}", b->microseconds,
                                       100 * b->spread, pointText(b->point))
                         : std::string("no successful candidate"));
        }
        if (!found)
            fail("no key {} in '{}' (kiln db list shows the keys)", *bestKey, *bestPath);
    });

    auto mergeOut = std::make_shared<std::string>();
    auto mergeIn = std::make_shared<std::vector<std::string>>();
    auto* merge = sub->add_subcommand("merge", "Append to OUT the records of INs it lacks");
    merge->add_option("out", *mergeOut, "Database to append to (created when missing)")->required();
    merge->add_option("in", *mergeIn, "Databases to read")->required();
    merge->callback([mergeOut, mergeIn] {
        scheduler::TuningDatabase out(*mergeOut);
        warn(out);
        std::size_t added = 0, skipped = 0;
        for (auto const& path : *mergeIn) {
            std::unique_ptr<scheduler::TuningDatabase> slot;
            auto const& in = existing(slot, path);
            for (auto const& r : in.records()) {
                if (out.find(r.key, r.point)) {
                    ++skipped;
                    continue;
                }
                out.append(r);
                ++added;
            }
        }
        fmt::print("{}: added {} records, {} already there\n", *mergeOut, added, skipped);
    });
}

} // namespace kiln::cli
