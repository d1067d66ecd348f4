// TuneMpi.cpp: joining the MPI job a launcher started kiln tune in, and what to say when it
// cannot be joined or will run slowly.
#include "TuneMpi.h"

#include "kiln/graph/Error.h"

#include <cstdlib>
#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#ifdef KILN_HAVE_MPI
#include "kiln/scheduler/MpiCluster.h"
#endif

namespace kiln::cli {

namespace {

// The ranks an MPI launcher announced to this process, or 0 where none started it: Open MPI's
// mpirun; PMI-2 (srun --mpi=pmi2, MPICH's launchers); srun's tasks of a job step (not set in a
// batch script that srun did not start).
int launchedRanks() {
    for (char const* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
        char const* text = std::getenv(name);
        if (text == nullptr)
            continue;
        char* end = nullptr;
        long const n = std::strtol(text, &end, 10);
        if (end != text && *end == '\0' && n > 0 && n < (1L << 24))
            return int(n);
    }
    return 0;
}

#ifdef KILN_HAVE_MPI
// Open MPI binds each rank to one core by default (np <= 2) and Slurm may too: a rank's compile
// children then all share its cores. Measured on 2 x H200 with 32 cores: mpirun -np 2 with -j 16
// compiled 10x slower (5.9 s a candidate instead of 0.6 s) than one kiln tune -j 32.
void warnIfBound(int rank) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    long const online = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (::sched_getaffinity(0, sizeof(mask), &mask) != 0 || online < 1)
        return;
    int const usable = CPU_COUNT(&mask);
    if (usable < online)
        fmt::print(stderr,
                   "note: rank {} may run on {} of the host's {} cores (the launcher bound it), "
                   "and its compiles share them: start it with mpirun --bind-to none (srun: "
                   "--cpu-bind=none) unless the ranks of a host are meant to split its cores\n",
                   rank, usable, online);
}

class MpiSweepRanks final : public SweepRanks {
public:
    explicit MpiSweepRanks(scheduler::RankTimeouts const& timeouts)
        : timeouts_(timeouts) {}
    /// Rank 0 tells every other rank, lost ones too, that the job is over.
    ~MpiSweepRanks() override {
        if (cluster_.rank() == 0)
            for (int r = 1; r < cluster_.size(); ++r)
                cluster_.send(r, {{"kind", "stop"}});
    }
    MpiSweepRanks(MpiSweepRanks const&) = delete;
    MpiSweepRanks& operator=(MpiSweepRanks const&) = delete;
    int rank() const override { return cluster_.rank(); }
    int size() const override { return cluster_.size(); }
    std::vector<int> devicesOfThisRank(std::vector<int> const& visible) const override {
        return cluster_.devicesOfThisRank(visible);
    }
    std::unique_ptr<scheduler::Evaluator> spread(std::unique_ptr<scheduler::Evaluator> local,
                                                 scheduler::TuningKey const& key,
                                                 std::size_t slots) override {
        return std::make_unique<scheduler::MpiEvaluator>(cluster_, std::move(local), key, slots,
                                                         timeouts_);
    }
    bool serve(scheduler::Evaluator* local, std::string const& why, scheduler::TuningKey const& key,
               std::size_t slots) override {
        return scheduler::serveSweep(cluster_, local, why, key, slots, timeouts_);
    }

private:
    scheduler::MpiCluster cluster_;
    scheduler::RankTimeouts timeouts_;
};
#endif

} // namespace

std::unique_ptr<SweepRanks> joinMpiJob(scheduler::RankTimeouts const& timeouts) {
#ifdef KILN_HAVE_MPI
    if (launchedRanks() < 2)
        return nullptr;
    auto ranks = std::make_unique<MpiSweepRanks>(timeouts);
    warnIfBound(ranks->rank());
    // Open MPI's mpirun ends the whole job when a rank dies unless told to recover.
    char const* recovery = std::getenv("OMPI_MCA_orte_enable_recovery");
    if (ranks->rank() == 0 && std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr &&
        (recovery == nullptr || std::string(recovery) != "1"))
        fmt::print(stderr, "note: mpirun without --enable-recovery ends the whole job when any "
                           "rank dies; the same command run again resumes from the database\n");
    return ranks;
#else
    (void)timeouts;
    if (int const n = launchedRanks(); n > 1)
        fail("kiln tune was started as {} MPI ranks, but this kiln was built without MPI (no "
             "libopenmpi-dev when CMake configured it; scripts/install-deps.sh installs it): "
             "every rank would run the whole sweep. Run one kiln tune per host, or rebuild",
             n);
    return nullptr;
#endif
}

} // namespace kiln::cli
