#include "kiln/scheduler/MpiEvaluator.h"

#include "kiln/graph/Error.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fmt/format.h>
#include <mutex>
#include <thread>

namespace kiln::scheduler {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr std::size_t kMostSlots = 4096;
// How long the first deal waits for every rank to answer "begin", so that a rank still starting
// is not left without candidates by the ones that started first.
constexpr auto kReadyGrace = std::chrono::seconds(10);

// The key's compared fields, in TuningKey's order, with their names for messages.
std::vector<std::pair<char const*, std::string const*>> keyFields(TuningKey const& k) {
    return {{"problem", &k.problem},    {"target", &k.target}, {"gpu", &k.gpu},
            {"driver", &k.driver},      {"kiln", &k.kiln},     {"pipeline", &k.pipeline},
            {"evaluator", &k.evaluator}};
}

nlohmann::json keyToJson(TuningKey const& k) {
    nlohmann::json j = nlohmann::json::object();
    for (auto const& [name, value] : keyFields(k))
        j[name] = *value;
    return j;
}

// Why this rank's key is not rank 0's, or "" when it is.
std::string keyDifference(TuningKey const& mine, nlohmann::json const& theirs) {
    for (auto const& [name, value] : keyFields(mine)) {
        std::string const other =
            theirs.is_object() && theirs.contains(name) && theirs[name].is_string()
                ? theirs[name].get<std::string>()
                : "(none)";
        if (other != *value)
            return fmt::format("its {} is '{}' where rank 0's is '{}'", name, value->substr(0, 120),
                               other.substr(0, 120));
    }
    return "";
}

nlohmann::json evaluationToJson(Evaluation const& e) {
    return {{"ok", e.ok},
            {"us", e.microseconds},
            {"spread", e.spread},
            {"samples", e.samples},
            {"stage", e.stage},
            {"error", e.error},
            {"compile_s", e.compileSeconds},
            {"extra", e.extra}};
}

// A result from another rank; anything malformed is a failure of the candidate that says so.
Evaluation evaluationFromJson(nlohmann::json const& j) {
    Evaluation e;
    try {
        e.ok = j.at("ok").get<bool>();
        e.microseconds = j.at("us").get<double>();
        e.spread = j.at("spread").get<double>();
        e.samples = j.at("samples").get<int>();
        e.stage = j.at("stage").get<std::string>();
        e.error = j.at("error").get<std::string>();
        e.compileSeconds = j.at("compile_s").get<double>();
        e.extra = j.at("extra").get<std::map<std::string, double>>();
    } catch (nlohmann::json::exception const& x) {
        e = Evaluation{};
        e.stage = "run";
        e.error = fmt::format("the rank's result could not be read: {}", x.what());
    }
    return e;
}

double numberOr(nlohmann::json const& j, char const* name, double otherwise) {
    return j.contains(name) && j[name].is_number() ? j[name].get<double>() : otherwise;
}

// Evaluates the candidates dealt to this rank on a thread of its own, up to `chunk` at a time
// as one batch of its evaluator, so that messages keep flowing meanwhile. Each result goes to
// `done` with the candidate's id.
class DealtCandidates {
public:
    using Done = std::function<void(std::uint64_t id, Evaluation const&)>;
    DealtCandidates(Evaluator& evaluator, std::size_t chunk, Done done)
        : evaluator_(evaluator)
        , chunk_(std::max<std::size_t>(chunk, 1))
        , done_(std::move(done))
        , thread_([this] { run(); }) {}
    /// Drops what is queued and waits for the batch in hand.
    ~DealtCandidates() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            queue_.clear();
        }
        wake_.notify_all();
        thread_.join();
    }
    DealtCandidates(DealtCandidates const&) = delete;
    DealtCandidates& operator=(DealtCandidates const&) = delete;

    void add(std::uint64_t id, Candidate candidate) {
        {
            std::lock_guard lock(mutex_);
            queue_.emplace_back(id, std::move(candidate));
        }
        wake_.notify_all();
    }

private:
    void run() {
        while (true) {
            std::vector<std::uint64_t> ids;
            std::vector<Candidate> batch;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (stopping_)
                    return;
                while (!queue_.empty() && batch.size() < chunk_) {
                    ids.push_back(queue_.front().first);
                    batch.push_back(std::move(queue_.front().second));
                    queue_.pop_front();
                }
            }
            try {
                evaluator_.evaluate(batch,
                                    [&](std::size_t i, Evaluation const& e) { done_(ids[i], e); });
            } catch (std::exception const& x) {
                // The evaluator could not run at all (a folder it cannot make...): every
                // candidate of the batch fails with the reason, and the sweep goes on.
                Evaluation e;
                e.stage = "run";
                e.error = x.what();
                for (auto id : ids)
                    done_(id, e);
            }
        }
    }

    Evaluator& evaluator_;
    std::size_t chunk_;
    Done done_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::pair<std::uint64_t, Candidate>> queue_;
    bool stopping_ = false;
    std::thread thread_;
};

} // namespace

struct MpiEvaluator::Peer {
    enum class State : std::uint8_t { Waiting, Ready, Declined, Lost } state = State::Waiting;
    std::size_t slots = 0;
    struct InFlight {
        std::size_t index = 0;
        Clock::time_point since;
    };
    std::map<std::uint64_t, InFlight> inFlight;
    double compileSeconds = 0, measureSeconds = 0;
};

MpiEvaluator::MpiEvaluator(MpiCluster& cluster, std::unique_ptr<Evaluator> local, TuningKey key,
                           std::size_t localSlots, RankTimeouts timeouts)
    : cluster_(cluster)
    , local_(std::move(local))
    , key_(std::move(key))
    , timeouts_(timeouts)
    , sweep_(cluster.nextId())
    , begun_(std::chrono::steady_clock::now()) {
    KILN_ASSERT(local_ && cluster_.rank() == 0, "the MPI evaluator runs on rank 0");
    Peer& self = peers_[0];
    self.state = Peer::State::Ready;
    self.slots = std::clamp<std::size_t>(localSlots, 1, kMostSlots);
    for (int r = 1; r < cluster_.size(); ++r) {
        if (cluster_.lost(r))
            continue;
        peers_[r];
        cluster_.send(r, {{"kind", "begin"}, {"sweep", sweep_}, {"key", keyToJson(key_)}});
    }
}

MpiEvaluator::~MpiEvaluator() {
    for (auto const& [r, peer] : peers_)
        if (r != 0 && peer.state != Peer::State::Lost)
            cluster_.send(r, {{"kind", "end"}, {"sweep", sweep_}});
}

double MpiEvaluator::compileSeconds() const {
    return local_->compileSeconds() + compileSeconds_.load();
}

double MpiEvaluator::measureSeconds() const {
    return local_->measureSeconds() + measureSeconds_.load();
}

void MpiEvaluator::evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) {
    std::deque<std::size_t> undealt;
    for (std::size_t i = 0; i < batch.size(); ++i)
        undealt.push_back(i);
    std::vector<bool> finished(batch.size(), false);
    std::size_t left = batch.size();
    // Rank 0's own share goes through the cluster as messages to itself, like any rank's.
    DealtCandidates mine(
        *local_, std::max<std::size_t>(1, peers_.at(0).slots / 2),
        [&](std::uint64_t id, Evaluation const& e) {
            cluster_.send(0, {{"kind", "result"}, {"id", id}, {"evaluation", evaluationToJson(e)}});
        });

    auto const lose = [&](int r, Peer& peer, std::string const& why) {
        peer.state = Peer::State::Lost;
        cluster_.markLost(r);
        for (auto it = peer.inFlight.rbegin(); it != peer.inFlight.rend(); ++it)
            undealt.push_front(it->second.index);
        fmt::print(stderr,
                   "note: rank {} lost ({}); its {} candidate(s) in flight are dealt again\n", r,
                   why, peer.inFlight.size());
        peer.inFlight.clear();
    };

    while (left > 0) {
        bool const waiting = std::any_of(peers_.begin(), peers_.end(), [](auto const& p) {
            return p.second.state == Peer::State::Waiting;
        });
        for (auto& [r, peer] : peers_) {
            if (peer.state != Peer::State::Ready ||
                (waiting && Clock::now() < begun_ + kReadyGrace))
                continue;
            while (peer.inFlight.size() < peer.slots && !undealt.empty()) {
                std::size_t const i = undealt.front();
                undealt.pop_front();
                std::uint64_t const id = cluster_.nextId();
                peer.inFlight[id] = {i, Clock::now()};
                if (r == 0)
                    mine.add(id, batch[i]);
                else
                    cluster_.send(r,
                                  {{"kind", "candidate"}, {"id", id}, {"params", batch[i].params}});
            }
        }
        if (auto m = cluster_.receive(kPoll)) {
            auto it = peers_.find(m->rank);
            std::string const kind = m->body.value("kind", "");
            bool const thisSweep = m->body.contains("sweep") && m->body["sweep"] == sweep_;
            if (it != peers_.end() && it->second.state == Peer::State::Waiting && thisSweep) {
                if (kind == "ready") {
                    it->second.state = Peer::State::Ready;
                    it->second.slots = std::size_t(
                        std::clamp(numberOr(m->body, "slots", 1), 1.0, double(kMostSlots)));
                } else if (kind == "declined") {
                    it->second.state = Peer::State::Declined;
                    fmt::print(stderr, "note: rank {} takes no part in this sweep: {}\n", m->rank,
                               m->body.value("reason", "no reason given"));
                }
            } else if (it != peers_.end() && it->second.state == Peer::State::Ready &&
                       kind == "result" && m->body.contains("id") &&
                       m->body["id"].is_number_unsigned()) {
                Peer& peer = it->second;
                auto const flight = peer.inFlight.find(m->body["id"].get<std::uint64_t>());
                if (flight != peer.inFlight.end()) {
                    std::size_t const i = flight->second.index;
                    peer.inFlight.erase(flight);
                    if (m->rank != 0) {
                        double const c = numberOr(m->body, "compile_s", peer.compileSeconds);
                        double const s = numberOr(m->body, "measure_s", peer.measureSeconds);
                        compileSeconds_ += c - peer.compileSeconds;
                        measureSeconds_ += s - peer.measureSeconds;
                        peer.compileSeconds = c;
                        peer.measureSeconds = s;
                    }
                    if (!finished[i]) {
                        finished[i] = true;
                        --left;
                        done(i, evaluationFromJson(m->body.value("evaluation", nlohmann::json())));
                    }
                }
            }
            // Anything else (a late answer of a lost rank, an earlier sweep's) is ignored.
        }
        auto const now = Clock::now();
        for (auto& [r, peer] : peers_) {
            if (r == 0 || (peer.state != Peer::State::Ready && peer.state != Peer::State::Waiting))
                continue;
            double const silent = cluster_.silentSeconds(r);
            if (silent > timeouts_.silentSeconds) {
                lose(r, peer, fmt::format("silent for {:.0f} s", silent));
                continue;
            }
            for (auto const& [id, flight] : peer.inFlight)
                if (std::chrono::duration<double>(now - flight.since).count() >
                    timeouts_.candidateSeconds) {
                    lose(r, peer,
                         fmt::format("a candidate took more than {:.0f} s",
                                     timeouts_.candidateSeconds));
                    break;
                }
        }
    }
}

bool serveSweep(MpiCluster& cluster, Evaluator* local, std::string const& why, TuningKey const& key,
                std::size_t slots, RankTimeouts const& timeouts) {
    // The next message from rank 0, or nothing after a poll; rank 0's silence ends the job.
    auto const fromRankZero = [&]() -> std::optional<nlohmann::json> {
        auto m = cluster.receive(kPoll);
        if (double const silent = cluster.silentSeconds(0); silent > timeouts.silentSeconds) {
            fmt::print(stderr,
                       "error: rank {} on {}: rank 0 has been silent for {:.0f} s; ending the "
                       "job (run the same command again to resume from the database)\n",
                       cluster.rank(), cluster.host(), silent);
            std::fflush(stderr);
            cluster.abort(1);
        }
        if (m && m->rank == 0)
            return std::move(m->body);
        return std::nullopt;
    };

    nlohmann::json begin;
    while (true) {
        auto m = fromRankZero();
        if (!m)
            continue;
        std::string const kind = m->value("kind", "");
        if (kind == "stop")
            return false;
        if (kind == "begin") {
            begin = std::move(*m);
            break;
        }
        // A candidate or "end" of a sweep this rank was lost from: nothing to do.
    }
    nlohmann::json const sweep = begin.value("sweep", nlohmann::json());
    std::string const reason =
        local == nullptr ? why : keyDifference(key, begin.value("key", nlohmann::json()));
    if (!reason.empty())
        cluster.send(0, {{"kind", "declined"},
                         {"sweep", sweep},
                         {"reason", fmt::format("rank {} on {}: {}", cluster.rank(), cluster.host(),
                                                reason)}});
    else
        cluster.send(0, {{"kind", "ready"}, {"sweep", sweep}, {"slots", slots}});

    std::optional<DealtCandidates> dealt;
    if (reason.empty())
        dealt.emplace(*local, std::max<std::size_t>(1, slots / 2),
                      [&](std::uint64_t id, Evaluation const& e) {
                          cluster.send(0, {{"kind", "result"},
                                           {"id", id},
                                           {"evaluation", evaluationToJson(e)},
                                           {"compile_s", local->compileSeconds()},
                                           {"measure_s", local->measureSeconds()}});
                      });
    while (true) {
        auto m = fromRankZero();
        if (!m)
            continue;
        std::string const kind = m->value("kind", "");
        if (kind == "stop")
            return false;
        if (kind == "end" && m->value("sweep", nlohmann::json()) == sweep)
            return true;
        if (kind == "candidate" && dealt && m->contains("id") && (*m)["id"].is_number_unsigned()) {
            std::uint64_t const id = (*m)["id"].get<std::uint64_t>();
            Candidate c;
            try {
                c.params = m->at("params").get<std::map<std::string, std::int64_t>>();
            } catch (nlohmann::json::exception const& x) {
                Evaluation e;
                e.stage = "run";
                e.error = fmt::format("rank {} could not read the candidate: {}", cluster.rank(),
                                      x.what());
                cluster.send(0,
                             {{"kind", "result"}, {"id", id}, {"evaluation", evaluationToJson(e)}});
                continue;
            }
            dealt->add(id, std::move(c));
        }
    }
}

} // namespace kiln::scheduler
