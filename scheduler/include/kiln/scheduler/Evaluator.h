// Evaluator.h: how a sweep learns what a candidate costs.
//
// An evaluator takes a batch of candidates and reports each one's outcome as soon as it is
// known (the sweep writes it to the database at once). The model evaluator asks the cost model;
// the measured evaluator compiles the batch in parallel child processes (each with a timeout)
// and times the compiled candidates in one long-lived worker process per device, under a
// watchdog: a candidate that crashes its worker, hangs, or computes a wrong result is that
// candidate's failure, the worker is restarted, and the sweep goes on.
#pragma once

#include "kiln/arch-db/Arch.h"
#include "kiln/scheduler/CostModel.h"
#include "kiln/scheduler/Problem.h"
#include "kiln/scheduler/Solver.h"

#include <atomic>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::scheduler {

/// One point to evaluate.
struct Candidate {
    Point point;
    std::map<std::string, std::int64_t> params;
    /// Measured again at the end of a sweep, beside the other finalists: a measuring evaluator
    /// times it to a tenth of its precision (MeasuredOptions::precision), within its caps.
    bool finalist = false;
};

/// What evaluating one candidate found.
struct Evaluation {
    bool ok = false;
    double microseconds = 0; ///< median of the repetitions, or the model's estimate
    double spread = 0;       ///< (p90 - p10) / median
    int samples = 0;
    std::string stage; ///< on failure: compile, timeout, crash, hang, check, run
    std::string error;
    double compileSeconds = 0;
    std::map<std::string, double> extra; ///< registers, shared_bytes, predicted_us...
};

/// Summary statistics of timed repetitions.
struct SampleStats {
    double median = 0, spread = 0;
};
/// The median and (p90 - p10) / median of `samples` (not empty).
SampleStats summarize(std::vector<double> samples);

/// Called once per candidate, from any thread but never concurrently, with its index in the
/// batch.
using OnEvaluated = std::function<void(std::size_t index, Evaluation const& evaluation)>;

class Evaluator {
public:
    virtual ~Evaluator() = default;
    /// "model", "measured:cuda", ... (part of the database key).
    virtual std::string name() const = 0;
    /// Evaluates every candidate of `batch`, calling `done` for each as it finishes.
    virtual void evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) = 0;
    /// Seconds spent compiling and measuring so far (for the progress line and the report),
    /// each summed over the compiles or workers running at once. Safe to call at any time,
    /// from `done` too: the counters are atomic, not guarded by the evaluator's lock.
    virtual double compileSeconds() const { return 0; }
    virtual double measureSeconds() const { return 0; }
};

/// How candidates are compiled: one child process per compile, several at once.
///
/// Request (one line on stdin, which then closes): {...context, "params": {...}, "artifact": P}
/// Answer (one line): {"ok": true, "extra": {"registers": R, ...}} or {"ok": false, "error": E}
struct CompileOptions {
    std::vector<std::string> argv;
    unsigned jobs = 2;          ///< compiles at once
    double timeoutSeconds = 60; ///< per compile; the child is killed after it
    nlohmann::json context = nlohmann::json::object(); ///< merged into every request
};

/// Compiles one candidate in a child process; a crash, a timeout or an error is a failed
/// Evaluation (stage compile or timeout) with the reason. On success `ok` is true and `extra`
/// holds what the compiler reported.
Evaluation compileCandidate(CompileOptions const& options, Candidate const& candidate,
                            std::string const& artifact);

/// The analytical cost model as an evaluator. With compile options, each candidate is first
/// compiled (lowered, emitted, assembled) in parallel children, a candidate that does not
/// compile fails, and the model uses the registers and shared memory the assembler reports.
class ModelEvaluator : public Evaluator {
public:
    /// `label` names how candidates are compiled, for the database key ("model:" + label).
    /// `defaults` are the pipeline's parameters, which hold where a candidate does not set
    /// them (a space without register tiles still lowers with the pipeline's TT_M and TT_N).
    ModelEvaluator(Problem problem, arch::Arch const& arch,
                   std::optional<CompileOptions> compile = std::nullopt, std::string artifacts = "",
                   std::string label = "compiled",
                   std::map<std::string, std::int64_t> defaults = {});
    std::string name() const override { return compile_ ? "model:" + label_ : "model"; }
    void evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) override;
    double compileSeconds() const override { return compileSeconds_.load(); }

private:
    Problem problem_;
    arch::Arch const& arch_;
    std::optional<CompileOptions> compile_;
    std::string artifacts_;
    std::string label_;
    std::map<std::string, std::int64_t> defaults_;
    std::size_t counter_ = 0;
    std::atomic<double> compileSeconds_ = 0;
};

/// How the measured evaluator runs its children.
struct MeasuredOptions {
    std::string name = "measured";       ///< the evaluator's name in the database key
    CompileOptions compile;              ///< how candidates are compiled
    std::vector<std::string> workerArgv; ///< one long-lived child per device
    std::vector<int> devices{0};         ///< "--device N" is appended per worker
    double measureTimeoutSeconds = 30;   ///< per candidate (the watchdog)
    double workerStartSeconds = 60;      ///< for a worker's "ready" line
    int warmup = 3, repetitions = 20;    ///< repetitions: the fewest timed runs
    /// Untimed runs of each candidate for at least this long (DeviceRunOptions::warmupSeconds).
    double warmupSeconds = 0;
    /// Timing goes on until the median is known within `precision` (95% confidence, relative;
    /// a tenth of it for a sweep's finalists, whose near-ties decide the winner), or after
    /// `maxRepetitions` runs or `maxSeconds` of them (workers that time on their own).
    int maxRepetitions = 0; ///< 0: exactly `repetitions`
    double precision = 0.01, maxSeconds = 1;
    nlohmann::json context = nlohmann::json::object(); ///< merged into every worker request
};

/// Compiles in parallel children (compileCandidate) and measures in per-device workers.
///
/// Worker: first line {"ready": true, "device": "NAME"}; then per request
///   {...context, "id": N, "params": {...}, "artifact": P, "warmup": W, "repetitions": R,
///    "max_repetitions": M, "precision": E, "max_seconds": S}
/// the answer {"id": N, "ok": true, "samples_us": [...], "extra": {...}} (numbers in "extra"
///   join the candidate's record), or from a worker that times on its
///   own {"id": N, "ok": true, "median_us": M, "min_us": B, "samples": R} (spread (M - B) / M),
///   or {"id": N, "ok": false, "stage": "check"|"run", "error": "..."}.
class MeasuredEvaluator : public Evaluator {
public:
    /// `artifacts` is the folder compiled candidates go to (one file per candidate).
    MeasuredEvaluator(MeasuredOptions options, std::string artifacts);
    ~MeasuredEvaluator() override;
    std::string name() const override { return options_.name; }
    void evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) override;
    double compileSeconds() const override { return compileSeconds_.load(); }
    double measureSeconds() const override { return measureSeconds_.load(); }
    /// What the first worker said it measures on ("NVIDIA H100 80GB HBM3"), once started.
    std::string device() const { return device_; }

private:
    struct Worker;
    MeasuredOptions options_;
    std::string artifacts_;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::string device_;
    std::atomic<double> compileSeconds_ = 0, measureSeconds_ = 0;
    std::size_t counter_ = 0;
};

} // namespace kiln::scheduler
