// kiln worker compile | kiln worker measure --backend interpreter|cuda [--device N]
// The child processes of a sweep (scheduler/Evaluator.h has the protocol). `compile` reads one
// request and compiles one candidate: lowers the Command through the pipeline with the
// candidate's parameters, writes the lowered graph, and where asked emits the kernel with its
// manifest and assembles it: PTX with ptxas (registers, spills, shared memory), AMDGCN with
// runtime::assemblerFor into a code object (registers as Kiln allocated them). What it emits
// and assembles is kept in the compile cache (scheduler/CompileCache.h) under the lowered
// graph, the target, the schedule and the assembler: a point compiled before, by this sweep or
// an earlier one, is restored instead of compiled again. `measure` answers requests until its
// input closes; the interpreter backend runs each lowered graph in Kiln's reference interpreter
// on the problem's sizes, checks it against the Command's direct semantics and times it on the
// CPU (a real, if slow, measurement of the whole loop on machines without a GPU); the cuda
// backend loads the code the compile step assembled (the cubin; the PTX, JIT-compiled, only
// where the device cannot load it) and runs it on GPU N on a DeviceProblem (scheduler/DeviceRun.h)
// kept across candidates of the same problem: inputs and reference stay on the device, the check
// runs there, and timing repeats until the median is known within the precision asked for.
// Not meant to be run by hand; hidden from --help.
#include "Output.h"
#include "Problem.h"
#include "Tuning.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphJson.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/SourceJson.h"
#include "kiln/lowering/Compile.h"
#include "kiln/lowering/Occupancy.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/Kernel.h"
#include "kiln/runtime/KernelLoaderSpec.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/Ptxas.h"
#include "kiln/scheduler/CheckProvenance.h"
#include "kiln/scheduler/CompileCache.h"
#include "kiln/scheduler/DeviceRun.h"
#include "kiln/scheduler/TuningDatabase.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

namespace kiln::cli {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// A program's path, size and time: which build of it this is, without running it.
std::string fileIdentity(std::filesystem::path const& file) {
    std::error_code ec;
    auto const size = std::filesystem::file_size(file, ec);
    auto const time = std::filesystem::last_write_time(file, ec).time_since_epoch().count();
    return fmt::format("{} {} {}", file.string(), ec ? 0 : size, ec ? 0 : time);
}

// What identifies the assembler a compile would run: ptxas's file, or Kiln's AMDGCN
// assembler's own description.
std::string assemblerIdentity(std::string const& target, bool amd) {
    if (amd) {
        auto assembler = runtime::assemblerFor(target);
        return assembler.ok() ? (*assembler)->version() : "none";
    }
    auto ptxas = runtime::findPtxas();
    return ptxas.ok() ? fileIdentity(*ptxas) : "none";
}

// This kiln: what it lowers and emits can change with it, whatever its version.
std::string selfIdentity() {
    std::error_code ec;
    auto const self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? "unknown" : fileIdentity(self);
}

nlohmann::json compileRequest(nlohmann::json const& request) {
    auto const start = Clock::now();
    std::string const artifact = request.at("artifact").get<std::string>();
    std::string const commandFile = request.at("command").get<std::string>(),
                      pipelineFile = request.at("pipeline").get<std::string>();
    std::string const target = request.at("target").get<std::string>();
    // "emit": true (a failure to emit fails the candidate), "try" (a candidate the code
    // generator cannot emit is only lowered: "emitted": 0), or false.
    auto const emit = request.value("emit", nlohmann::json(false));
    bool const emitting = emit == true || emit == "try";
    bool const amd = lowering::targetVendor(target) == arch::Vendor::Amd;
    bool const assemble = emitting && request.value("assemble", false);
    std::optional<scheduler::CompileCache> cache;
    if (emitting && request.value("cache", true))
        if (auto folder = scheduler::CompileCache::defaultFolder())
            cache.emplace(*folder);
    std::string const assemblerId = assemble ? assemblerIdentity(target, amd) : "none";
    std::string const kiln = cache ? selfIdentity() : "";
    std::vector<std::string> const stored{".graph.json", ".ptx",   ".s",
                                          ".cubin",      ".hsaco", ".manifest.json"};
    // A point compiled before from the same files (the Command, the pipeline and its rule
    // sets), parameters, target, sizes, assembler and kiln is restored before lowering.
    std::string const inputsKey =
        cache ? scheduler::CompileCache::key({"inputs", readTextFile(commandFile),
                                              scheduler::pipelineHash(pipelineFile),
                                              request.at("params").dump(), target,
                                              request.value("sizes", nlohmann::json()).dump(),
                                              emit.dump(), assemblerId, KILN_VERSION, kiln})
              : "";
    if (cache) {
        if (auto answer = cache->restore(inputsKey, artifact)) {
            (*answer)["extra"]["cached"] = 1;
            (*answer)["extra"]["lower_seconds"] = 0;
            return *answer;
        }
    }

    Command const command = loadCommand(commandFile);
    rules::Pipeline const pipeline = rules::loadPipeline(pipelineFile);
    lowering::CompileOptions options{
        .target = target,
        .parameters = request.at("params").get<std::map<std::string, std::int64_t>>()};
    // The sweep's problem: code for its sizes only (CodegenOptions::sizes).
    if (request.contains("sizes") && request.at("sizes").is_object())
        options.sizes = sizesOf(command, request.at("sizes").get<std::map<std::string, double>>());
    lowering::LoweredCommand const lowered = lowering::lowerCommand(command, pipeline, options);
    // A point whose parameters every guard refuses leaves the Command unlowered: a kernel of one
    // workitem, or an interpreter run of the Command itself, which must not win a sweep.
    if (lowered.applications() == 0)
        fail("the pipeline '{}' applied no rule at this point: every rule's guard refused it "
             "(kiln rules why says why a rule does not match)",
             pipeline.name);
    std::string const graphText = saveGraph(lowered.graph);
    writeFile(artifact + ".graph.json", graphText);
    nlohmann::json extra = nlohmann::json::object();
    extra["lower_seconds"] = secondsSince(start);
    if (emitting) {
        lowering::CodegenOptions const& codegen = lowered.codegen;
        // The same lowered graph, schedule, sizes, target, assembler and kiln compile to the
        // same files, whatever lowered to it.
        std::string const schedule = nlohmann::json(codegen.schedule).dump();
        std::string const sizes = nlohmann::json(codegen.sizes).dump();
        std::string const key = scheduler::CompileCache::key(
            {graphText, target, schedule, sizes, assemblerId, KILN_VERSION, kiln, emit.dump()});
        if (cache) {
            if (auto answer = cache->restore(key, artifact)) {
                writeFile(artifact + ".graph.json", graphText); // restore removed it
                cache->store(inputsKey, artifact, stored, *answer);
                (*answer)["extra"]["cached"] = 1;
                (*answer)["extra"]["lower_seconds"] = extra["lower_seconds"];
                return *answer;
            }
        }

        auto const emitStart = Clock::now();
        std::optional<lowering::EmittedKernel> emitted;
        try {
            emitted = lowering::emitKernel(lowered.graph, codegen);
        } catch (UserError const& e) {
            if (emit == true)
                throw;
            return {{"ok", true}, {"extra", {{"emitted", 0}}}, {"note", e.what()}};
        }
        auto const& kernel = *emitted;
        extra["emit_seconds"] = secondsSince(emitStart);
        extra["emitted"] = 1;
        extra["code_bytes"] = kernel.code.size();
        writeFile(artifact + (amd ? ".s" : ".ptx"), kernel.code);
        writeFile(artifact + ".manifest.json", kernel.manifestJson());
        extra["shared_bytes"] = kernel.sharedBytes;
        extra["threads"] = kernel.block[0] * kernel.block[1] * kernel.block[2];
        auto const assembleStart = Clock::now();
        if (amd) {
            // Kiln allocated the registers itself; the assembler turns the text into a code
            // object (and a rejection is a bug in Kiln, reported as the candidate's failure).
            extra["registers"] = kernel.registers;
            if (assemble) {
                auto assembler = runtime::assemblerFor(target);
                if (!assembler.ok())
                    return {{"ok", false}, {"error", assembler.error().message()}};
                auto code = (*assembler)->assemble(kernel.code, target, kernel.entry + ".s");
                if (!code.ok())
                    return {{"ok", false}, {"error", code.error().message()}};
                writeFile(artifact + ".hsaco", *code);
            }
        } else if (assemble) {
            auto assembled = runtime::assemblePtx(kernel.code, target);
            if (!assembled)
                return {{"ok", false}, {"error", assembled.status().message()}};
            lowering::checkRegisters(kernel, assembled->registers);
            // A persistent grid sized by the registers ptxas gave (Occupancy.h).
            if (kernel.workgroupsPerMultiprocessor > 0)
                writeFile(
                    artifact + ".manifest.json",
                    lowering::withAssembledRegisters(kernel, assembled->registers).manifestJson());
            std::ofstream(artifact + ".cubin", std::ios::binary)
                .write(reinterpret_cast<char const*>(assembled->cubin.data()),
                       std::streamsize(assembled->cubin.size()));
            extra["registers"] = assembled->registers;
            extra["spill_bytes"] = assembled->spillStores + assembled->spillLoads;
            extra["shared_bytes"] = std::size_t(assembled->sharedBytes) + kernel.sharedBytes;
        }
        if (assemble)
            extra["assemble_seconds"] = secondsSince(assembleStart);
        nlohmann::json const answer{{"ok", true}, {"extra", extra}};
        if (cache) {
            cache->store(key, artifact, stored, answer);
            cache->store(inputsKey, artifact, stored, answer);
        }
        return answer;
    }
    return {{"ok", true}, {"extra", extra}};
}

// A worker ends when the sweep that started it does, even in the middle of a long request: a
// thread watches for the parent to change (the sweep killed, the worker handed to init).
// (PR_SET_PDEATHSIG would fire when the sweep's thread that started the worker ends, and
// those threads end with each batch.)
void endWithParent() {
    pid_t const parent = ::getppid();
    std::thread([parent] {
        while (::getppid() == parent)
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        std::_Exit(3);
    }).detach();
}

int compileMain() {
    std::string line;
    if (!std::getline(std::cin, line)) {
        std::cerr << "kiln worker compile: no request on stdin\n";
        return 1;
    }
    nlohmann::json answer;
    try {
        answer = compileRequest(nlohmann::json::parse(line));
    } catch (UserError const& e) {
        answer = {{"ok", false}, {"error", e.what()}};
    } catch (nlohmann::json::exception const& e) {
        answer = {{"ok", false}, {"error", std::string("bad request: ") + e.what()}};
    } catch (InternalError const& e) {
        answer = {{"ok", false}, {"error", std::string("a bug in Kiln: ") + e.what()}};
    }
    std::cout << answer.dump() << std::endl;
    return 0;
}

// The interpreter backend: a checker per (command, sizes), kept across requests.
struct Interpreted {
    std::string commandFile, sizesText;
    std::unique_ptr<Command> command;
    std::unique_ptr<SemanticCheck> check;
};

nlohmann::json measureRequest(nlohmann::json const& request, Interpreted& cache) {
    nlohmann::json answer{{"id", request.at("id")}};
    std::string const commandFile = request.at("command").get<std::string>();
    auto const sizes = request.value("sizes", std::map<std::string, double>{});
    std::string const sizesText = nlohmann::json(sizes).dump();
    if (!cache.check || cache.commandFile != commandFile || cache.sizesText != sizesText) {
        cache.check.reset();
        cache.command = std::make_unique<Command>(loadCommand(commandFile));
        std::map<std::string, double> problem = cache.command->defaults;
        for (auto const& [k, v] : sizes)
            problem[k] = v;
        cache.check = std::make_unique<SemanticCheck>(*cache.command, problem, 1);
        cache.commandFile = commandFile;
        cache.sizesText = sizesText;
    }
    KernelGraph const graph = loadGraph(request.at("artifact").get<std::string>() + ".graph.json");
    double const error = cache.check->measure(graph);
    if (!(error <= cache.check->tolerance())) {
        answer["ok"] = false;
        answer["stage"] = "check";
        answer["error"] = fmt::format("wrong result: max relative error {:.3g} (tolerance {:.0e})",
                                      error, cache.check->tolerance());
        return answer;
    }
    int const warmup = request.value("warmup", 1), repetitions = request.value("repetitions", 5);
    for (int i = 0; i < warmup; ++i)
        cache.check->measure(graph);
    nlohmann::json samples = nlohmann::json::array();
    for (int i = 0; i < std::max(repetitions, 1); ++i) {
        auto const start = std::chrono::steady_clock::now();
        cache.check->measure(graph);
        samples.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count());
    }
    answer["ok"] = true;
    answer["samples_us"] = samples;
    return answer;
}

// The CUDA backend: the device, the Command per file and the problem on the device, kept
// across requests.
struct OnDevice {
    std::shared_ptr<runtime::Device> device;
    std::string commandFile;
    std::unique_ptr<Command> command;
    std::string problemKey;
    std::unique_ptr<scheduler::DeviceProblem> problem;
};

// The kernel the compile step left at `artifact`: its cubin, or where the device cannot load
// that (a cubin of another architecture), its PTX through the driver's JIT.
runtime::Expected<runtime::Kernel> loadArtifact(std::shared_ptr<runtime::Device> const& device,
                                                std::string const& artifact) {
    KILN_ASSIGN_OR_RETURN(auto manifest,
                          runtime::KernelManifest::fromFile(artifact + ".manifest.json"));
    if (std::filesystem::exists(artifact + ".cubin")) {
        auto loaded = runtime::Kernel::load(
            device, runtime::KernelLoaderSpec::cubinOnDisk(artifact + ".cubin", manifest.entry)
                        .withManifest(manifest));
        if (loaded.ok() || !std::filesystem::exists(artifact + ".ptx"))
            return loaded;
    }
    return runtime::Kernel::load(
        device, runtime::KernelLoaderSpec::ptxOnDisk(artifact + ".ptx", manifest.entry)
                    .withManifest(manifest));
}

nlohmann::json measureOnDevice(nlohmann::json const& request, OnDevice& state) {
    nlohmann::json answer{{"id", request.at("id")}};
    auto const fail = [&](std::string const& stage, std::string const& error) {
        answer["ok"] = false;
        answer["stage"] = stage;
        answer["error"] = error;
        return answer;
    };
    std::string const commandFile = request.at("command").get<std::string>();
    if (!state.command || state.commandFile != commandFile) {
        state.problem.reset();
        state.command = std::make_unique<Command>(loadCommand(commandFile));
        state.commandFile = commandFile;
    }
    std::map<std::string, double> problem = state.command->defaults;
    for (auto const& [k, v] : request.value("sizes", std::map<std::string, double>{}))
        problem[k] = v;
    scheduler::DeviceRunOptions const options{
        .seed = 7,
        .warmup = request.value("warmup", 3),
        .warmupSeconds = request.value("warmup_seconds", 0.0),
        .repetitions = std::max(request.value("repetitions", 10), 1),
        .maxRepetitions = request.value("max_repetitions", 0),
        .precision = request.value("precision", 0.01),
        .maxSeconds = request.value("max_seconds", 1.0),
    };
    // Inputs, reference and L2 buffer: once per problem, for every candidate after.
    std::string const problemKey = commandFile + nlohmann::json(problem).dump();
    if (!state.problem || state.problemKey != problemKey) {
        state.problem.reset();
        auto made =
            scheduler::DeviceProblem::create(state.device, *state.command, problem, options);
        if (!made.ok())
            return fail("run",
                        "the problem could not be set up on the device: " + made.error().message());
        state.problem = std::move(made).value();
        state.problemKey = problemKey;
    }
    std::string const artifact = request.at("artifact").get<std::string>();
    KernelGraph const graph = loadGraph(artifact + ".graph.json");
    auto kernel = loadArtifact(state.device, artifact);
    if (!kernel.ok())
        return fail("run", kernel.error().message());
    auto const shared = kernel.value().manifest()->sharedBytes;
    auto result = state.problem->run(kernel.value(), graph, shared, options);
    if (!result.ok())
        return fail("run", result.error().message());
    auto const& r = result.value();
    if (!(r.maxRelativeError <= r.tolerance))
        return fail("check", fmt::format("wrong result: max relative error {:.3g} in {} "
                                         "(tolerance {:.0e})",
                                         r.maxRelativeError, r.worstTensor, r.tolerance));
    nlohmann::json samples = nlohmann::json::array();
    for (double ms : r.samplesMs)
        samples.push_back(ms * 1000);
    answer["ok"] = true;
    answer["samples_us"] = samples;
    answer["reference"] = r.reference;
    // Which reference the check used, for the report and the export (CheckProvenance.h).
    answer["extra"] = {
        {"median_precision", r.precision},
        {"launches_per_sample", r.launchesPerSample},
        {"max_relative_error", r.maxRelativeError},
        {scheduler::kReferenceCublasExtra, r.reference.starts_with("cuBLAS") ? 1 : 0}};
    return answer;
}

// The answer for a request that failed; its id when it has one.
nlohmann::json failedRequest(nlohmann::json const& request, std::string const& stage,
                             std::string const& error) {
    nlohmann::json id = 0;
    if (request.is_object() && request.contains("id"))
        id = request["id"];
    return {{"id", id}, {"ok", false}, {"stage", stage}, {"error", error}};
}

int measureMain(std::string const& backend, int deviceIndex) {
    Interpreted cache;
    OnDevice onDevice;
    if (backend == "cuda") {
        auto platform = runtime::loadPlatform("cuda");
        if (!platform.ok()) {
            std::cerr << "kiln worker measure: " << platform.error().message() << "\n";
            return 1;
        }
        auto device = platform.value()->device(deviceIndex);
        if (!device.ok()) {
            std::cerr << "kiln worker measure: " << device.error().message() << "\n";
            return 1;
        }
        onDevice.device = device.value();
        std::cout << nlohmann::json{{"ready", true},
                                    {"device", onDevice.device->description().name},
                                    {"driver", platform.value()->version()}}
                         .dump()
                  << std::endl;
    } else if (backend == "interpreter") {
        std::cout << nlohmann::json{{"ready", true}, {"device", "Kiln reference interpreter (CPU)"}}
                         .dump()
                  << std::endl;
    } else {
        std::cerr << "kiln worker measure: unknown backend '" << backend
                  << "'; expected interpreter or cuda\n";
        return 1;
    }
    std::string line;
    while (std::getline(std::cin, line)) {
        auto const request = nlohmann::json::parse(line, nullptr, false);
        nlohmann::json answer;
        try {
            answer = backend == "cuda" ? measureOnDevice(request, onDevice)
                                       : measureRequest(request, cache);
        } catch (UserError const& e) {
            answer = failedRequest(request, "run", e.what());
        } catch (nlohmann::json::exception const& e) {
            answer = failedRequest(request, "run", std::string("bad request: ") + e.what());
        } catch (InternalError const& e) {
            answer = failedRequest(request, "run", std::string("a bug in Kiln: ") + e.what());
        }
        std::cout << answer.dump() << std::endl;
    }
    return 0;
}

} // namespace

void addWorker(CLI::App& app) {
    auto* sub = app.add_subcommand("worker", "A child process of `kiln tune` (not for direct use)");
    sub->group(""); // hidden from --help
    sub->require_subcommand(1);
    auto* compile = sub->add_subcommand("compile", "Compile one candidate read from stdin");
    compile->callback([] {
        endWithParent();
        int const status = compileMain();
        std::cout.flush();
        std::exit(status);
    });
    auto backend = std::make_shared<std::string>("interpreter");
    auto device = std::make_shared<int>(0);
    auto* measure = sub->add_subcommand("measure", "Measure candidates read from stdin");
    measure->add_option("--backend", *backend, "interpreter or cuda");
    measure->add_option("--device", *device, "Device index");
    measure->callback([backend, device] {
        endWithParent();
        int const status = measureMain(*backend, *device);
        std::cout.flush();
        std::exit(status);
    });
}

} // namespace kiln::cli
