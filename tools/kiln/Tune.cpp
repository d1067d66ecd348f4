// kiln tune CMD.json --space S.json [--target T]... [--evaluator auto|model|cuda|interpreter]
//           [--strategy S] [--seed N] [--budget N] [--seconds S] [--db FILE] [-o DIR] ...
// Sweeps a search space over a Command's lowering pipeline for each target: the strategy
// proposes points, the evaluator compiles them in parallel child processes and estimates
// (cost model) or measures them (a worker process per device), and every result goes to the
// tuning database at once; a sweep started again over the same database resumes. At the end:
// DIR/TARGET/report.txt (table) and DIR/TARGET/sweep.svg (plot), and where candidates were
// emitted, the winner exported to DIR/TARGET/export/ (Export.h). Under mpirun or srun the ranks
// run one sweep together (TuneMpi.h): rank 0 sweeps and records, every rank evaluates.
#include "Export.h"
#include "Output.h"
#include "Problem.h"
#include "TuneMpi.h"
#include "Tuning.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/Translate.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/Ptxas.h"
#include "kiln/scheduler/CheckProvenance.h"
#include "kiln/scheduler/Report.h"
#include "kiln/scheduler/Sweep.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/core.h>
#include <thread>
#include <unistd.h>

namespace kiln::cli {

namespace {

std::string selfExecutable() {
    std::error_code ec;
    auto const path = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        fail("cannot find the kiln executable (/proc/self/exe): {}", ec.message());
    return path.string();
}

} // namespace

void addTune(CLI::App& app) {
    struct Options {
        std::string command, space, pipeline, evaluator = "auto", strategy = "model-guided", db,
                                              output = "tune-out", compile = "auto";
        std::vector<std::string> targets, sizes;
        std::uint64_t seed = 1;
        std::size_t budget = 0, topK = 0, batch = 0;
        double seconds = 0, compileTimeout = 120, measureTimeout = 60, rankTimeout = 30;
        unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
        int workers = 1, warmup = 2, repetitions = 10, maxRepetitions = 200;
        double precision = 0.01, measureSeconds = 1, warmupSeconds = 0;
        bool quiet = false, specialize = false;
    };
    auto o = std::make_shared<Options>();
    auto* sub = app.add_subcommand("tune", "Sweep a search space of schedules and record every "
                                           "candidate in a tuning database");
    sub->add_option("command", o->command, "Command file (JSON)")->required();
    sub->add_option("--space", o->space, "Search space file (JSON, docs/tuning.md)")->required();
    sub->add_option("--pipeline", o->pipeline, "Pipeline file (default: the space's \"pipeline\")");
    sub->add_option("--target", o->targets,
                    "Target(s) to tune for (default: the GPU's; without one, arch-db's default "
                    "targets, which `kiln arch list` shows, or the first of them with "
                    "--evaluator model or interpreter)");
    sub->add_option("--size", o->sizes, "Problem size, NAME=VALUE (repeatable)");
    sub->add_option("--evaluator", o->evaluator,
                    "auto (cuda when there is a GPU, else model), model (the analytical cost "
                    "model), cuda (measured on every local GPU) or interpreter (measured on the "
                    "CPU by Kiln's reference interpreter)")
        ->capture_default_str();
    sub->add_option("--strategy", o->strategy, "exhaustive, random, evolutionary, model-guided")
        ->capture_default_str();
    sub->add_option("--seed", o->seed, "Seed of the random strategies")->capture_default_str();
    sub->add_option("--budget", o->budget, "Most candidates (0: no limit)")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t(0), std::size_t(1) << 40));
    sub->add_option("--seconds", o->seconds, "Most seconds (0: no limit)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e9));
    sub->add_option("--top-k", o->topK,
                    "model-guided: candidates measured before refining (0: max(8, --jobs))")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t(0), std::size_t(1) << 20));
    sub->add_option("--batch", o->batch,
                    "Candidates proposed and evaluated at once (0: max(8, 2 x --jobs), so that "
                    "compiles run ahead of measurement)")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t(0), std::size_t(1) << 20));
    sub->add_option("--db", o->db, "Tuning database (default: DIR/tuning.jsonl)");
    sub->add_option("-o,--output", o->output, "Folder for reports")->capture_default_str();
    sub->add_option("--compile", o->compile,
                    "What compiling a candidate does: auto (emit and assemble where Kiln has a "
                    "code generator for the target, else lower), lower, emit, none (model only)")
        ->capture_default_str();
    sub->add_option("-j,--jobs", o->jobs, "Compiles at once")
        ->capture_default_str()
        ->check(CLI::Range(1u, 4096u));
    sub->add_option("--workers", o->workers, "interpreter: measuring workers at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    sub->add_option("--compile-timeout", o->compileTimeout, "Seconds per compile")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 1e6));
    sub->add_option("--measure-timeout", o->measureTimeout, "Seconds per measurement (watchdog)")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 1e6));
    sub->add_option("--warmup", o->warmup, "Untimed runs per candidate")
        ->capture_default_str()
        ->check(CLI::Range(0, 100000));
    sub->add_option("--warmup-seconds", o->warmupSeconds,
                    "Untimed launches of each candidate for at least this long before it is "
                    "timed: every candidate then runs at the clocks the GPU holds under "
                    "sustained load (a GEMM of 180 us ran 20% slower on an H100 after 0.25 s "
                    "of launches than in a burst of 10)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 60.0));
    sub->add_option("--repetitions", o->repetitions, "Timed runs per candidate (the fewest)")
        ->capture_default_str();
    sub->add_option("--precision", o->precision,
                    "Time each candidate until its median is known within this fraction (95% "
                    "confidence; a tenth of it for the finalists), or until --max-repetitions or "
                    "--max-measure-seconds")
        ->capture_default_str();
    sub->add_option("--max-repetitions", o->maxRepetitions, "Most timed runs per candidate")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000000));
    sub->add_option("--max-measure-seconds", o->measureSeconds,
                    "Most seconds of timed runs per candidate")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 1e6));
    sub->add_option("--rank-timeout", o->rankTimeout,
                    "Under mpirun or srun: seconds without a heartbeat after which a rank is "
                    "lost (its candidates are dealt again) or, for rank 0, the job ends")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 1e6));
    sub->add_flag("-q,--quiet", o->quiet, "No progress display");
    sub->add_flag("--specialize", o->specialize,
                  "Compile each candidate for the problem's sizes only (docs/codegen.md: half "
                  "the ptxas time); `kiln export --specialize` exports the winner so made");
    sub->callback([o] {
        Command const command = loadCommand(o->command);
        scheduler::SearchSpace const space = scheduler::loadSearchSpace(o->space);
        std::string const pipelineFile = o->pipeline.empty() ? space.pipeline : o->pipeline;
        if (pipelineFile.empty())
            fail("{}: the search space names no \"pipeline\"; give --pipeline", o->space);
        rules::Pipeline const pipeline = rules::loadPipeline(pipelineFile);
        scheduler::checkAgainstPipeline(space, pipeline);
        // A pipeline written for another kind of Command lowers nothing: say so before sweeping.
        // A parameter the space fixes to one value (COOP=1 for a softmax) is the one it lowers
        // with.
        {
            KernelGraph graph = translate(command);
            rules::EngineOptions fixed;
            for (auto const& p : space.parameters)
                if (p.values.size() == 1)
                    fixed.parameters[p.name] = p.values.front();
            std::int64_t applications = 0;
            try {
                for (auto const& r : rules::lower(pipeline, graph, fixed))
                    applications += r.applications;
            } catch (UserError const&) {
                applications = -1; // the defaults do not lower; the candidates will say why
            }
            if (applications == 0)
                fail("the pipeline '{}' ({}) changes nothing in the Command '{}' ({}): it is a "
                     "pipeline for another kind of Command",
                     pipeline.name, pipelineFile, command.name(), o->command);
        }
        if (!(o->precision > 0 && o->precision < 1))
            fail("--precision {} must lie between 0 and 1 (0.01: the median within 1%)",
                 o->precision);
        if (o->repetitions < 1 || o->maxRepetitions < o->repetitions)
            fail("--repetitions {} must be at least 1 and at most --max-repetitions {}",
                 o->repetitions, o->maxRepetitions);
        // Under mpirun or srun, this rank's part; null on one host. A rank is lost when silent
        // for --rank-timeout, or when a candidate of its stays out longer than all it holds
        // could take (their compiles and measurements one after another, and a worker's start).
        std::size_t const mostSlots = 2 * std::max<std::size_t>({o->jobs, std::size_t(o->workers)});
        auto const ranks = joinMpiJob(
            {.silentSeconds = o->rankTimeout,
             .candidateSeconds = double(mostSlots) * (o->compileTimeout + o->measureTimeout) + 60 +
                                 o->rankTimeout});
        bool const leader = !ranks || ranks->rank() == 0;
        std::size_t const batch = o->batch > 0 ? o->batch
                                               : std::max<std::size_t>(8, 2 * o->jobs) *
                                                     std::size_t(ranks ? ranks->size() : 1);
        std::size_t const topK = o->topK > 0 ? o->topK : std::max<std::size_t>(8, o->jobs);
        auto const sizes = problemOf(command, o->sizes);
        scheduler::Problem const problem = scheduler::problemOf(command, sizes);
        std::string evaluatorName = o->evaluator;
        if (evaluatorName != "auto" && evaluatorName != "model" && evaluatorName != "interpreter" &&
            evaluatorName != "cuda")
            fail("unknown evaluator '{}'; expected auto, model, interpreter or cuda",
                 evaluatorName);
        // The local GPUs, for --evaluator cuda (and auto, which measures on them when there
        // are any and otherwise asks the cost model about arch-db's default targets).
        std::string gpuName = "none", driver = "none", gpuTarget;
        // The GPUs that measure: every visible one (CUDA_VISIBLE_DEVICES chooses which are
        // visible) of the same model as the first, so that one database key names one model.
        std::vector<int> gpuOrdinals;
        int gpus = 0;
        std::string idle; // why this rank evaluates nothing, where it does not
        if (evaluatorName == "cuda" || evaluatorName == "auto") {
            auto platform = runtime::loadPlatform("cuda");
            if (platform.ok() && platform.value()->deviceCount() > 0) {
                auto device = platform.value()->device(0);
                if (device.ok()) {
                    gpuName = device.value()->description().name;
                    gpuTarget = device.value()->description().target;
                    driver = platform.value()->version();
                    for (int d = 0; d < platform.value()->deviceCount(); ++d) {
                        auto other = platform.value()->device(d);
                        if (!other.ok())
                            continue;
                        if (other.value()->description().name == gpuName)
                            gpuOrdinals.push_back(d);
                        else
                            fmt::print(stderr,
                                       "note: device {} ({}) left out: the sweep measures on "
                                       "{} devices only\n",
                                       d, other.value()->description().name, gpuName);
                    }
                    // Under MPI, the GPUs of this host are shared out among its ranks.
                    if (ranks && !gpuOrdinals.empty()) {
                        auto mine = ranks->devicesOfThisRank(gpuOrdinals);
                        if (mine.empty())
                            idle = fmt::format("no GPU of its own ({} GPU(s) for more ranks on "
                                               "this host)",
                                               gpuOrdinals.size());
                        else
                            gpuOrdinals = std::move(mine);
                    }
                    gpus = static_cast<int>(gpuOrdinals.size());
                }
            }
            if (gpus == 0 && evaluatorName == "cuda")
                fail("--evaluator cuda: no usable CUDA GPU ({})",
                     platform.ok() ? "no device" : platform.error().message());
            evaluatorName = gpus > 0 ? "cuda" : "model";
        }
        std::vector<std::string> targets = o->targets;
        if (targets.empty() && evaluatorName == "cuda")
            targets.push_back(gpuTarget);
        if (targets.empty() && o->evaluator == "auto")
            targets = arch::ArchLibrary::instance().defaultTargets();
        if (targets.empty())
            targets.push_back(arch::ArchLibrary::instance().defaultTarget());
        std::string const self = selfExecutable();
        std::string const dbPath = o->db.empty() ? o->output + "/tuning.jsonl" : o->db;
        // Rank 0 alone reads and writes the database.
        std::unique_ptr<scheduler::TuningDatabase> database;
        if (leader) {
            database = std::make_unique<scheduler::TuningDatabase>(dbPath);
            for (auto const& p : database->problems())
                fmt::print(stderr, "{}:{}: warning: skipped: {}\n", dbPath, p.line, p.message);
        }
        bool const haveAssembler = runtime::findPtxas().ok();

        bool stopped = false; // by rank 0, on another rank
        for (auto const& target : targets) {
            if (!leader && !idle.empty()) {
                stopped = !ranks->serve(nullptr, idle, {}, 0);
                if (stopped)
                    break;
                continue;
            }
            rules::ArchFacts const facts = rules::archFacts(target);
            arch::Arch const& arch = arch::ArchLibrary::get(target);
            scheduler::Solver const solver(space, facts, scheduler::commandFacts(command));

            std::string compile = o->compile;
            bool const nvidia = arch.vendor() == arch::Vendor::Nvidia;
            // auto: emit (PTX or AMDGCN) and assemble; a candidate the code generator cannot
            // emit yet is then only lowered, unless it must run (cuda).
            bool const tryEmit = compile == "auto" && evaluatorName != "cuda";
            if (compile == "auto")
                compile = "emit";
            if (compile != "lower" && compile != "emit" && compile != "none")
                fail("unknown --compile '{}'; expected auto, lower, emit or none", compile);
            if (compile == "none" && evaluatorName != "model")
                fail("--compile none works only with the model evaluator");
            nlohmann::json const emit = compile != "emit" ? nlohmann::json(false)
                                        : tryEmit         ? nlohmann::json("try")
                                                          : nlohmann::json(true);
            scheduler::CompileOptions compileOptions{
                .argv = {self, "worker", "compile"},
                .jobs = o->jobs,
                .timeoutSeconds = o->compileTimeout,
                .context = {{"command", o->command},
                            {"pipeline", pipelineFile},
                            {"sizes", o->specialize ? nlohmann::json(sizes) : nlohmann::json()},
                            {"target", target},
                            {"emit", emit},
                            {"assemble",
                             compile == "emit" &&
                                 (nvidia ? haveAssembler : runtime::assemblerFor(target).ok())}}};

            std::string const outDir = o->output + "/" + target;
            // Each rank compiles into a folder of its own: ranks may share a file system.
            std::string const candidates =
                outDir + "/candidates" + (leader ? "" : fmt::format("/rank-{}", ranks->rank()));
            std::unique_ptr<scheduler::Evaluator> evaluator;
            std::string gpu = "none";
            if (evaluatorName == "cuda" && compile != "emit")
                fail("--evaluator cuda needs --compile emit (or auto on an NVIDIA target)");
            if (evaluatorName == "model") {
                std::optional<scheduler::CompileOptions> withCompile;
                if (compile != "none")
                    withCompile = compileOptions;
                evaluator = std::make_unique<scheduler::ModelEvaluator>(
                    problem, arch, withCompile, candidates,
                    compile == "lower" ? "lowered"
                    : tryEmit          ? "emitted-if-possible"
                                       : "emitted",
                    pipeline.defaults);
            } else {
                bool const cuda = evaluatorName == "cuda";
                scheduler::MeasuredOptions m{
                    .name = cuda ? "measured:cuda" : "measured:interpreter",
                    .compile = compileOptions,
                    .workerArgv = {self, "worker", "measure", "--backend",
                                   cuda ? "cuda" : "interpreter"},
                    .devices = {},
                    .measureTimeoutSeconds = o->measureTimeout,
                    .workerStartSeconds = 60,
                    .warmup = o->warmup,
                    .repetitions = o->repetitions,
                    .warmupSeconds = o->warmupSeconds,
                    .maxRepetitions = o->maxRepetitions,
                    .precision = o->precision,
                    .maxSeconds = o->measureSeconds,
                    .context = {{"command", o->command}, {"sizes", sizes}, {"target", target}}};
                // One worker per GPU; for the interpreter, --workers of them.
                if (cuda)
                    m.devices = gpuOrdinals;
                else
                    for (int w = 0; w < std::max(o->workers, 1); ++w)
                        m.devices.push_back(w);
                gpu = cuda ? gpuName : "cpu (reference interpreter)";
                evaluator = std::make_unique<scheduler::MeasuredEvaluator>(m, candidates);
            }
            scheduler::TuningKey const key{problem.canonical(),
                                           problem.summary(),
                                           target,
                                           gpu,
                                           evaluatorName == "cuda" ? driver : "none",
                                           KILN_VERSION,
                                           scheduler::pipelineHash(pipelineFile),
                                           evaluator->name()};
            // Candidates a rank evaluates at once: twice what it compiles or measures at once.
            std::size_t const slots =
                2 * std::max<std::size_t>(
                        {o->jobs, gpuOrdinals.size(),
                         evaluatorName == "interpreter" ? std::size_t(o->workers) : 1});
            if (!leader) {
                stopped = !ranks->serve(evaluator.get(), "", key, slots);
                if (stopped)
                    break;
                continue;
            }
            if (ranks)
                evaluator = ranks->spread(std::move(evaluator), key, slots);

            scheduler::StrategyOptions strategyOptions{.name = o->strategy,
                                                       .seed = o->seed,
                                                       .population = 16,
                                                       .topK = topK,
                                                       .predict = {}};
            strategyOptions.predict = [&](scheduler::Point const& p) {
                std::map<std::string, std::int64_t> params = pipeline.defaults;
                for (auto const& param : solver.named(p))
                    params[param.first] = param.second;
                return scheduler::estimateCost(problem, arch, params,
                                               {.madeForSizes = o->specialize})
                    .microseconds;
            };
            auto strategy = scheduler::makeStrategy(solver, strategyOptions);

            scheduler::ProgressPrinter printer(stderr, ::isatty(2) != 0);
            // Measured sweeps time their three fastest points again at the end: the fastest of
            // many noisy measurements is biased low, by up to the GPU's run-to-run spread.
            scheduler::SweepOptions sweepOptions{.budget = {o->budget, o->seconds},
                                                 .batch = batch,
                                                 .finalists = evaluatorName == "cuda" ? 3u : 0u,
                                                 .progress = {}};
            if (!o->quiet)
                sweepOptions.progress = [&](scheduler::SweepProgress const& p) { printer(p); };
            fmt::print("tuning {} for {} with the {} evaluator{}{}, {} strategy (key {})\n",
                       problem.summary(), target, evaluator->name(),
                       evaluatorName == "cuda" ? fmt::format(" on {} x {}", gpus, gpuName) : "",
                       ranks ? fmt::format(", dealing to {} MPI ranks", ranks->size()) : "",
                       o->strategy, key.hash());
            std::fflush(stdout);
            scheduler::SweepResult const result =
                scheduler::runSweep(solver, *strategy, *evaluator, *database, key, sweepOptions);
            printer.finish();

            std::string const table = scheduler::reportTable(result, solver);
            fmt::print("{}", table);
            std::filesystem::create_directories(outDir);
            writeFile(outDir + "/report.txt", table);
            writeFile(
                outDir + "/sweep.svg",
                scheduler::reportSvg(result, fmt::format("{} on {} ({}, {})", problem.summary(),
                                                         target, evaluator->name(), o->strategy)));
            fmt::print("wrote {0}/report.txt and {0}/sweep.svg; database {1}\n", outDir, dbPath);
            if (!result.best)
                fail("no candidate of the sweep for {} succeeded; see {}/report.txt", target,
                     outDir);
            if (compile != "emit") {
                fmt::print("winner not exported: candidates were not emitted (--compile {})\n",
                           compile);
                continue;
            }
            if (auto e = result.best->extra.find("emitted");
                e != result.best->extra.end() && e->second == 0) {
                fmt::print("winner not exported: the code generator cannot emit it yet (kiln emit "
                           "says why)\n");
                continue;
            }
            std::string name = command.name() + "_" + target;
            for (char& c : name)
                if (!std::isalnum(static_cast<unsigned char>(c)))
                    c = '_';
            ExportedFiles const files = exportKernel(
                {.command = &command,
                 .pipeline = &pipeline,
                 .target = target,
                 .params = result.best->point,
                 .folder = outDir + "/export",
                 .name = name,
                 .origin = fmt::format("the winner of key {}, {:.3f} us by {}", key.hash(),
                                       result.best->microseconds, evaluator->name()),
                 .checked = scheduler::checkedBy(key.evaluator, result.best->extra)});
            fmt::print("exported the winner: {}, {}, {}{}\n", files.code, files.manifest,
                       files.header, files.binary.empty() ? "" : ", " + files.binary);
        }
        // A rank that has served all its targets waits for rank 0 to end the job.
        if (!leader && !stopped)
            while (ranks->serve(nullptr, "it has no more targets", {}, 0)) {
            }
    });
}

} // namespace kiln::cli
