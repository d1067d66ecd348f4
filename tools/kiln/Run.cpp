// kiln run CMD.json --pipeline P.json [--params A=1] [--target T] [--size N=4096]
//          [--repetitions 50] [--device 0]
// Lowers a Command, emits its kernel (with --specialize for the problem's sizes only, as
// `kiln tune --specialize` compiles candidates: lowering::CodegenOptions::sizes), runs it on a
// GPU on random inputs, checks every tensor
// against the CPU reference (a GEMM of more than 1e8 FLOPs against cuBLAS on the device) and,
// with --repetitions, times it with device events, after a read of twice L2 before each. Exits 1
// when the result is outside the tolerance or there is no usable GPU. Without --target, the code is
// emitted for the device's target.
#include "Params.h"
#include "Problem.h"
#include "Subcommands.h"
#include "kiln/graph/CommandJson.h"
#include "kiln/lowering/Compile.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/runtime/Platform.h"
#include "kiln/scheduler/DeviceRun.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace kiln::cli {

void addRun(CLI::App& app) {
    struct Options {
        std::string command, pipeline, target;
        std::vector<std::string> params, sizes;
        int repetitions = 0, device = 0;
        double warmupSeconds = 0;
        bool specialize = false;
    };
    auto o = std::make_shared<Options>();
    auto* sub = app.add_subcommand("run", "Lower, emit and run a Command on a GPU, checked "
                                          "against the CPU reference or cuBLAS");
    sub->add_option("command", o->command, "Command file (JSON)")->required();
    sub->add_option("--pipeline", o->pipeline, "Pipeline file (JSON)")->required();
    sub->add_option("--params", o->params, "Schedule parameters, NAME=INT[,NAME=INT...]");
    sub->add_option("--target", o->target, "Target of the emitted code (default: the device's)");
    sub->add_option("--size", o->sizes, "Problem size or scalar, NAME=VALUE (repeatable)");
    sub->add_option("--repetitions", o->repetitions, "Timed launches (0: check only)");
    sub->add_option("--warmup-seconds", o->warmupSeconds,
                    "Untimed launches for at least this long before timing, at the clocks the "
                    "GPU holds under sustained load (kiln tune --warmup-seconds does the same)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 60.0));
    sub->add_option("--device", o->device, "Device ordinal")->capture_default_str();
    sub->add_flag("--specialize", o->specialize,
                  "Emit the kernel for these sizes only, as `kiln tune --specialize` does");
    sub->callback([o] {
        if (!o->target.empty() && lowering::targetVendor(o->target) == arch::Vendor::Amd)
            fail("kiln run runs kernels on a CUDA device; {} code runs through the HIP platform "
                 "on an AMD GPU, which kiln run does not drive yet: `kiln emit --target {}` "
                 "writes the code object and its manifest for the HIP launcher (docs/runtime.md)",
                 o->target, o->target);
        Command const command = loadCommand(o->command);
        rules::Pipeline const pipeline = rules::loadPipeline(o->pipeline);
        checkParams(parseParams(o->params), pipeline, o->pipeline);
        auto const problem = problemOf(command, o->sizes);
        auto platform = runtime::loadPlatform("cuda");
        if (!platform)
            fail("{}", platform.error().message());
        auto device = platform.value()->device(o->device);
        if (!device)
            fail("{}", device.error().message());
        if (o->target.empty())
            o->target = device.value()->description().target;
        lowering::CompileOptions options{.target = o->target, .parameters = parseParams(o->params)};
        if (o->specialize) // the kernel `kiln tune --specialize` times
            options.sizes = sizesOf(command, problem);
        auto const [lowered, kernel] = lowering::compileCommand(command, pipeline, options);
        KernelGraph const& graph = lowered.graph;
        auto result = scheduler::runOnDevice(
            device.value(), command, problem, graph, kernel,
            {.warmupSeconds = o->warmupSeconds, .repetitions = o->repetitions});
        if (!result)
            fail("{}", result.error().message());
        auto const& r = result.value();
        fmt::print("{} on {} ({}), grid {}x{}x{}, block {}x{}x{}, {} registers\n", kernel.entry,
                   device.value()->description().name, o->target, r.grid[0], r.grid[1], r.grid[2],
                   kernel.block[0], kernel.block[1], kernel.block[2], r.registers);
        fmt::print("max relative error {:.3g} (in {} against {}; tolerance {:.0e})\n",
                   r.maxRelativeError, r.worstTensor, r.reference, r.tolerance);
        if (o->repetitions > 0)
            fmt::print("time {:.4f} ms median, {:.4f} ms best of {}; {:.1f} GB/s of tensor "
                       "traffic\n",
                       r.medianMs, r.minMs, o->repetitions, r.bytes / r.medianMs / 1e6);
        if (r.maxRelativeError > r.tolerance)
            fail("the kernel's result differs from the reference (max relative error {:.3g})",
                 r.maxRelativeError);
    });
}

} // namespace kiln::cli
