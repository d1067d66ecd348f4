#include "kiln/scheduler/Evaluator.h"

#include "kiln/scheduler/ChildProcess.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <thread>

namespace kiln::scheduler {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

Evaluation failure(std::string stage, std::string error) {
    Evaluation e;
    e.stage = std::move(stage);
    e.error = std::move(error);
    return e;
}

// The last line of a child's stderr that says something, to explain a failure.
std::string lastWords(std::string const& text) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
        t.pop_back();
    auto const nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

// The numbers a child reported in its answer's "extra", kept with the candidate's record.
void keepExtra(nlohmann::json const& answer, Evaluation& e) {
    if (answer.contains("extra") && answer["extra"].is_object())
        for (auto const& [k, v] : answer["extra"].items())
            if (v.is_number())
                e.extra[k] = v.get<double>();
}

std::string explain(std::string const& how, std::string const& stderrText) {
    std::string const words = lastWords(stderrText);
    return words.empty() ? how : fmt::format("{}: {}", how, words);
}

} // namespace

SampleStats summarize(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    auto const at = [&](double q) {
        double const pos = q * double(samples.size() - 1);
        auto const lo = static_cast<std::size_t>(std::floor(pos));
        auto const hi = std::min(lo + 1, samples.size() - 1);
        return samples[lo] + (samples[hi] - samples[lo]) * (pos - double(lo));
    };
    SampleStats s;
    s.median = at(0.5);
    s.spread = s.median > 0 ? (at(0.9) - at(0.1)) / s.median : 0;
    return s;
}

Evaluation compileCandidate(CompileOptions const& options, Candidate const& candidate,
                            std::string const& artifact) {
    auto const start = Clock::now();
    Evaluation e;
    try {
        ChildProcess child(options.argv);
        nlohmann::json request = options.context;
        request["params"] = candidate.params;
        request["artifact"] = artifact;
        child.writeLine(request.dump());
        child.closeInput();
        std::string line;
        ReadStatus const status =
            child.readLine(line, std::chrono::duration<double>(options.timeoutSeconds));
        if (status == ReadStatus::Timeout) {
            child.kill();
            child.wait();
            e = failure("timeout", fmt::format("the compile did not finish within {} s",
                                               options.timeoutSeconds));
        } else if (status == ReadStatus::Closed) {
            std::string const how = child.wait();
            e = failure("compile", "the compiler " + explain(how, child.errorOutput()));
        } else {
            child.wait();
            auto const answer = nlohmann::json::parse(line, nullptr, false);
            if (!answer.is_object() || !answer.contains("ok") || !answer["ok"].is_boolean())
                e = failure("compile", "the compiler answered something else than a result: " +
                                           line.substr(0, 200));
            else if (!answer["ok"].get<bool>())
                e = failure("compile", answer.value("error", "the compile failed"));
            else {
                e.ok = true;
                keepExtra(answer, e);
            }
        }
    } catch (std::exception const& x) {
        e = failure("compile", x.what());
    }
    e.compileSeconds = secondsSince(start);
    return e;
}

namespace {

// Runs `work(i)` for every i < n on up to `jobs` threads.
void inParallel(std::size_t n, unsigned jobs, std::function<void(std::size_t)> const& work) {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    unsigned const count = std::max(1u, std::min<unsigned>(jobs, unsigned(n)));
    for (unsigned j = 0; j < count; ++j)
        threads.emplace_back([&] {
            for (std::size_t i = next++; i < n; i = next++)
                work(i);
        });
    for (auto& t : threads)
        t.join();
}

std::string artifactPath(std::string const& folder, std::size_t number) {
    return (std::filesystem::path(folder) / fmt::format("candidate-{}", number)).string();
}

} // namespace

ModelEvaluator::ModelEvaluator(Problem problem, arch::Arch const& arch,
                               std::optional<CompileOptions> compile, std::string artifacts,
                               std::string label, std::map<std::string, std::int64_t> defaults)
    : problem_(std::move(problem))
    , arch_(arch)
    , compile_(std::move(compile))
    , artifacts_(std::move(artifacts))
    , label_(std::move(label))
    , defaults_(std::move(defaults)) {
    if (compile_) {
        std::error_code ec;
        std::filesystem::create_directories(artifacts_, ec);
        if (ec)
            fail("cannot make the folder '{}': {}", artifacts_, ec.message());
    }
}

void ModelEvaluator::evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) {
    std::mutex mutex;
    std::size_t const first = counter_;
    counter_ += batch.size();
    // Compiled for the problem's sizes (`kiln tune --specialize` puts them in the context).
    bool madeForSizes = false;
    if (compile_) {
        auto const sizes = compile_->context.find("sizes");
        madeForSizes = sizes != compile_->context.end() && !sizes->is_null() && !sizes->empty();
    }
    auto const one = [&](std::size_t i) {
        Evaluation compiled;
        ResourceUsage used;
        if (compile_) {
            compiled = compileCandidate(*compile_, batch[i], artifactPath(artifacts_, first + i));
            if (!compiled.ok) {
                std::lock_guard lock(mutex);
                compileSeconds_ += compiled.compileSeconds;
                done(i, compiled);
                return;
            }
            if (auto r = compiled.extra.find("registers");
                r != compiled.extra.end() && r->second > 0)
                used.registers = static_cast<int>(r->second);
            if (auto s = compiled.extra.find("shared_bytes"); s != compiled.extra.end())
                used.sharedBytes = static_cast<std::int64_t>(s->second);
            if (auto s = compiled.extra.find("spill_bytes"); s != compiled.extra.end())
                used.spillBytes = static_cast<std::int64_t>(s->second);
            used.madeForSizes = madeForSizes;
        }
        std::map<std::string, std::int64_t> params = defaults_;
        for (auto const& param : batch[i].params)
            params[param.first] = param.second;
        CostEstimate const c = estimateCost(problem_, arch_, params, used);
        Evaluation e = c.feasible ? Evaluation{} : failure("model", c.reason);
        e.ok = c.feasible;
        e.microseconds = c.feasible ? c.microseconds : 0;
        e.compileSeconds = compiled.compileSeconds;
        e.extra = compiled.extra;
        e.extra["registers"] = c.registers;
        e.extra["shared_bytes"] = double(c.sharedBytes);
        e.extra["blocks_per_sm"] = c.blocksPerMultiprocessor;
        e.extra["compute_us"] = c.computeUs;
        e.extra["memory_us"] = c.memoryUs;
        std::lock_guard lock(mutex);
        compileSeconds_ += compiled.compileSeconds;
        done(i, e);
    };
    if (compile_)
        inParallel(batch.size(), compile_->jobs, one);
    else
        for (std::size_t i = 0; i < batch.size(); ++i)
            one(i);
}

struct MeasuredEvaluator::Worker {
    int device = 0;
    std::unique_ptr<ChildProcess> process;
};

MeasuredEvaluator::MeasuredEvaluator(MeasuredOptions options, std::string artifacts)
    : options_(std::move(options))
    , artifacts_(std::move(artifacts)) {
    if (options_.compile.argv.empty() || options_.workerArgv.empty())
        fail("the measured evaluator needs a compile and a worker program");
    if (options_.devices.empty())
        fail("the measured evaluator needs at least one device");
    std::error_code ec;
    std::filesystem::create_directories(artifacts_, ec);
    if (ec)
        fail("cannot make the folder '{}': {}", artifacts_, ec.message());
    for (int d : options_.devices)
        workers_.push_back(std::make_unique<Worker>(Worker{d, nullptr}));
}

MeasuredEvaluator::~MeasuredEvaluator() = default;

void MeasuredEvaluator::evaluate(std::vector<Candidate> const& batch, OnEvaluated const& done) {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::size_t> compiled;
    std::vector<Evaluation> results(batch.size());
    std::size_t compilesLeft = batch.size();
    std::size_t const first = counter_;
    counter_ += batch.size();

    auto const report = [&](std::size_t i, Evaluation const& e) {
        std::lock_guard lock(mutex);
        done(i, e);
    };
    auto const artifactOf = [&](std::size_t i) { return artifactPath(artifacts_, first + i); };

    auto compileOne = [&](std::size_t i) {
        Evaluation const e = compileCandidate(options_.compile, batch[i], artifactOf(i));
        std::lock_guard lock(mutex);
        compileSeconds_ += e.compileSeconds;
        results[i] = e;
        --compilesLeft;
        if (e.ok)
            compiled.push_back(i);
        else
            done(i, e);
        ready.notify_all();
    };

    auto measureOn = [&](Worker& w) {
        while (true) {
            std::size_t i = 0;
            {
                std::unique_lock lock(mutex);
                ready.wait(lock, [&] { return !compiled.empty() || compilesLeft == 0; });
                if (compiled.empty())
                    return;
                i = compiled.front();
                compiled.pop_front();
            }
            auto const start = Clock::now();
            Evaluation e = results[i];
            e.ok = false;
            try {
                if (!w.process) {
                    std::vector<std::string> argv = options_.workerArgv;
                    argv.push_back("--device");
                    argv.push_back(std::to_string(w.device));
                    w.process = std::make_unique<ChildProcess>(argv);
                    std::string line;
                    if (w.process->readLine(
                            line, std::chrono::duration<double>(options_.workerStartSeconds)) !=
                        ReadStatus::Line) {
                        w.process->kill();
                        std::string const how = w.process->wait();
                        std::string const text = w.process->errorOutput();
                        w.process.reset();
                        throw std::runtime_error("the worker did not start: " + explain(how, text));
                    }
                    auto const hello = nlohmann::json::parse(line, nullptr, false);
                    std::lock_guard lock(mutex);
                    if (device_.empty() && hello.is_object())
                        device_ = hello.value("device", "");
                }
                nlohmann::json request = options_.context;
                request["id"] = first + i;
                request["params"] = batch[i].params;
                request["artifact"] = artifactOf(i);
                request["warmup"] = options_.warmup;
                request["warmup_seconds"] = options_.warmupSeconds;
                request["repetitions"] = options_.repetitions;
                request["max_repetitions"] = options_.maxRepetitions;
                request["precision"] = options_.precision / (batch[i].finalist ? 10 : 1);
                request["max_seconds"] = options_.maxSeconds;
                w.process->writeLine(request.dump());
                std::string line;
                ReadStatus const status = w.process->readLine(
                    line, std::chrono::duration<double>(options_.measureTimeoutSeconds));
                if (status != ReadStatus::Line) {
                    if (status == ReadStatus::Timeout)
                        w.process->kill();
                    std::string const how = w.process->wait();
                    std::string const text = w.process->errorOutput();
                    w.process.reset();
                    e.stage = status == ReadStatus::Timeout ? "hang" : "crash";
                    e.error = status == ReadStatus::Timeout
                                  ? fmt::format("no answer within {} s; the watchdog killed the "
                                                "worker",
                                                options_.measureTimeoutSeconds)
                                  : "the worker died: " + explain(how, text);
                } else {
                    auto const answer = nlohmann::json::parse(line, nullptr, false);
                    if (!answer.is_object() || answer.value("id", std::size_t(-1)) != first + i) {
                        w.process->kill();
                        w.process->wait();
                        w.process.reset();
                        e.stage = "run";
                        e.error = "the worker answered out of turn: " + line.substr(0, 200);
                    } else if (!answer.value("ok", false)) {
                        e.stage = answer.value("stage", "run");
                        e.error = answer.value("error", "the measurement failed");
                    } else if (answer.contains("median_us")) {
                        // A worker that times on its own reports the median and the best.
                        double const median = answer.at("median_us").get<double>();
                        double const best = answer.value("min_us", median);
                        e.ok = median > 0;
                        e.microseconds = median;
                        e.spread = median > 0 ? (median - best) / median : 0;
                        e.samples = answer.value("samples", 0);
                        if (!e.ok) {
                            e.stage = "run";
                            e.error = "the worker reported a time of 0";
                        }
                    } else {
                        std::vector<double> samples;
                        for (auto const& s : answer.at("samples_us"))
                            samples.push_back(s.get<double>());
                        if (samples.empty()) {
                            e.stage = "run";
                            e.error = "the worker returned no samples";
                        } else {
                            SampleStats const stats = summarize(samples);
                            e.ok = true;
                            e.microseconds = stats.median;
                            e.spread = stats.spread;
                            e.samples = static_cast<int>(samples.size());
                        }
                    }
                    keepExtra(answer, e);
                }
            } catch (std::exception const& x) {
                e.stage = "crash";
                e.error = x.what();
            }
            {
                std::lock_guard lock(mutex);
                measureSeconds_ += secondsSince(start);
            }
            report(i, e);
        }
    };

    std::vector<std::thread> threads;
    threads.emplace_back([&] { inParallel(batch.size(), options_.compile.jobs, compileOne); });
    for (auto& w : workers_)
        threads.emplace_back([&, worker = w.get()] { measureOn(*worker); });
    for (auto& t : threads)
        t.join();
}

} // namespace kiln::scheduler
