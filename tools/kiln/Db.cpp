// kiln db list DB | kiln db best DB [--key HASH] | kiln db merge OUT IN...
// kiln db compare DB KEY_PREDICTED KEY_MEASURED
// kiln db reach DB --reference REF_DB [--key HASH] [--within PCT]
// Reads tuning databases (scheduler/TuningDatabase.h). `list` shows each key (problem, target,
// GPU, driver, Kiln version, pipeline hash, evaluator) with its counts and best time; `best`
// shows the winner of each key (or one key) as the sweep would pick it; `merge` appends to OUT
// the records of the INs that OUT does not already have under the same key. Damaged lines are
// reported with their line numbers and skipped. `compare` says how well one key's results (the
// cost model's) rank another's (measurements): Kendall's tau over the common points and how far
// the first's best point is from the second's best. `reach` counts the candidates a sweep (its
// records in the order written) needed to come within PCT% of the best of a reference sweep
// (an exhaustive one) of the same key.
#include "Tuning.h"
#include "kiln/graph/Error.h"
#include "kiln/scheduler/CheckProvenance.h"
#include "kiln/scheduler/Compare.h"
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
    slot =
        std::make_unique<scheduler::TuningDatabase>(path, scheduler::TuningDatabase::Access::Read);
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
        fmt::print("{:<16}  {:<28}  {:<8}  {:<28}  {:<26}  {:>5}  {:>6}  {:>12}\n", "key",
                   "problem", "target", "gpu", "evaluator", "ok", "failed", "best (us)");
        for (auto const& key : db.keys()) {
            int ok = 0, failed = 0;
            for (auto const& r : db.records())
                if (r.key == key)
                    (r.status == scheduler::RecordStatus::Ok ? ok : failed) += 1;
            auto const best = db.best(key);
            fmt::print("{:<16}  {:<28}  {:<8}  {:<28}  {:<26}  {:>5}  {:>6}  {:>12}\n", key.hash(),
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
                       b ? fmt::format("{:.3f} us (spread {:.1f}%) at {}, checked: {}",
                                       b->microseconds, 100 * b->spread, pointText(b->point),
                                       scheduler::checkedBy(key.evaluator, b->extra))
                         : std::string("no successful candidate"));
        }
        if (!found && db.keys().empty())
            fail("'{}' holds no tuning records", *bestPath);
        if (!found)
            fail("no key {} in '{}' (kiln db list shows the keys)", *bestKey, *bestPath);
    });

    auto comparePath = std::make_shared<std::string>();
    auto compareKeys = std::make_shared<std::vector<std::string>>();
    auto* compare = sub->add_subcommand(
        "compare", "How well one key's results rank another's (Kendall's tau, the first's pick)");
    compare->add_option("database", *comparePath, "Tuning database (JSON Lines)")->required();
    compare->add_option("keys", *compareKeys, "KEY_PREDICTED KEY_MEASURED (kiln db list)")
        ->required()
        ->expected(2);
    compare->callback([comparePath, compareKeys] {
        std::unique_ptr<scheduler::TuningDatabase> slot;
        auto const& db = existing(slot, *comparePath);
        std::vector<scheduler::TuningRecord> sets[2];
        for (int i = 0; i < 2; ++i) {
            for (auto const& r : db.records())
                if (r.key.hash() == (*compareKeys)[std::size_t(i)])
                    sets[i].push_back(r);
            if (sets[i].empty())
                fail("no key {} in '{}' (kiln db list shows the keys)",
                     (*compareKeys)[std::size_t(i)], *comparePath);
        }
        auto const c = scheduler::compareResults(sets[0], sets[1]);
        fmt::print("{} points timed under both keys\n", c.common);
        fmt::print("Kendall's tau-b: {}\n", c.tau ? fmt::format("{:.3f}", *c.tau) : "-");
        if (c.pickRatio)
            fmt::print("the first key's best ({}) is {:.1f}% slower than the second's best ({}) "
                       "in the second's times\n",
                       pointText(c.predictedBest), 100 * (*c.pickRatio - 1),
                       pointText(c.measuredBest));
    });

    struct Reach {
        std::string path, reference, key;
        double within = 2;
    };
    auto reach = std::make_shared<Reach>();
    auto* reachCommand = sub->add_subcommand(
        "reach", "Candidates a sweep needed to come within PCT% of a reference sweep's best");
    reachCommand->add_option("database", reach->path, "The sweep's database")->required();
    reachCommand->add_option("--reference", reach->reference, "The reference (exhaustive) database")
        ->required();
    reachCommand->add_option("--key", reach->key, "The key, when the database has several");
    reachCommand->add_option("--within", reach->within, "Percent")->capture_default_str();
    reachCommand->callback([reach] {
        std::unique_ptr<scheduler::TuningDatabase> slot, referenceSlot;
        auto const& db = existing(slot, reach->path);
        auto const& reference = existing(referenceSlot, reach->reference);
        auto keys = db.keys();
        if (!reach->key.empty())
            std::erase_if(keys, [&](auto const& k) { return k.hash() != reach->key; });
        if (keys.size() != 1)
            fail("'{}' has {} keys{}; pick one with --key (kiln db list)", reach->path, keys.size(),
                 reach->key.empty() ? "" : " " + reach->key);
        auto const goalRecord = reference.best(keys.front());
        if (!goalRecord)
            fail("the reference '{}' has no successful record of key {}", reach->reference,
                 keys.front().hash());
        double const goal = goalRecord->microseconds * (1 + reach->within / 100);
        std::size_t count = 0;
        for (auto const& r : db.records()) {
            if (!(r.key == keys.front()))
                continue;
            ++count;
            if (r.status == scheduler::RecordStatus::Ok && r.microseconds <= goal) {
                fmt::print("candidate {} came within {}% of the reference best {:.3f} us: "
                           "{:.3f} us at {}\n",
                           count, reach->within, goalRecord->microseconds, r.microseconds,
                           pointText(r.point));
                return;
            }
        }
        fmt::print("none of {} candidates came within {}% of the reference best {:.3f} us\n", count,
                   reach->within, goalRecord->microseconds);
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
