// The tuning database: records round-trip, keys never mix, damaged lines are reported with
// their numbers and skipped, a torn last line does not swallow the next record, and near-ties
// are broken the same way every time.
#include "kiln/scheduler/TuningDatabase.h"

#include "kiln/graph/Error.h"
#include "kiln/scheduler/Compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace kiln::scheduler;
namespace fs = std::filesystem;

namespace {

fs::path freshFile(std::string const& name) {
    fs::path const dir = fs::temp_directory_path() / fmt::format("kiln-db-{}-{}", name, ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir / "tuning.jsonl";
}

TuningKey key(std::string problem = R"({"sizes":{"M":64}})") {
    return {problem, "gemm 64", "sm_90a", "NVIDIA H100", "12040", "0.1.0", "abc", "measured:cuda"};
}

TuningRecord ok(std::map<std::string, std::int64_t> point, double us, double spread = 0,
                TuningKey k = key()) {
    TuningRecord r;
    r.key = std::move(k);
    r.point = std::move(point);
    r.microseconds = us;
    r.spread = spread;
    r.samples = 10;
    return r;
}

} // namespace

TEST(TuningDatabase, RecordsRoundTripAndAreFoundOnlyUnderTheirKey) {
    fs::path const file = freshFile("roundtrip");
    {
        TuningDatabase db(file.string());
        db.append(ok({{"MT_M", 64}}, 12.5, 0.02));
        TuningRecord failed;
        failed.key = key();
        failed.point = {{"MT_M", 128}};
        failed.status = RecordStatus::Failed;
        failed.stage = "crash";
        failed.error = "the worker died: killed by SIGSEGV (Segmentation fault)";
        db.append(failed);
        db.append(ok({{"MT_M", 64}}, 99, 0, key(R"({"sizes":{"M":128}})")));
    }
    TuningDatabase const db(file.string());
    ASSERT_EQ(db.records().size(), 3u);
    EXPECT_TRUE(db.problems().empty());
    TuningRecord const* r = db.find(key(), {{"MT_M", 64}});
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->microseconds, 12.5);
    EXPECT_EQ(r->spread, 0.02);
    EXPECT_EQ(r->samples, 10);
    TuningRecord const* f = db.find(key(), {{"MT_M", 128}});
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->status, RecordStatus::Failed);
    EXPECT_EQ(f->stage, "crash");
    // Another shape, another target, another driver: never the same record.
    EXPECT_EQ(db.find(key(R"({"sizes":{"M":128}})"), {{"MT_M", 64}})->microseconds, 99);
    TuningKey other = key();
    other.target = "sm_80";
    EXPECT_EQ(db.find(other, {{"MT_M", 64}}), nullptr);
    other = key();
    other.driver = "12050";
    EXPECT_EQ(db.find(other, {{"MT_M", 64}}), nullptr);
    EXPECT_EQ(db.keys().size(), 2u);
    EXPECT_EQ(db.best(key())->point, (std::map<std::string, std::int64_t>{{"MT_M", 64}}));
    fs::remove_all(file.parent_path());
}

TEST(TuningDatabase, DamagedLinesAreReportedWithTheirNumbersAndSkipped) {
    fs::path const file = freshFile("damaged");
    std::string const good = ok({{"MT_M", 16}}, 5).toJson();
    {
        std::ofstream out(file);
        out << good << "\n"
            << "this is not json\n"
            << "\n"
            << R"({"key": "x"})"
            << "\n"
            << good << "\n"
            << good.substr(0, 40); // torn: its writer was killed mid-line
    }
    TuningDatabase db(file.string());
    EXPECT_EQ(db.records().size(), 2u);
    ASSERT_EQ(db.problems().size(), 3u);
    EXPECT_EQ(db.problems()[0].line, 2);
    EXPECT_EQ(db.problems()[0].message, "not a JSON value (a torn or damaged line)");
    EXPECT_EQ(db.problems()[1].line, 4);
    EXPECT_EQ(db.problems()[1].message,
              "not a tuning record: [json.exception.out_of_range.403] key 'key_fields' not found");
    EXPECT_EQ(db.problems()[2].line, 6);
    EXPECT_EQ(db.problems()[2].message,
              "a torn last line (its writer was killed): not a JSON value (a torn or damaged "
              "line)");
    // The next record starts on a line of its own.
    db.append(ok({{"MT_M", 32}}, 7));
    TuningDatabase const again(file.string());
    EXPECT_EQ(again.records().size(), 3u);
    EXPECT_EQ(again.problems().size(), 3u);
    EXPECT_EQ(again.problems()[2].line, 6);
    EXPECT_EQ(again.records().back().point.at("MT_M"), 32);
    fs::remove_all(file.parent_path());
}

TEST(TuningDatabase, ARecordWhoseKeyHashDisagreesIsRejected) {
    fs::path const file = freshFile("hash");
    std::string line = ok({{"MT_M", 16}}, 5).toJson();
    line.replace(line.find("sm_90a"), 6, "sm_80 ");
    std::ofstream(file) << line << "\n";
    TuningDatabase const db(file.string());
    EXPECT_TRUE(db.records().empty());
    ASSERT_EQ(db.problems().size(), 1u);
    EXPECT_EQ(db.problems()[0].message, "its \"key\" does not match its \"key_fields\"");
    fs::remove_all(file.parent_path());
}

TEST(BestOf, NearTiesWithinTheNoiseGoToTheSmallerPointWhateverTheOrder) {
    // 100.0 and 100.8 differ by less than their 2% spread: a tie, won by MT_M=32 (smaller).
    std::vector<TuningRecord> records = {ok({{"MT_M", 64}}, 100.0, 0.02),
                                         ok({{"MT_M", 32}}, 100.8, 0.02),
                                         ok({{"MT_M", 16}}, 110.0, 0.02)};
    EXPECT_EQ(bestOf(records)->point.at("MT_M"), 32);
    std::reverse(records.begin(), records.end());
    EXPECT_EQ(bestOf(records)->point.at("MT_M"), 32);
    // Without noise the fastest wins.
    records = {ok({{"MT_M", 64}}, 100.0), ok({{"MT_M", 32}}, 100.8)};
    EXPECT_EQ(bestOf(records)->point.at("MT_M"), 64);
    EXPECT_FALSE(bestOf({}));
}

TEST(TuningKey, HashCoversEveryComparedField) {
    TuningKey const k = key();
    EXPECT_EQ(k.hash().size(), 16u);
    EXPECT_EQ(k.hash(), key().hash());
    TuningKey summaryOnly = k;
    summaryOnly.summary = "another summary";
    EXPECT_EQ(summaryOnly.hash(), k.hash());
    for (auto field : {&TuningKey::problem, &TuningKey::target, &TuningKey::gpu, &TuningKey::driver,
                       &TuningKey::kiln, &TuningKey::pipeline, &TuningKey::evaluator}) {
        TuningKey changed = k;
        changed.*field += "x";
        EXPECT_NE(changed.hash(), k.hash());
        EXPECT_FALSE(changed == k);
    }
}

TEST(Compare, KendallTauAndTheModelsPick) {
    EXPECT_DOUBLE_EQ(*kendallTau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    EXPECT_DOUBLE_EQ(*kendallTau({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0);
    // One discordant pair of six: (4 - 1) ... 5 concordant, 1 discordant -> 4/6.
    EXPECT_DOUBLE_EQ(*kendallTau({1, 2, 3, 4}, {1, 3, 2, 4}), 4.0 / 6.0);
    // tau-b with a tie in x: pairs (1,2) tie in x; C = 5, D = 0, ties x = 1 -> 5 / sqrt(6 * 5).
    EXPECT_DOUBLE_EQ(*kendallTau({1, 1, 2, 3}, {1, 2, 3, 4}), 5.0 / std::sqrt(30.0));
    EXPECT_FALSE(kendallTau({1}, {1}));
    EXPECT_FALSE(kendallTau({1, 1}, {1, 2}));

    std::vector<TuningRecord> const model = {ok({{"A", 1}}, 10), ok({{"A", 2}}, 20),
                                             ok({{"A", 3}}, 30), ok({{"A", 4}}, 5)};
    std::vector<TuningRecord> const measured = {ok({{"A", 1}}, 100), ok({{"A", 2}}, 200),
                                                ok({{"A", 3}}, 300), ok({{"A", 5}}, 1)};
    Comparison const c = compareResults(model, measured);
    EXPECT_EQ(c.common, 3u); // A=4 was not measured, A=5 not predicted
    EXPECT_DOUBLE_EQ(*c.tau, 1.0);
    EXPECT_EQ(c.predictedBest.at("A"), 1);
    EXPECT_DOUBLE_EQ(*c.pickRatio, 1.0);
    std::vector<TuningRecord> const other = {ok({{"A", 1}}, 150), ok({{"A", 2}}, 100),
                                             ok({{"A", 3}}, 300)};
    EXPECT_DOUBLE_EQ(*compareResults(model, other).pickRatio, 1.5);
}

// A record's numbers are what they say: a positive, finite time; a spread not below zero; a
// count of repetitions that is a whole number an int holds (1e300 was undefined behaviour to
// convert); parameters that are 64-bit integers (1.5 would have been read as 1, 2^64 - 1 as -1);
// numbers, not true or false (read as 1 and 0).
TEST(TuningDatabase, RecordsWithImpossibleNumbersAreReportedAndSkipped) {
    fs::path const file = freshFile("numbers");
    std::string good;
    {
        TuningDatabase db(file.string());
        db.append(ok({{"MT_M", 64}}, 12.5));
        good = db.records()[0].toJson();
    }
    auto const with = [&](std::string const& from, std::string const& to) {
        std::string line = good;
        line.replace(line.find(from), from.size(), to);
        return line;
    };
    std::ofstream(file, std::ios::app)
        << with("\"us\":12.5", "\"us\":-3.0") << "\n"
        << with("\"us\":12.5", "\"us\":null") << "\n"
        << with("\"spread\":0.0", "\"spread\":-1.0") << "\n"
        << with("{\"MT_M\":64}", "{\"MT_M\":64.5}") << "\n"
        << with("{\"MT_M\":64}", "{\"MT_M\":18446744073709551615}") << "\n"
        << with("\"samples\":10", "\"samples\":1e300") << "\n"
        << with("\"samples\":10", "\"samples\":-1") << "\n"
        << with("\"us\":12.5", "\"us\":true") << "\n";
    TuningDatabase const db(file.string(), TuningDatabase::Access::Read);
    EXPECT_EQ(db.records().size(), 1u);
    ASSERT_EQ(db.problems().size(), 8u);
    EXPECT_EQ(db.problems()[0].line, 2);
    EXPECT_EQ(db.problems()[0].message, "\"us\" is -3.0, not a positive time");
    EXPECT_EQ(db.problems()[1].message, "\"us\" is null, not a number");
    EXPECT_EQ(db.problems()[2].message, "\"spread\" is negative or not finite");
    EXPECT_EQ(db.problems()[3].message, "parameter 'MT_M' is 64.5, not a 64-bit integer");
    EXPECT_EQ(db.problems()[4].message,
              "parameter 'MT_M' is 18446744073709551615, not a 64-bit integer");
    EXPECT_EQ(db.problems()[5].message, "\"samples\" is 1e+300, not a count of repetitions");
    EXPECT_EQ(db.problems()[6].message, "\"samples\" is -1, not a count of repetitions");
    EXPECT_EQ(db.problems()[7].message, "\"us\" is true, not a number");
    fs::remove_all(file.parent_path());
}

// Two points whose names would print alike ("a=1;b" = 2 and a = 1, b = 2) are two records, and
// so are two keys whose fields join alike (the same hash): each is found under its own key and
// point (FuzzTuningDatabase's checks caught it on a crafted input).
TEST(TuningDatabase, KeysAndPointsThatPrintAlikeAreNotMixedUp) {
    fs::path const file = freshFile("alike");
    TuningKey shifted = key("p\x1fsm_90a"), other = key("p");
    other.target = "sm_90a\x1fsm_90a";
    ASSERT_EQ(shifted.hash(), other.hash());
    {
        TuningDatabase db(file.string());
        db.append(ok({{"a", 1}, {"b", 2}}, 10));
        db.append(ok({{"a=1;b", 2}}, 20));
        db.append(ok({{"a", 1}}, 30, 0, shifted));
        db.append(ok({{"a", 1}}, 40, 0, other));
    }
    TuningDatabase const db(file.string(), TuningDatabase::Access::Read);
    ASSERT_EQ(db.records().size(), 4u);
    auto const time = [&](TuningKey const& k, std::map<std::string, std::int64_t> const& point) {
        auto const* r = db.find(k, point);
        return r ? r->microseconds : 0.0;
    };
    EXPECT_EQ(time(key(), {{"a", 1}, {"b", 2}}), 10);
    EXPECT_EQ(time(key(), {{"a=1;b", 2}}), 20);
    EXPECT_EQ(time(shifted, {{"a", 1}}), 30);
    EXPECT_EQ(time(other, {{"a", 1}}), 40);
    fs::remove_all(file.parent_path());
}

// `kiln db list` and `best` only read: opened to read, a database is never written, not even
// to end a torn last line.
TEST(TuningDatabase, OpenedToReadItIsNeverWritten) {
    fs::path const file = freshFile("readonly");
    {
        TuningDatabase db(file.string());
        db.append(ok({{"MT_M", 64}}, 12.5));
    }
    std::ofstream(file, std::ios::app) << "{\"torn";
    auto const size = fs::file_size(file);
    auto const time = fs::last_write_time(file);
    TuningDatabase const db(file.string(), TuningDatabase::Access::Read);
    EXPECT_EQ(db.records().size(), 1u);
    EXPECT_EQ(fs::file_size(file), size);
    EXPECT_EQ(fs::last_write_time(file), time);
    EXPECT_THROW(TuningDatabase(file.string() + ".missing", TuningDatabase::Access::Read),
                 kiln::UserError);
    EXPECT_FALSE(fs::exists(file.string() + ".missing"));
    fs::remove_all(file.parent_path());
}

// The noise of a median shrinks with its samples: the layer norm sweep's 87.94 us (spread 1.6%)
// and 88.80 us (1.0%), 100 samples each, are 0.86 us apart, more than twice the 0.08 us
// standard error of their difference, so the fastest wins; with 3 samples each (0.47 us) they
// tie, and the smaller point does.
TEST(BestOf, TheGapOfATieShrinksWithTheSamplesOfEachMedian) {
    TuningRecord fast = ok({{"LANES", 256}}, 87.94, 0.016),
                 slow = ok({{"LANES", 128}}, 88.80, 0.010);
    fast.samples = slow.samples = 100;
    EXPECT_EQ(bestOf({fast, slow})->point.at("LANES"), 256);
    fast.samples = slow.samples = 3;
    EXPECT_EQ(bestOf({fast, slow})->point.at("LANES"), 128);
    fast.samples = 0; // a record without a count: within the smaller spread (0.88 us)
    EXPECT_EQ(bestOf({fast, slow})->point.at("LANES"), 128);
}

// A slow point timed by few samples, one of them far off, has an uncertain median; it is not
// thereby as fast as the fastest (a layer norm sweep chose 137.5 us over 87.8 this way).
TEST(BestOf, ASlowPointOfFewNoisySamplesDoesNotTieWithTheFastest) {
    TuningRecord fast = ok({{"LANES", 256}, {"VEC", 8}}, 87.78, 0.019),
                 slow = ok({{"LANES", 256}, {"VEC", 4}}, 137.52, 1.0);
    fast.samples = 100;
    slow.samples = 3;
    EXPECT_EQ(bestOf({fast, slow})->point.at("VEC"), 8);
}

// Where a sweep measured its finalists again, they alone compete: a point measured once, in a
// batch, neither beats them by a lucky median nor ties with them (the layer norm sweep's
// LANES=128 point at 88.35 us, 14th by time, won as the smaller of a tie with 87.68).
TEST(BestOf, WhereFinalistsWereMeasuredAgainOnlyTheyCompete) {
    TuningRecord finalist = ok({{"LANES", 256}}, 87.68, 0.028),
                 tiedOnce = ok({{"LANES", 128}}, 88.35, 0.02),
                 luckyOnce = ok({{"LANES", 512}}, 80.0, 0.02);
    EXPECT_EQ(bestOf({finalist, tiedOnce})->point.at("LANES"), 128); // no finalists: a tie
    finalist.extra["retimed"] = 1;
    EXPECT_EQ(bestOf({tiedOnce, finalist, luckyOnce})->point.at("LANES"), 256);
    // Among the finalists, a near-tie still goes to the smaller point.
    tiedOnce.extra["retimed"] = 1;
    EXPECT_EQ(bestOf({tiedOnce, finalist, luckyOnce})->point.at("LANES"), 128);
}

// Two records of the same time, one of them noisy, and a third within that noise only: which
// is "the fastest" decides what ties with it, so it is the smaller point of the two, and the
// winner is the same in every order of the file.
TEST(BestOf, EqualTimesGoToTheSmallerPointWhateverTheOrder) {
    std::vector<TuningRecord> records{ok({{"MT_M", 64}}, 10, 0), ok({{"MT_M", 128}}, 10, 0.1),
                                      ok({{"MT_M", 32}}, 10.5, 0.1)};
    std::sort(records.begin(), records.end(),
              [](auto const& a, auto const& b) { return a.point < b.point; });
    do {
        auto const best = bestOf(records);
        ASSERT_TRUE(best);
        EXPECT_EQ(best->point.at("MT_M"), 64);
    } while (std::next_permutation(records.begin(), records.end(),
                                   [](auto const& a, auto const& b) { return a.point < b.point; }));
}
