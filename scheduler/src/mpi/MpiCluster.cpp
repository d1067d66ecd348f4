#include "kiln/scheduler/MpiCluster.h"

#include "kiln/graph/Error.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <list>
#include <mpi.h>
#include <mutex>
#include <set>
#include <thread>

namespace kiln::scheduler {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTag = 7110;                 // every message of Kiln's protocol
constexpr int kMaxMessageBytes = 64 << 20; // a larger one is received and dropped
constexpr auto kHeartbeat = std::chrono::seconds(1);
constexpr auto kIdlePoll = std::chrono::milliseconds(2);
constexpr auto kFlushLimit = std::chrono::seconds(3); // sends still pending at the end

struct PendingSend {
    std::string buffer;
    MPI_Request request = MPI_REQUEST_NULL;
};

} // namespace

struct MpiCluster::State {
    int rank = 0, size = 1, localRank = 0, localSize = 1;
    bool sameDevicesOnHost = true;
    std::string host;
    mutable std::mutex mutex;
    std::condition_variable arrived;
    std::deque<RankMessage> incoming;
    std::deque<std::pair<int, std::string>> outgoing;
    std::vector<Clock::time_point> lastHeard;
    std::set<int> lost;
    std::uint64_t ids = 0;
    std::atomic<bool> stopping{false};
    std::thread thread;

    void communicate();
};

MpiCluster::MpiCluster()
    : state_(std::make_unique<State>()) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        fail("MPI_Init_thread failed");
    if (provided < MPI_THREAD_SERIALIZED) {
        MPI_Finalize();
        fail("this MPI library gives thread support level {}; Kiln needs MPI_THREAD_SERIALIZED",
             provided);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    State& s = *state_;
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.size);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(name, &length);
    s.host.assign(name, std::size_t(std::max(length, 0)));

    // The ranks of this host, and whether they all see the same devices: a hash of
    // CUDA_VISIBLE_DEVICES, equal everywhere when its smallest and largest values are.
    MPI_Comm local = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &s.localRank);
    MPI_Comm_size(local, &s.localSize);
    char const* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    unsigned long long const hash =
        std::hash<std::string>{}(visible == nullptr ? std::string("\x01unset") : visible);
    unsigned long long lowest = 0, highest = 0;
    MPI_Allreduce(&hash, &lowest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, local);
    MPI_Allreduce(&hash, &highest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, local);
    s.sameDevicesOnHost = lowest == highest;
    MPI_Comm_free(&local);

    s.lastHeard.assign(std::size_t(s.size), Clock::now());
    s.thread = std::thread([&s] { s.communicate(); });
}

MpiCluster::~MpiCluster() {
    state_->stopping = true;
    state_->thread.join();
    // Open MPI 4.1's MPI_Finalize waits for every rank, a dead one too (it hung for good in
    // tests/scheduler/tune-mpi.sh once a rank had been killed): rank 0, whose work is then all
    // written, ends the job instead, with status 0.
    if (state_->rank == 0 && !state_->lost.empty()) {
        std::fflush(stdout);
        std::fprintf(stderr,
                     "note: %zu rank(s) lost; the sweep's work is written, and the job "
                     "ends through MPI_Abort with status 0 (MPI_Finalize would wait for "
                     "them)\n",
                     state_->lost.size());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 0);
    }
    MPI_Finalize();
}

void MpiCluster::State::communicate() {
    std::list<PendingSend> pending;
    auto nextBeat = Clock::now();
    std::optional<Clock::time_point> stoppedAt;
    auto const post = [&](int destination, std::string text) {
        // The buffer must stay where it is until the send completes: a list never moves it.
        PendingSend& p = pending.emplace_back();
        p.buffer = std::move(text);
        MPI_Isend(p.buffer.data(), int(p.buffer.size()), MPI_CHAR, destination, kTag,
                  MPI_COMM_WORLD, &p.request);
    };
    while (true) {
        bool busy = false;
        std::deque<std::pair<int, std::string>> toSend;
        {
            std::lock_guard lock(mutex);
            toSend.swap(outgoing);
        }
        for (auto& [destination, text] : toSend) {
            post(destination, std::move(text));
            busy = true;
        }
        for (auto it = pending.begin(); it != pending.end();) {
            int done = 0;
            if (MPI_Test(&it->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done)
                it = pending.erase(it);
            else
                ++it;
        }
        // Receive what has arrived, a bounded number at a time.
        for (int n = 0; n < 256; ++n) {
            int flag = 0;
            MPI_Status status;
            if (MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &status) != MPI_SUCCESS ||
                !flag)
                break;
            busy = true;
            int count = 0;
            MPI_Get_count(&status, MPI_CHAR, &count);
            std::string text(std::size_t(std::max(count, 0)), '\0');
            MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, kTag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            int const source = status.MPI_SOURCE;
            if (source < 0 || source >= size)
                continue;
            auto body = count <= kMaxMessageBytes ? nlohmann::json::parse(text, nullptr, false)
                                                  : nlohmann::json();
            std::lock_guard lock(mutex);
            lastHeard[std::size_t(source)] = Clock::now();
            if (body.is_object() && body.value("kind", "") != "heartbeat") {
                incoming.push_back({source, std::move(body)});
                arrived.notify_all();
            }
        }
        if (Clock::now() >= nextBeat) {
            std::string const beat = R"({"kind":"heartbeat"})";
            std::vector<int> to;
            {
                std::lock_guard lock(mutex);
                for (int r = 0; r < size; ++r)
                    if (r != rank && (rank == 0 || r == 0) && !lost.count(r))
                        to.push_back(r);
            }
            for (int r : to)
                post(r, beat);
            nextBeat = Clock::now() + kHeartbeat;
        }
        if (stopping) {
            bool queued = false;
            {
                std::lock_guard lock(mutex);
                queued = !outgoing.empty();
            }
            if (!stoppedAt)
                stoppedAt = Clock::now();
            // What a lost rank never takes is left behind after a while.
            if (!queued && (pending.empty() || Clock::now() - *stoppedAt > kFlushLimit)) {
                for (auto& p : pending) {
                    MPI_Cancel(&p.request);
                    MPI_Request_free(&p.request);
                }
                return;
            }
        }
        if (!busy)
            std::this_thread::sleep_for(kIdlePoll);
    }
}

int MpiCluster::rank() const {
    return state_->rank;
}
int MpiCluster::size() const {
    return state_->size;
}
int MpiCluster::localRank() const {
    return state_->localRank;
}
int MpiCluster::localSize() const {
    return state_->localSize;
}
std::string const& MpiCluster::host() const {
    return state_->host;
}

std::vector<int> MpiCluster::devicesOfThisRank(std::vector<int> const& visible) const {
    if (!state_->sameDevicesOnHost)
        return visible;
    std::vector<int> mine;
    for (std::size_t i = std::size_t(state_->localRank); i < visible.size();
         i += std::size_t(state_->localSize))
        mine.push_back(visible[i]);
    return mine;
}

void MpiCluster::send(int rank, nlohmann::json body) {
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    if (rank == s.rank) {
        s.incoming.push_back({rank, std::move(body)});
        s.arrived.notify_all();
    } else if (rank >= 0 && rank < s.size) {
        s.outgoing.emplace_back(rank, body.dump());
    }
}

std::optional<RankMessage> MpiCluster::receive(std::chrono::duration<double> timeout) {
    State& s = *state_;
    std::unique_lock lock(s.mutex);
    if (!s.arrived.wait_for(lock, timeout, [&] { return !s.incoming.empty(); }))
        return std::nullopt;
    RankMessage m = std::move(s.incoming.front());
    s.incoming.pop_front();
    return m;
}

double MpiCluster::silentSeconds(int rank) const {
    State const& s = *state_;
    if (rank == s.rank || rank < 0 || rank >= s.size)
        return 0;
    std::lock_guard lock(s.mutex);
    return std::chrono::duration<double>(Clock::now() - s.lastHeard[std::size_t(rank)]).count();
}

void MpiCluster::markLost(int rank) {
    std::lock_guard lock(state_->mutex);
    state_->lost.insert(rank);
}

bool MpiCluster::lost(int rank) const {
    std::lock_guard lock(state_->mutex);
    return state_->lost.count(rank) != 0;
}

std::uint64_t MpiCluster::nextId() {
    std::lock_guard lock(state_->mutex);
    return ++state_->ids;
}

void MpiCluster::abort(int code) {
    state_->stopping = true;
    state_->thread.join();
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
}

} // namespace kiln::scheduler
