// MpiEvaluator.h: one sweep over every rank of an MPI job.
//
// Rank 0 runs the sweep (Sweep.h) as on one host; its evaluator is an MpiEvaluator, which deals
// each batch's candidates to the ranks, itself included, and passes each result on as it
// arrives, so the strategy, the database and the report are those of a single-process sweep.
// The first deal waits up to 10 s for every rank to answer, so that all start with a share.
// Every other rank answers with serveSweep(), evaluating what it is dealt with its own local
// evaluator (compiles in children, measurements on its local GPUs). Protocol (MpiCluster.h
// carries it; every message a JSON object with a "kind"):
//   0 -> r  {"kind": "begin", "sweep": S, "key": {...the TuningKey's fields}}
//   r -> 0  {"kind": "ready", "sweep": S, "slots": N}         N candidates at once at most
//           {"kind": "declined", "sweep": S, "reason": "..."} another key (GPU, driver, files)
//   0 -> r  {"kind": "candidate", "id": I, "params": {...}}
//   r -> 0  {"kind": "result", "id": I, "evaluation": {...}, "compile_s": C, "measure_s": M}
//   0 -> r  {"kind": "end", "sweep": S}                       the sweep is over
//   0 -> r  {"kind": "stop"}                                  the job is over
// A rank that falls silent (no heartbeat for `silentSeconds`), or keeps a candidate longer than
// `candidateSeconds`, is lost: its candidates in flight are dealt again to the others and it is
// dealt nothing more; whatever it sends later is ignored. Rank 0 is never lost: a rank that
// stops hearing from it ends the job, and the sweep resumes from the database when run again.
#pragma once

#include "kiln/scheduler/Evaluator.h"
#include "kiln/scheduler/MpiCluster.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>

namespace kiln::scheduler {

/// When a rank is given up on.
struct RankTimeouts {
    double silentSeconds = 30;     ///< without a heartbeat
    double candidateSeconds = 600; ///< one candidate in flight (its compile, start, measurement)
};

class MpiEvaluator : public Evaluator {
public:
    /// Rank 0's side: `local` evaluates the candidates dealt to rank 0 itself, up to
    /// `localSlots` at once. Sends "begin" to every rank not lost in an earlier sweep.
    MpiEvaluator(MpiCluster& cluster, std::unique_ptr<Evaluator> local, TuningKey key,
                 std::size_t localSlots, RankTimeouts timeouts);
    /// Sends "end" to the ranks.
    ~MpiEvaluator() override;
    std::string name() const override { return local_->name(); }
    void evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) override;
    /// Summed over the ranks, each as its latest result reported it.
    double compileSeconds() const override;
    double measureSeconds() const override;

private:
    struct Peer;
    MpiCluster& cluster_;
    std::unique_ptr<Evaluator> local_;
    TuningKey key_;
    RankTimeouts timeouts_;
    std::uint64_t sweep_ = 0;
    std::chrono::steady_clock::time_point begun_;
    std::map<int, Peer> peers_;
    std::atomic<double> compileSeconds_ = 0, measureSeconds_ = 0;
};

/// Another rank's side of one sweep: waits for rank 0's "begin", then evaluates what it is dealt
/// with `local` (up to `slots` at once) until "end". It declines the sweep, and evaluates
/// nothing, where `local` is null (`why` says why) or rank 0's key is not `key`. Returns false
/// when rank 0 said "stop" instead (no more sweeps); ends the job (MpiCluster::abort) when rank
/// 0 has been silent for `timeouts.silentSeconds`.
bool serveSweep(MpiCluster& cluster, Evaluator* local, std::string const& why, TuningKey const& key,
                std::size_t slots, RankTimeouts const& timeouts);

} // namespace kiln::scheduler
