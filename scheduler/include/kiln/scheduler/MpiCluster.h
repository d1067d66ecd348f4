// MpiCluster.h: the ranks of an MPI job (mpirun, srun) as a sweep sees them.
//
// Every rank runs the same `kiln tune`; rank 0 sweeps and the others evaluate what it deals them
// (MpiEvaluator.h). MPI stays inside this class, so that nothing else in Kiln needs its headers:
// ranks exchange JSON objects, each with a "kind", sent and received by one communication
// thread per rank (the only thread that calls MPI between MPI_Init and MPI_Finalize). That
// thread also sends a heartbeat every second, from rank 0 to every other rank and from each of
// them to rank 0, so that either side can tell how long the other has been silent: a rank that
// is killed, stopped or cut off stops beating. MPI errors return rather than abort
// (MPI_ERRORS_RETURN); whether the job outlives a dead rank is the launcher's choice (Open MPI
// 4: `mpirun --enable-recovery`, without which mpirun ends the whole job when any rank dies).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::scheduler {

/// A message from one rank to another: a JSON object with a "kind".
struct RankMessage {
    int rank = 0; ///< the sender
    nlohmann::json body;
};

class MpiCluster {
public:
    /// MPI_Init (with the thread support the communication thread needs) and the start of that
    /// thread; a UserError when MPI cannot give it.
    MpiCluster();
    /// Sends what is queued (a few seconds at most), stops the thread, MPI_Finalize.
    ~MpiCluster();
    MpiCluster(MpiCluster const&) = delete;
    MpiCluster& operator=(MpiCluster const&) = delete;

    int rank() const;
    int size() const;
    /// This rank among the ranks of its host (MPI_COMM_TYPE_SHARED), and how many they are.
    int localRank() const;
    int localSize() const;
    std::string const& host() const;

    /// The devices of `visible` (this process's GPU ordinals) that this rank measures on. Where
    /// every rank of the host sees the same devices (one CUDA_VISIBLE_DEVICES, or none), they are
    /// shared out by local rank (local rank r of n takes ordinals r, r + n, ...); where the
    /// launcher gave each rank its own (srun --gpus-per-task), each rank takes all it sees.
    std::vector<int> devicesOfThisRank(std::vector<int> const& visible) const;

    /// Queues `body` for `rank`; a message to this rank itself is delivered at once, without MPI.
    void send(int rank, nlohmann::json body);
    /// The next message that arrived (heartbeats excluded), waiting at most `timeout`.
    std::optional<RankMessage> receive(std::chrono::duration<double> timeout);
    /// Seconds since anything (a message or a heartbeat) last came from `rank`, or since the
    /// cluster started; 0 for this rank itself.
    double silentSeconds(int rank) const;

    /// A rank given up on: no more heartbeats are sent to it.
    void markLost(int rank);
    bool lost(int rank) const;
    /// A number never returned before by this cluster (candidate and sweep ids).
    std::uint64_t nextId();

    /// Ends the whole job (MPI_Abort), for a rank that finds rank 0 gone.
    [[noreturn]] void abort(int code);

private:
    struct State;
    std::unique_ptr<State> state_;
};

} // namespace kiln::scheduler
