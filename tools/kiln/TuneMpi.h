// TuneMpi.h: kiln tune as one sweep over the ranks of an MPI job (mpirun, srun).
//
// Every rank runs the same command line. Rank 0 sweeps, owns the database, writes the reports
// and exports the winners; its evaluator deals the candidates to every rank, itself included
// (scheduler/MpiEvaluator.h). The other ranks build the same evaluator over their own GPUs (or
// interpreter workers) and serve rank 0's sweeps, one per target. Where Kiln was built without
// MPI, a kiln tune started as several ranks stops with a message saying so, rather than running
// the whole sweep once per rank.
#pragma once

#include "kiln/scheduler/Evaluator.h"
#include "kiln/scheduler/MpiEvaluator.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::cli {

/// This process's part in an MPI job.
class SweepRanks {
public:
    virtual ~SweepRanks() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    /// The devices of `visible` that this rank measures on (MpiCluster::devicesOfThisRank).
    virtual std::vector<int> devicesOfThisRank(std::vector<int> const& visible) const = 0;
    /// Rank 0: `local` (evaluating up to `slots` candidates at once) made to deal to every rank.
    virtual std::unique_ptr<scheduler::Evaluator>
    spread(std::unique_ptr<scheduler::Evaluator> local, scheduler::TuningKey const& key,
           std::size_t slots) = 0;
    /// The other ranks: serve one of rank 0's sweeps (scheduler::serveSweep); false when rank 0
    /// has no more.
    virtual bool serve(scheduler::Evaluator* local, std::string const& why,
                       scheduler::TuningKey const& key, std::size_t slots) = 0;
};

/// This process's part when an MPI launcher started it as one of several ranks, else null (a
/// single rank sweeps as without MPI). A UserError where Kiln was built without MPI.
std::unique_ptr<SweepRanks> joinMpiJob(scheduler::RankTimeouts const& timeouts);

} // namespace kiln::cli
