// The measured evaluator with real child processes (tests/scheduler/FakeWorker.cpp): a candidate
// that crashes its worker, hangs, computes a wrong result, or whose compile hangs or crashes is
// recorded as that candidate's failure, and the candidates after it are still measured. A sweep
// killed with SIGKILL mid-way resumes without losing or duplicating a record.
#include "kiln/scheduler/Evaluator.h"

#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/scheduler/Strategy.h"
#include "kiln/scheduler/Sweep.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kiln;
using namespace kiln::scheduler;
namespace fs = std::filesystem;

namespace {

fs::path freshFolder(std::string const& name) {
    fs::path const p = fs::temp_directory_path() / fmt::format("kiln-{}-{}", name, ::getpid());
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

MeasuredOptions fakeOptions() {
    MeasuredOptions o;
    o.name = "measured:fake";
    o.compile.argv = {KILN_FAKE_WORKER, "compile"};
    o.workerArgv = {KILN_FAKE_WORKER, "measure"};
    o.compile.jobs = 3;
    o.compile.timeoutSeconds = 2;
    o.measureTimeoutSeconds = 2;
    o.repetitions = 10;
    return o;
}

Candidate candidate(std::int64_t fault, std::int64_t mtM) {
    return {{fault, mtM}, {{"FAULT", fault}, {"MT_M", mtM}}};
}

} // namespace

TEST(SampleStats, MedianAndSpread) {
    SampleStats const s = summarize({5, 1, 4, 2, 3});
    EXPECT_DOUBLE_EQ(s.median, 3);
    EXPECT_DOUBLE_EQ(s.spread, (4.6 - 1.4) / 3);
}

TEST(MeasuredEvaluator, EachFaultIsThatCandidatesFailureAndTheRestAreMeasured) {
    fs::path const dir = freshFolder("faults");
    MeasuredEvaluator evaluator(fakeOptions(), (dir / "artifacts").string());
    std::vector<Candidate> const batch = {candidate(0, 64), candidate(1, 64),  candidate(0, 32),
                                          candidate(2, 64), candidate(0, 128), candidate(3, 64),
                                          candidate(4, 64), candidate(5, 64),  candidate(6, 64),
                                          candidate(0, 16), candidate(7, 64)};
    std::vector<Evaluation> results(batch.size());
    std::vector<int> calls(batch.size(), 0);
    evaluator.evaluate(batch, [&](std::size_t i, Evaluation const& e) {
        results[i] = e;
        ++calls[i];
    });
    for (std::size_t i = 0; i < batch.size(); ++i)
        EXPECT_EQ(calls[i], 1) << i;

    EXPECT_TRUE(results[0].ok);
    EXPECT_NEAR(results[0].microseconds, 100, 1.0);
    EXPECT_EQ(results[0].samples, 10);
    EXPECT_GT(results[0].spread, 0.0);
    EXPECT_LT(results[0].spread, 0.03);
    EXPECT_EQ(results[0].extra.at("registers"), 42);

    EXPECT_FALSE(results[1].ok);
    EXPECT_EQ(results[1].stage, "crash");
    EXPECT_EQ(results[1].error, "the worker died: killed by SIGSEGV (Segmentation fault)");

    EXPECT_TRUE(results[2].ok); // after the crash: a new worker
    EXPECT_NEAR(results[2].microseconds, 132, 2.0);

    EXPECT_FALSE(results[3].ok);
    EXPECT_EQ(results[3].stage, "hang");
    EXPECT_EQ(results[3].error, "no answer within 2 s; the watchdog killed the worker");

    EXPECT_TRUE(results[4].ok); // after the hang
    EXPECT_NEAR(results[4].microseconds, 164, 2.0);

    EXPECT_FALSE(results[5].ok);
    EXPECT_EQ(results[5].stage, "check");
    EXPECT_EQ(results[5].error, "wrong result: max relative error 0.5 (tolerance 1e-05)");

    EXPECT_FALSE(results[6].ok);
    EXPECT_EQ(results[6].stage, "timeout");
    EXPECT_EQ(results[6].error, "the compile did not finish within 2 s");

    EXPECT_FALSE(results[7].ok);
    EXPECT_EQ(results[7].stage, "compile");
    EXPECT_EQ(results[7].error,
              "the compiler killed by SIGABRT (Aborted): fake compiler: internal failure");

    EXPECT_FALSE(results[8].ok);
    EXPECT_EQ(results[8].stage, "compile");
    EXPECT_EQ(results[8].error, "ptxas: too many registers");

    EXPECT_TRUE(results[9].ok);
    EXPECT_TRUE(results[10].ok); // a worker that reports its own median and best
    EXPECT_EQ(results[10].microseconds, 250.0);
    EXPECT_DOUBLE_EQ(results[10].spread, 5.0 / 250.0);
    EXPECT_EQ(results[10].samples, 10);
    EXPECT_EQ(evaluator.device(), "fake device");
    EXPECT_GT(evaluator.compileSeconds(), 2.0); // the hanging compile ran until its timeout
    fs::remove_all(dir);
}

namespace {

SearchSpace faultSpace() {
    return parseSearchSpace(R"({"space": "f", "version": 1, "parameters": {
        "MT_M": {"pow2": {"min": 16, "max": 256}}, "STAGES": {"range": {"min": 1, "max": 4}},
        "FAULT": {"values": [0, 1, 3]}},
        "constraints": ["$FAULT == 0 || $STAGES == 2"]})",
                            "fault.space.json");
}

TuningKey faultKey() {
    return {"{\"problem\":1}", "fake", "sm_90a", "fake device", "none", "test", "0",
            "measured:fake"};
}

} // namespace

TEST(Sweep, CompletesOverFaultsAndRecordsEveryCandidate) {
    fs::path const dir = freshFolder("sweep");
    SearchSpace const space = faultSpace();
    Solver const solver(space, {});
    std::size_t const valid = solver.all().size();
    ASSERT_EQ(valid, 5u * 4 + 5 * 2);
    auto strategy = makeStrategy(solver, {.name = "exhaustive"});
    MeasuredEvaluator evaluator(fakeOptions(), (dir / "artifacts").string());
    TuningDatabase db((dir / "db.jsonl").string());
    std::vector<SweepProgress> progress;
    SweepResult const r =
        runSweep(solver, *strategy, evaluator, db, faultKey(),
                 {.progress = [&](SweepProgress const& p) { progress.push_back(p); }});
    EXPECT_EQ(r.entries.size(), valid);
    // The progress reads the evaluator's busy seconds from inside its callback, while other
    // compiles and measurements go on: they only grow, and the last equals the sweep's totals.
    ASSERT_EQ(progress.size(), valid);
    for (std::size_t i = 1; i < progress.size(); ++i) {
        EXPECT_GE(progress[i].compileSeconds, progress[i - 1].compileSeconds);
        EXPECT_GE(progress[i].measureSeconds, progress[i - 1].measureSeconds);
    }
    EXPECT_GT(r.compileSeconds, 0);
    EXPECT_GT(r.measureSeconds, 0);
    EXPECT_DOUBLE_EQ(progress.back().compileSeconds, r.compileSeconds);
    EXPECT_DOUBLE_EQ(progress.back().measureSeconds, r.measureSeconds);
    EXPECT_EQ(r.failures, 10u);
    ASSERT_TRUE(r.best);
    EXPECT_EQ(r.best->point,
              (std::map<std::string, std::int64_t>{{"FAULT", 0}, {"MT_M", 64}, {"STAGES", 1}}));
    TuningDatabase const reread((dir / "db.jsonl").string());
    EXPECT_EQ(reread.records().size(), valid);
    EXPECT_TRUE(reread.problems().empty());
    fs::remove_all(dir);
}

TEST(Sweep, KilledMidwayResumesWithoutLosingOrDuplicatingRecords) {
    fs::path const dir = freshFolder("resume");
    std::string const dbPath = (dir / "db.jsonl").string();
    SearchSpace const space = faultSpace();
    Solver const solver(space, {});
    std::size_t const valid = solver.all().size();
    auto runOnce = [&] {
        auto strategy = makeStrategy(solver, {.name = "random", .seed = 7});
        MeasuredOptions o = fakeOptions();
        MeasuredEvaluator evaluator(o, (dir / "artifacts").string());
        TuningDatabase db(dbPath);
        return runSweep(solver, *strategy, evaluator, db, faultKey(), {.budget = {}, .batch = 4});
    };
    ::setenv("DELAY_MS", "40", 1);
    pid_t const child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        runOnce();
        ::_exit(0);
    }
    // Kill the sweep once a third of the candidates are recorded.
    auto lines = [&] {
        std::ifstream in(dbPath);
        return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(),
                          '\n');
    };
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (lines() < std::ptrdiff_t(valid / 3) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
    std::size_t const before = static_cast<std::size_t>(lines());
    ASSERT_LT(before, valid);
    ::unsetenv("DELAY_MS");

    SweepResult const resumed = runOnce();
    EXPECT_EQ(resumed.entries.size(), valid);
    EXPECT_EQ(resumed.reused, before);
    TuningDatabase const db(dbPath);
    EXPECT_TRUE(db.problems().empty());
    std::set<std::map<std::string, std::int64_t>> points;
    for (auto const& r : db.records())
        EXPECT_TRUE(points.insert(r.point).second) << "duplicated record";
    EXPECT_EQ(points.size(), valid);
    fs::remove_all(dir);
}

TEST(ModelEvaluator, CompilesFirstAndUsesTheAssemblersRegisters) {
    fs::path const dir = freshFolder("model");
    Command const command = loadCommand(std::string(KILN_SOURCE_DIR) + "/examples/gemm-f16.json");
    Problem const problem = problemOf(command, {{"M", 4096}, {"N", 4096}, {"K", 4096}});
    arch::Arch const& arch = arch::ArchLibrary::get("sm_90a");
    CompileOptions compile{.argv = {KILN_FAKE_WORKER, "compile"}, .jobs = 2, .timeoutSeconds = 5};
    ModelEvaluator evaluator(problem, arch, compile, (dir / "artifacts").string(), "fake");
    EXPECT_EQ(evaluator.name(), "model:fake");
    std::map<std::string, std::int64_t> const params{
        {"MT_M", 128}, {"MT_N", 128}, {"MT_K", 16}, {"STAGES", 1}, {"FAULT", 0}};
    auto broken = params;
    broken["FAULT"] = 6; // the compile reports an error
    std::vector<Evaluation> results(2);
    evaluator.evaluate({{{}, params}, {{}, broken}},
                       [&](std::size_t i, Evaluation const& e) { results[i] = e; });
    ASSERT_TRUE(results[0].ok);
    // The fake compiler reports 42 registers; the model's own estimate would be 96, and with one
    // stage the workgroups a multiprocessor holds hide the loads' latency.
    EXPECT_EQ(results[0].extra.at("registers"), 42);
    EXPECT_DOUBLE_EQ(results[0].microseconds,
                     estimateCost(problem, arch, params, {.registers = 42}).microseconds);
    EXPECT_NE(results[0].microseconds, estimateCost(problem, arch, params).microseconds);
    EXPECT_FALSE(results[1].ok);
    EXPECT_EQ(results[1].stage, "compile");
    EXPECT_EQ(results[1].error, "ptxas: too many registers");
    fs::remove_all(dir);
}

TEST(Sweep, StopsAtItsBudgetInCandidatesOrSeconds) {
    fs::path const dir = freshFolder("budget");
    SearchSpace const space = faultSpace();
    Solver const solver(space, {});
    {
        auto strategy = makeStrategy(solver, {.name = "random", .seed = 2});
        MeasuredEvaluator evaluator(fakeOptions(), (dir / "a").string());
        TuningDatabase db((dir / "a.jsonl").string());
        SweepResult const r = runSweep(solver, *strategy, evaluator, db, faultKey(),
                                       {.budget = {.candidates = 7}, .batch = 3});
        EXPECT_EQ(r.entries.size(), 7u);
        EXPECT_EQ(db.records().size(), 7u);
    }
    {
        // 100 ms per measurement, one candidate per batch, 0.35 s: a few candidates, not all 30.
        ::setenv("DELAY_MS", "100", 1);
        auto strategy = makeStrategy(solver, {.name = "exhaustive"});
        MeasuredEvaluator evaluator(fakeOptions(), (dir / "b").string());
        TuningDatabase db((dir / "b.jsonl").string());
        SweepResult const r = runSweep(solver, *strategy, evaluator, db, faultKey(),
                                       {.budget = {.seconds = 0.35}, .batch = 1});
        ::unsetenv("DELAY_MS");
        EXPECT_GE(r.entries.size(), 1u);
        EXPECT_LT(r.entries.size(), 10u);
    }
    fs::remove_all(dir);
}

namespace {
// An evaluator that reports whatever time it is given, as a cost model might.
class FixedTimeEvaluator : public Evaluator {
public:
    explicit FixedTimeEvaluator(double us)
        : us_(us) {}
    std::string name() const override { return "fixed"; }
    void evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) override {
        for (std::size_t i = 0; i < batch.size(); ++i) {
            Evaluation e;
            e.ok = true;
            e.microseconds = us_;
            done(i, e);
        }
    }

private:
    double us_;
};
} // namespace

namespace {
// The first points it measures take the scripted times, in order; every later measurement is
// 12 us: the point that was lucky the first time is not lucky again.
class LuckyOnceEvaluator : public Evaluator {
public:
    explicit LuckyOnceEvaluator(std::vector<double> first)
        : first_(std::move(first)) {}
    std::string name() const override { return "lucky-once"; }
    void evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) override {
        for (std::size_t i = 0; i < batch.size(); ++i) {
            Evaluation e;
            e.ok = true;
            e.microseconds = next_ < first_.size() ? first_[next_++] : 12.0;
            done(i, e);
        }
    }

private:
    std::vector<double> first_;
    std::size_t next_ = 0;
};
} // namespace

// The fastest of many noisy measurements is biased low: the sweep measures its finalists again,
// and their new results stand, in the sweep's result and in the database.
TEST(Sweep, ItsFinalistsAreMeasuredAgainAndTheNewTimesStand) {
    fs::path const dir = freshFolder("finalists");
    SearchSpace const space = faultSpace();
    Solver const solver(space, {});
    auto strategy = makeStrategy(solver, {.name = "exhaustive"});
    // The first point was lucky once (5 us), the second is steady at 11 us; both then measure 12.
    LuckyOnceEvaluator evaluator({5.0, 11.0, 20.0, 30.0});
    TuningDatabase db((dir / "db.jsonl").string());
    SweepResult const r = runSweep(solver, *strategy, evaluator, db, faultKey(),
                                   {.budget = {.candidates = 4}, .batch = 4, .finalists = 2});
    ASSERT_EQ(r.entries.size(), 4u);
    EXPECT_EQ(r.retimed, 2u);
    EXPECT_EQ(r.entries[0].evaluation.microseconds, 12.0);
    EXPECT_EQ(r.entries[0].evaluation.extra.at("retimed"), 1);
    EXPECT_EQ(r.entries[1].evaluation.microseconds, 12.0);
    EXPECT_EQ(r.entries[2].evaluation.microseconds, 20.0); // not a finalist: unchanged
    // Both finalists now measure 12 us, not the lucky 5.
    ASSERT_TRUE(r.best);
    EXPECT_EQ(r.best->microseconds, 12.0);
    EXPECT_EQ(db.records().size(), 6u); // 4 first records, 2 newer ones
    ASSERT_TRUE(db.best(faultKey()));
    EXPECT_EQ(db.best(faultKey())->microseconds, 12.0);
    EXPECT_EQ(db.find(faultKey(), r.entries[0].params)->microseconds, 12.0);
    // The same database read again: each point's latest record stands.
    TuningDatabase const again((dir / "db.jsonl").string());
    EXPECT_EQ(again.best(faultKey())->microseconds, 12.0);
    EXPECT_EQ(again.best(faultKey())->point, r.best->point);
    fs::remove_all(dir);
}

namespace {
// Times by point: `smallFirst` for MT_M=16 (STAGES=1, FAULT=0) the first time and `smallAgain`
// after, 100 us for MT_M=256 (STAGES=4, FAULT=0), 120 for every other point; spreads of 2%.
class TieEvaluator : public Evaluator {
public:
    TieEvaluator(double smallFirst, double smallAgain)
        : smallFirst_(smallFirst)
        , smallAgain_(smallAgain) {}
    std::string name() const override { return "tie"; }
    void evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) override {
        for (std::size_t i = 0; i < batch.size(); ++i) {
            auto const& p = batch[i].params;
            bool const plain = p.at("FAULT") == 0;
            bool const small = plain && p.at("MT_M") == 16 && p.at("STAGES") == 1;
            bool const large = plain && p.at("MT_M") == 256 && p.at("STAGES") == 4;
            Evaluation e;
            e.ok = true;
            e.spread = 0.02;
            e.microseconds = small   ? (smallTimes_++ == 0 ? smallFirst_ : smallAgain_)
                             : large ? 100.0
                                     : 120.0;
            done(i, e);
        }
    }

private:
    double smallFirst_, smallAgain_;
    int smallTimes_ = 0;
};
} // namespace

// The first measurements tie a smaller point with the fastest (100.8 against 100, spreads of
// 2%): the sweep measures it again beside the fastest, and the tie is decided on those figures.
TEST(Sweep, APointThatWonByATieIsMeasuredAgainWithTheFinalists) {
    SearchSpace const space = faultSpace();
    Solver const solver(space, {});
    for (auto [again, winner] : {std::pair(102.5, 256), std::pair(100.9, 16)}) {
        fs::path const dir = freshFolder("tie");
        auto strategy = makeStrategy(solver, {.name = "exhaustive"});
        TieEvaluator evaluator(100.8, again);
        TuningDatabase db((dir / "db.jsonl").string());
        SweepResult const r =
            runSweep(solver, *strategy, evaluator, db, faultKey(), {.batch = 8, .finalists = 1});
        EXPECT_EQ(r.retimed, 2u) << again; // the fastest, and the point the tie chose
        ASSERT_TRUE(r.best);
        EXPECT_EQ(r.best->point.at("MT_M"), winner) << again;
        EXPECT_EQ(db.best(faultKey())->point, r.best->point);
        fs::remove_all(dir);
    }
}

// The finalists' near-ties decide the winner: they are timed to a tenth of the precision the
// first measurements were (the fake worker says in extra what it was asked).
TEST(Sweep, ItsFinalistsAreTimedToATenthOfThePrecision) {
    fs::path const dir = freshFolder("finalist-precision");
    SearchSpace const space = faultSpace();
    Solver const solver(space, {});
    auto strategy = makeStrategy(solver, {.name = "exhaustive"});
    MeasuredOptions options = fakeOptions();
    options.precision = 0.01;
    MeasuredEvaluator evaluator(options, (dir / "artifacts").string());
    TuningDatabase db((dir / "db.jsonl").string());
    SweepResult const r = runSweep(solver, *strategy, evaluator, db, faultKey(),
                                   {.budget = {.candidates = 6}, .finalists = 2});
    ASSERT_EQ(r.retimed, 2u);
    int finalists = 0, others = 0;
    for (auto const& e : r.entries) {
        if (!e.evaluation.ok)
            continue;
        bool const finalist = e.evaluation.extra.contains("retimed");
        EXPECT_DOUBLE_EQ(e.evaluation.extra.at("precision_asked"), finalist ? 0.001 : 0.01);
        ++(finalist ? finalists : others);
    }
    EXPECT_EQ(finalists, 2);
    EXPECT_GT(others, 0);
    fs::remove_all(dir);
}

// A time that is not a positive, finite number is no measurement: the sweep records a failure.
TEST(Sweep, ATimeThatIsNotAPositiveFiniteNumberIsAFailure) {
    fs::path const dir = freshFolder("nonfinite");
    SearchSpace const space = faultSpace();
    Solver const solver(space, {});
    for (double us : {double(INFINITY), -1.0, 0.0, double(NAN)}) {
        auto strategy = makeStrategy(solver, {.name = "exhaustive"});
        FixedTimeEvaluator evaluator(us);
        TuningDatabase db((dir / fmt::format("{}.jsonl", us)).string());
        SweepResult const r = runSweep(solver, *strategy, evaluator, db, faultKey(),
                                       {.budget = {.candidates = 3}, .batch = 3});
        ASSERT_EQ(r.entries.size(), 3u);
        EXPECT_FALSE(r.best);
        EXPECT_EQ(r.failures, 3u);
        EXPECT_EQ(r.entries[0].evaluation.stage, "run");
        EXPECT_EQ(r.entries[0].evaluation.error,
                  fmt::format("the time {} us is not a positive, finite number", us));
        EXPECT_EQ(db.records().size(), 3u);
        EXPECT_EQ(db.records()[0].status, RecordStatus::Failed);
    }
    fs::remove_all(dir);
}
