// The sweep's report: the progress lines, the table and the SVG plot of a fixed sweep, compared
// with golden files in tests/golden/tuning/ (KILN_UPDATE_GOLDEN=1 rewrites them; review the diff).
#include "kiln/scheduler/Report.h"

#include "../GoldenFile.h"
#include "kiln/graph/SourceJson.h"
#include "kiln/scheduler/CheckProvenance.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::scheduler;

namespace {

void expectGolden(std::string const& name, std::string const& text) {
    kiln::test::expectGoldenFile("tests/golden/tuning/" + name, text);
}

SearchSpace space() {
    return parseSearchSpace(R"({"space": "r", "version": 1, "parameters": {
        "MT_M": {"values": [32, 64, 128]}, "STAGES": {"range": {"min": 1, "max": 2}}}})",
                            "r.space.json");
}

// A sweep measured on a GPU against cuBLAS, whose first candidate is a record of an older sweep
// that did not say which reference checked it.
SweepResult sweep(Solver const& solver) {
    SweepResult r;
    r.evaluator = "measured:cuda";
    double const times[] = {120, 80.5, 0, 64.25, 300, 64.5};
    std::size_t i = 0;
    solver.enumerate([&](Point const& p) {
        SweepEntry e{p, solver.named(p), {}, i == 0, double(i)};
        if (times[i] > 0) {
            e.evaluation.ok = true;
            e.evaluation.microseconds = times[i];
            e.evaluation.spread = 0.01 * double(i);
            e.evaluation.samples = 10;
            e.evaluation.extra["registers"] = 40 + double(i);
            if (i > 0)
                e.evaluation.extra[kReferenceCublasExtra] = 1;
        } else {
            e.evaluation.stage = "crash";
            e.evaluation.error = "the worker died: killed by SIGSEGV (Segmentation fault)";
            ++r.failures;
        }
        r.entries.push_back(e);
        ++i;
        return true;
    });
    r.reused = 1;
    r.seconds = 12.5;
    r.compileSeconds = 3.25;
    r.measureSeconds = 8.5;
    std::vector<TuningRecord> records;
    for (auto const& e : r.entries) {
        TuningRecord t;
        t.point = e.params;
        t.status = e.evaluation.ok ? RecordStatus::Ok : RecordStatus::Failed;
        t.microseconds = e.evaluation.microseconds;
        t.spread = e.evaluation.spread;
        t.extra = e.evaluation.extra;
        records.push_back(t);
    }
    r.best = bestOf(records);
    return r;
}

} // namespace

TEST(Report, ProgressLines) {
    // 5 candidates evaluated in 10 s (the 2 reused cost nothing), compiles busy 41 s in all
    // (several at once), the worker measuring 8.8 s of the 10.
    SweepProgress p{.done = 7,
                    .failures = 1,
                    .reused = 2,
                    .total = 20,
                    .elapsed = 10,
                    .compileSeconds = 41,
                    .measureSeconds = 8.8,
                    .best = 64.25,
                    .bestPoint = "MT_M=64,STAGES=2"};
    EXPECT_EQ(ProgressPrinter::line(p, false),
              "7/20 done, 1 failed, 2 reused, best 64.25 us (MT_M=64,STAGES=2), 0.50 cand/s, "
              "compile 41.0 s busy, measure 88% of wall, ETA 26s");
    EXPECT_EQ(ProgressPrinter::line(p, true),
              "[########................] 7/20 done, 1 failed, 2 reused, best 64.25 us "
              "(MT_M=64,STAGES=2), 0.50 cand/s, compile 41.0 s busy, measure 88% of wall, ETA 26s");
    EXPECT_EQ(ProgressPrinter::line({.done = 0, .total = 5}, false), "0/5 done, 0 failed, best -");
    // Only reused records so far: no throughput yet. The cost model without compiles: neither
    // compile nor measure time.
    EXPECT_EQ(ProgressPrinter::line({.done = 4, .reused = 4, .total = 10, .elapsed = 0.01}, false),
              "4/10 done, 0 failed, 4 reused, best -");
    EXPECT_EQ(ProgressPrinter::line({.done = 310, .total = 400, .elapsed = 10}, false),
              "310/400 done, 0 failed, best -, 31 cand/s, ETA 3s");
    EXPECT_EQ(ProgressPrinter::line(
                  {.done = 29, .total = 400, .elapsed = 10, .compileSeconds = 12.34}, false),
              "29/400 done, 0 failed, best -, 2.9 cand/s, compile 12.3 s busy, ETA 2m08s");
}

TEST(Report, TableAndPlotOfAFixedSweep) {
    SearchSpace const s = space();
    Solver const solver(s, {});
    SweepResult const r = sweep(solver);
    // 64.25 (spread 3%) and 64.5 (spread 5%) tie; MT_M=64,STAGES=2 is also the smaller point.
    ASSERT_TRUE(r.best);
    EXPECT_EQ(r.best->point, (std::map<std::string, std::int64_t>{{"MT_M", 64}, {"STAGES", 2}}));
    expectGolden("report.txt", reportTable(r, solver));
    expectGolden("sweep.svg", reportSvg(r, "gemm <test> on sm_90a"));
}

// The finalists, measured again, compete alone for the winner; the table lists them first, so
// that its first row is the winner or the point it tied with.
TEST(Report, TheFinalistsComeFirstInTheTable) {
    SearchSpace const s = space();
    Solver const solver(s, {});
    SweepResult r = sweep(solver);
    std::vector<TuningRecord> records;
    for (std::size_t i : {1, 5}) { // 80.5 and 64.5 us; 64.25 was not measured again
        r.entries[i].evaluation.extra["retimed"] = 1;
        TuningRecord t;
        t.point = r.entries[i].params;
        t.microseconds = r.entries[i].evaluation.microseconds;
        t.spread = r.entries[i].evaluation.spread;
        t.extra = r.entries[i].evaluation.extra;
        records.push_back(t);
    }
    r.retimed = 2;
    r.best = bestOf(records);
    std::string const table = reportTable(r, solver);
    auto const rows = table.substr(table.find("rank"));
    EXPECT_LT(rows.find("64.500"), rows.find("80.500")) << table;
    EXPECT_LT(rows.find("80.500"), rows.find("64.250")) << table;
    EXPECT_NE(rows.find("MT_M=128,STAGES=2  (measured again)\n"), std::string::npos) << table;
    EXPECT_NE(rows.find("MT_M=64,STAGES=2\n"), std::string::npos) << table;
    EXPECT_NE(table.find("winner: 64.500 us at MT_M=128,STAGES=2, checked: GPU against cuBLAS\n"),
              std::string::npos)
        << table;
}

// How each candidate was checked follows from the key's evaluator and, on a GPU, the reference
// the worker recorded.
TEST(Report, CheckProvenance) {
    std::map<std::string, double> const none, cublas{{kReferenceCublasExtra, 1}},
        cpu{{kReferenceCublasExtra, 0}};
    EXPECT_EQ(checkedBy("measured:interpreter", none), "interpreter");
    EXPECT_EQ(checkedBy("measured:cuda", cublas), "GPU against cuBLAS");
    EXPECT_EQ(checkedBy("measured:cuda", cpu), "GPU against CPU reference");
    EXPECT_EQ(checkedBy("measured:cuda", none), "GPU (reference not recorded)");
    for (std::string const model : {"model", "model:lowered", "model:emitted-if-possible"})
        EXPECT_EQ(checkedBy(model, cublas), "unchecked (cost model)") << model;
    EXPECT_EQ(checkedBy("measured", none), "unknown (evaluator measured)");
    EXPECT_TRUE(wasChecked("interpreter"));
    EXPECT_TRUE(wasChecked("GPU against CPU reference"));
    EXPECT_FALSE(wasChecked("unchecked (cost model)"));
    EXPECT_FALSE(wasChecked("unknown (evaluator measured)"));
}

// The table says per candidate how it was checked; a sweep of the cost model says that nothing
// was.
TEST(Report, TheTableSaysHowEachCandidateWasChecked) {
    SearchSpace const s = space();
    Solver const solver(s, {});
    SweepResult r = sweep(solver);
    std::string const measured = reportTable(r, solver);
    EXPECT_NE(measured.find("  43  GPU against cuBLAS            MT_M=64,STAGES=2\n"),
              std::string::npos)
        << measured;
    EXPECT_NE(measured.find("GPU (reference not recorded)  MT_M=32,STAGES=1  (reused)\n"),
              std::string::npos)
        << measured;
    EXPECT_NE(measured.find("winner: 64.250 us at MT_M=64,STAGES=2, checked: GPU against cuBLAS\n"),
              std::string::npos)
        << measured;
    r.evaluator = "model:emitted";
    std::string const model = reportTable(r, solver);
    EXPECT_EQ(model.find("GPU"), std::string::npos) << model;
    EXPECT_NE(model.find("winner: 64.250 us at MT_M=64,STAGES=2, checked: unchecked (cost model)"),
              std::string::npos)
        << model;
    EXPECT_NE(reportSvg(r, "a sweep")
                  .find("<title>MT_M=64,STAGES=2: 64.250 us, checked: unchecked (cost "
                        "model)</title>"),
              std::string::npos);
}

TEST(Report, PlainProgressLinesOnlyWhenSomethingChanges) {
    std::FILE* out = std::tmpfile();
    ASSERT_NE(out, nullptr);
    ProgressPrinter printer(out, false);
    SweepProgress p{.done = 1, .total = 5, .elapsed = 0.1, .best = 10, .bestPoint = "A=1"};
    printer(p); // the first
    p.done = 2;
    p.elapsed = 0.2;
    printer(p); // nothing new within a second: no line
    p.done = 3;
    p.elapsed = 0.3;
    p.failures = 1;
    printer(p); // a failure
    p.done = 4;
    p.elapsed = 1.5;
    printer(p); // a second later
    p.done = 5;
    p.elapsed = 1.6;
    printer(p); // the end
    std::rewind(out);
    std::string text;
    for (int c = std::fgetc(out); c != EOF; c = std::fgetc(out))
        text += char(c);
    std::fclose(out);
    EXPECT_EQ(text, "1/5 done, 0 failed, best 10.00 us (A=1), 10 cand/s, ETA 0s\n"
                    "3/5 done, 1 failed, best 10.00 us (A=1), 10 cand/s, ETA 0s\n"
                    "4/5 done, 1 failed, best 10.00 us (A=1), 2.7 cand/s, ETA 0s\n"
                    "5/5 done, 1 failed, best 10.00 us (A=1), 3.1 cand/s\n");
}

// A time that is no number a plot can place (infinity, from a cost model given a workgroup of 0)
// is left out of the plot: its axis stays a few decades, not an endless loop.
TEST(Report, APlotLeavesOutTimesThatAreNotFinite) {
    SearchSpace const s = space();
    Solver const solver(s, {});
    SweepResult r = sweep(solver);
    r.entries[1].evaluation.microseconds = INFINITY;
    std::string const svg = reportSvg(r, "a sweep");
    EXPECT_LT(svg.size(), 20000u);
    EXPECT_EQ(svg.find("inf"), std::string::npos);
    EXPECT_NE(svg.find("1000 us"), std::string::npos); // the decades of the finite times
}
