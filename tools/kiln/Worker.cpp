// kiln worker compile | kiln worker measure --backend interpreter|cuda [--device N]
// The child processes of a sweep (scheduler/Evaluator.h has the protocol). `compile` reads one
// request and compiles one candidate: lowers the Command through the pipeline with the
// candidate's parameters, writes the lowered graph, and where asked emits the kernel with its
// manifest and assembles it: PTX with ptxas (registers, spills, shared memory), AMDGCN with
// runtime::assemblerFor into a code object (registers as Kiln allocated them). `measure` answers
// requests until its input closes; the interpreter backend runs each lowered graph in Kiln's
// reference interpreter on the problem's sizes, checks it against the Command's direct
// semantics and times it on the CPU (a real, if slow, measurement of the whole loop on machines
// without a GPU); the cuda backend emits the kernel of the lowered graph for the request's
// target and runs it on GPU N with runOnDevice (DeviceRun.h): random inputs, every tensor
// checked against the CPU reference (a large GEMM against cuBLAS), then warm-up and timed
// repetitions with device events, each after a write of twice the device's L2.
// Not meant to be run by hand; hidden from --help.
#include "DeviceRun.h"
#include "Output.h"
#include "Tuning.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/graph/GraphJson.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/Translate.h"
#include "kiln/lowering/AmdgcnCodegen.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/rules/ArchFacts.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/Ptxas.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace kiln::cli {

namespace {

nlohmann::json compileRequest(nlohmann::json const& request) {
    std::string const artifact = request.at("artifact").get<std::string>();
    Command const command = loadCommand(request.at("command").get<std::string>());
    rules::Pipeline const pipeline = rules::loadPipeline(request.at("pipeline").get<std::string>());
    std::string const target = request.value("target", "sm_90a");
    KernelGraph graph = translate(command);
    rules::EngineOptions options{
        .parameters = request.at("params").get<std::map<std::string, std::int64_t>>(),
        .arch = rules::archFacts(target)};
    rules::lower(pipeline, graph, options);
    writeFile(artifact + ".graph.json", saveGraph(graph));
    nlohmann::json extra = nlohmann::json::object();
    // "emit": true (a failure to emit fails the candidate), "try" (a candidate the code
    // generator cannot emit is only lowered: "emitted": 0), or false.
    auto const emit = request.value("emit", nlohmann::json(false));
    if (emit == true || emit == "try") {
        lowering::CodegenOptions codegen{.target = target, .schedule = pipeline.defaults};
        for (auto const& [name, value] : options.parameters)
            codegen.schedule[name] = value;
        bool const amd = lowering::isAmdgcnTarget(target);
        std::optional<lowering::EmittedKernel> emitted;
        try {
            emitted = amd ? lowering::emitAmdgcnKernel(graph, codegen)
                          : lowering::emitKernel(graph, codegen);
        } catch (UserError const& e) {
            if (emit == true)
                throw;
            return {{"ok", true}, {"extra", {{"emitted", 0}}}, {"note", e.what()}};
        }
        auto const& kernel = *emitted;
        extra["emitted"] = 1;
        writeFile(artifact + (amd ? ".s" : ".ptx"), kernel.code);
        writeFile(artifact + ".manifest.json", kernel.manifestJson());
        extra["shared_bytes"] = kernel.sharedBytes;
        extra["threads"] = kernel.block[0] * kernel.block[1] * kernel.block[2];
        if (amd) {
            // Kiln allocated the registers itself; the assembler turns the text into a code
            // object (and a rejection is a bug in Kiln, reported as the candidate's failure).
            extra["registers"] = kernel.registers;
            if (request.value("assemble", false)) {
                auto assembler = runtime::assemblerFor(target);
                if (!assembler.ok())
                    return {{"ok", false}, {"error", assembler.error().message()}};
                auto code = (*assembler)->assemble(kernel.code, target, kernel.entry + ".s");
                if (!code.ok())
                    return {{"ok", false}, {"error", code.error().message()}};
                writeFile(artifact + ".hsaco", *code);
            }
        } else if (request.value("assemble", false)) {
            auto assembled = runtime::assemblePtx(kernel.code, target);
            if (!assembled)
                return {{"ok", false}, {"error", assembled.status().message()}};
            std::ofstream(artifact + ".cubin", std::ios::binary)
                .write(reinterpret_cast<char const*>(assembled->cubin.data()),
                       std::streamsize(assembled->cubin.size()));
            extra["registers"] = assembled->registers;
            extra["spill_bytes"] = assembled->spillStores + assembled->spillLoads;
            extra["shared_bytes"] = std::size_t(assembled->sharedBytes) + kernel.sharedBytes;
        }
    }
    return {{"ok", true}, {"extra", extra}};
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

// The CUDA backend: the device, and the Command per file, kept across requests.
struct OnDevice {
    std::shared_ptr<runtime::Device> device;
    std::string commandFile;
    std::unique_ptr<Command> command;
};

nlohmann::json measureOnDevice(nlohmann::json const& request, OnDevice& state) {
    nlohmann::json answer{{"id", request.at("id")}};
    std::string const commandFile = request.at("command").get<std::string>();
    if (!state.command || state.commandFile != commandFile) {
        state.command = std::make_unique<Command>(loadCommand(commandFile));
        state.commandFile = commandFile;
    }
    std::map<std::string, double> problem = state.command->defaults;
    for (auto const& [k, v] : request.value("sizes", std::map<std::string, double>{}))
        problem[k] = v;
    KernelGraph const graph = loadGraph(request.at("artifact").get<std::string>() + ".graph.json");
    lowering::CodegenOptions codegen{
        .target = request.at("target").get<std::string>(),
        .schedule = request.at("params").get<std::map<std::string, std::int64_t>>()};
    auto const kernel = lowering::emitKernel(graph, codegen);
    int const repetitions = std::max(request.value("repetitions", 20), 1);
    auto result =
        runOnDevice(state.device, *state.command, problem, graph, kernel,
                    {.seed = 7, .warmup = request.value("warmup", 3), .repetitions = repetitions});
    if (!result.ok()) {
        answer["ok"] = false;
        answer["stage"] = "run";
        answer["error"] = result.error().message();
        return answer;
    }
    auto const& r = result.value();
    if (!(r.maxRelativeError <= r.tolerance)) {
        answer["ok"] = false;
        answer["stage"] = "check";
        answer["error"] = fmt::format("wrong result: max relative error {:.3g} in {} (tolerance "
                                      "{:.0e})",
                                      r.maxRelativeError, r.worstTensor, r.tolerance);
        return answer;
    }
    answer["ok"] = true;
    answer["median_us"] = r.medianMs * 1000;
    answer["min_us"] = r.minMs * 1000;
    answer["samples"] = repetitions;
    answer["reference"] = r.reference;
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
        int const status = measureMain(*backend, *device);
        std::cout.flush();
        std::exit(status);
    });
}

} // namespace kiln::cli
