#include "DeviceRun.h"

#include "GemmReference.h"
#include "kiln/graph/Reference.h"
#include "kiln/lowering/LaunchShape.h"
#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Event.h"
#include "kiln/runtime/Kernel.h"
#include "kiln/runtime/KernelArguments.h"
#include "kiln/runtime/Ptxas.h"
#include "kiln/runtime/Stream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace kiln::cli {

namespace {

using runtime::Error;
using runtime::ErrorCode;

// Host values <-> the bytes of a tensor of `type`.
std::vector<std::uint8_t> toBytes(HostTensor const& t) {
    std::size_t const size = static_cast<std::size_t>(sizeInBytes(t.dtype));
    std::vector<std::uint8_t> bytes(t.data.size() * size);
    for (std::size_t i = 0; i < t.data.size(); ++i) {
        std::uint8_t* at = bytes.data() + i * size;
        double const v = t.data[i];
        switch (t.dtype) {
        case DataType::F16: {
            auto const h = runtime::Half::fromFloat(static_cast<float>(v));
            std::memcpy(at, &h.bits, 2);
            break;
        }
        case DataType::BF16: {
            auto const h = runtime::BFloat16::fromFloat(static_cast<float>(v));
            std::memcpy(at, &h.bits, 2);
            break;
        }
        case DataType::F32: {
            auto const f = static_cast<float>(v);
            std::memcpy(at, &f, 4);
            break;
        }
        case DataType::F64:
            std::memcpy(at, &v, 8);
            break;
        case DataType::I32: {
            auto const n = static_cast<std::int32_t>(v);
            std::memcpy(at, &n, 4);
            break;
        }
        case DataType::I64: {
            auto const n = static_cast<std::int64_t>(v);
            std::memcpy(at, &n, 8);
            break;
        }
        case DataType::Bool:
            *at = v != 0 ? 1 : 0;
            break;
        }
    }
    return bytes;
}

void fromBytes(std::vector<std::uint8_t> const& bytes, HostTensor& t) {
    std::size_t const size = static_cast<std::size_t>(sizeInBytes(t.dtype));
    for (std::size_t i = 0; i < t.data.size(); ++i) {
        std::uint8_t const* at = bytes.data() + i * size;
        switch (t.dtype) {
        case DataType::F16: {
            runtime::Half h;
            std::memcpy(&h.bits, at, 2);
            t.data[i] = h.toFloat();
            break;
        }
        case DataType::BF16: {
            runtime::BFloat16 h;
            std::memcpy(&h.bits, at, 2);
            t.data[i] = h.toFloat();
            break;
        }
        case DataType::F32: {
            float f = 0;
            std::memcpy(&f, at, 4);
            t.data[i] = f;
            break;
        }
        case DataType::F64:
            std::memcpy(&t.data[i], at, 8);
            break;
        case DataType::I32: {
            std::int32_t n = 0;
            std::memcpy(&n, at, 4);
            t.data[i] = n;
            break;
        }
        case DataType::I64: {
            std::int64_t n = 0;
            std::memcpy(&n, at, 8);
            t.data[i] = static_cast<double>(n);
            break;
        }
        case DataType::Bool:
            t.data[i] = *at;
            break;
        }
    }
}

template <class T>
void addPointer(runtime::KernelArguments& arguments, std::uint64_t address) {
    arguments.add(runtime::DevicePointer<T>(address));
}

void addTensor(runtime::KernelArguments& arguments, DataType type, std::uint64_t address) {
    switch (type) {
    case DataType::F16:
        return addPointer<runtime::Half>(arguments, address);
    case DataType::BF16:
        return addPointer<runtime::BFloat16>(arguments, address);
    case DataType::F32:
        return addPointer<float>(arguments, address);
    case DataType::F64:
        return addPointer<double>(arguments, address);
    case DataType::I32:
        return addPointer<std::int32_t>(arguments, address);
    case DataType::I64:
        return addPointer<std::int64_t>(arguments, address);
    case DataType::Bool:
        return addPointer<std::uint8_t>(arguments, address);
    }
}

void addScalar(runtime::KernelArguments& arguments, DataType type, Value v) {
    switch (type) {
    case DataType::F16:
        arguments.add(runtime::Half::fromFloat(static_cast<float>(v.asDouble())));
        return;
    case DataType::BF16:
        arguments.add(runtime::BFloat16::fromFloat(static_cast<float>(v.asDouble())));
        return;
    case DataType::F32:
        arguments.add(static_cast<float>(v.asDouble()));
        return;
    case DataType::F64:
        arguments.add(v.asDouble());
        return;
    case DataType::I32:
        arguments.add(static_cast<std::int32_t>(v.asInt()));
        return;
    case DataType::I64:
        arguments.add(static_cast<std::int64_t>(v.asInt()));
        return;
    case DataType::Bool:
        arguments.add(static_cast<std::uint8_t>(v.asBool()));
        return;
    }
}

// How many times the kernel must move tensor `name` as a whole: once per load, once per store.
int accesses(KernelGraph const& graph, std::string const& name) {
    int n = 0;
    for (Id op : graph.control.nodes()) {
        auto const kind = graph.control.node(op).kind;
        bool const load = kind == OperationKind::LoadLinear || kind == OperationKind::LoadTiled;
        bool const store = kind == OperationKind::StoreLinear || kind == OperationKind::StoreTiled;
        if (!load && !store)
            continue;
        Id const memory = graph.mapping.get(op, load ? "source" : "dest");
        n += graph.coordinates.node(memory).name == name ? 1 : 0;
    }
    return n;
}

} // namespace

runtime::Expected<DeviceRunResult>
runOnDevice(std::shared_ptr<runtime::Device> const& device, Command const& command,
            std::map<std::string, double> const& problem, KernelGraph const& lowered,
            lowering::EmittedKernel const& kernel, DeviceRunOptions const& options) {
    DeviceRunResult result;
    Bindings bindings = randomBindings(command, problem, options.seed);
    Bindings reference = bindings;

    // A large GEMM is checked against cuBLAS on the device; anything else (or a GEMM where
    // cuBLAS does not load) against the CPU reference.
    std::optional<GemmForm> gemm = matchGemm(command);
    std::shared_ptr<runtime::cuda::Blas> blas;
    std::string cublasMissing;
    if (gemm) {
        auto shape = gemmShape(*gemm, bindings);
        if (shape && shape.value().flops() > options.deviceReferenceFlops) {
            auto created = runtime::cuda::Blas::create(device);
            if (created)
                blas = created.value();
            else
                cublasMissing = " (cuBLAS: " + created.error().message() + ")";
        }
    }
    result.reference = blas ? "cuBLAS " + std::to_string(blas->version()) : "CPU" + cublasMissing;
    if (!blas)
        runReference(command, reference);

    auto manifest = runtime::KernelManifest::fromJson(kernel.manifestJson(), kernel.entry);
    if (!manifest)
        return manifest.error();
    runtime::KernelLoaderSpec spec =
        runtime::KernelLoaderSpec::ptxInMemory(kernel.code, kernel.entry);
    if (runtime::findPtxas()) {
        auto assembled = runtime::assemblePtx(kernel.code, kernel.target);
        if (!assembled)
            return assembled.error();
        result.registers = assembled.value().registers;
        auto const& cubin = assembled.value().cubin;
        spec = runtime::KernelLoaderSpec::cubinInMemory(std::string(cubin.begin(), cubin.end()),
                                                        kernel.entry);
    }
    auto loaded = runtime::Kernel::load(device, spec.withManifest(manifest.value()));
    if (!loaded)
        return loaded.error();
    auto stream = runtime::Stream::create(device);
    if (!stream)
        return stream.error();

    // Buffers and arguments, in the kernel's parameter order.
    std::map<std::string, runtime::DeviceMemory<std::uint8_t>> buffers;
    runtime::KernelArguments arguments;
    for (auto const& arg : lowered.arguments) {
        switch (arg.kind) {
        case KernelArgument::Kind::Tensor: {
            auto const& host = bindings.tensors.at(arg.name);
            auto const bytes = toBytes(host);
            auto memory = runtime::DeviceMemory<std::uint8_t>::allocate(
                device, std::max<std::size_t>(bytes.size(), 1));
            if (!memory)
                return memory.error();
            auto& buffer = buffers.emplace(arg.name, std::move(memory).value()).first->second;
            if (!bytes.empty())
                stream.value().copy(buffer, std::span<std::uint8_t const>(bytes));
            addTensor(arguments, arg.dtype, buffer.pointer().address());
            double const size = static_cast<double>(host.elements() * sizeInBytes(arg.dtype));
            result.bytes += size * static_cast<double>(accesses(lowered, arg.name));
            break;
        }
        case KernelArgument::Kind::Scalar:
            addScalar(arguments, arg.dtype, bindings.scalars.at(arg.name));
            break;
        case KernelArgument::Kind::Size:
            arguments.add(bindings.sizes.at(arg.name));
            break;
        }
    }
    auto const shape = lowering::launchShape(lowered);
    BindingsEnvironment const environment(bindings);
    runtime::Dim3 grid{1, 1, 1}, block{1, 1, 1};
    for (int a = 0; a < 3; ++a) {
        result.grid[a] = evaluateInt(*shape.grid[a], environment);
        if (result.grid[a] <= 0)
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("the grid has {} workgroups along axis {} for this problem",
                                     result.grid[a], a));
    }
    grid = {static_cast<std::uint32_t>(result.grid[0]), static_cast<std::uint32_t>(result.grid[1]),
            static_cast<std::uint32_t>(result.grid[2])};
    block = {static_cast<std::uint32_t>(shape.block[0]), static_cast<std::uint32_t>(shape.block[1]),
             static_cast<std::uint32_t>(shape.block[2])};
    runtime::LaunchConfig const config{grid, block, kernel.sharedBytes};
    runtime::DeviceMemory<std::uint8_t> onDevice; // cuBLAS's D, before the kernel writes D
    if (blas) {
        auto memory =
            runtime::DeviceMemory<std::uint8_t>::allocate(device, buffers.at(gemm->d).size());
        if (!memory)
            return memory.error();
        onDevice = std::move(memory).value();
        if (auto s = gemmOnDevice(*blas, stream.value(), *gemm, bindings, buffers, onDevice);
            !s.ok())
            return s.error();
    }
    stream.value().launch(loaded.value(), config, arguments);
    if (auto s = stream.value().synchronize(); !s.ok())
        return s.error().withContext(kernel.entry);

    // Every tensor against the reference (with cuBLAS: D against cuBLAS's D).
    for (auto& [name, buffer] : buffers) {
        if (blas && name != gemm->d)
            continue;
        HostTensor& host = bindings.tensors.at(name);
        std::vector<std::uint8_t> bytes(buffer.size());
        stream.value().copy(std::span<std::uint8_t>(bytes), buffer);
        if (blas) {
            std::vector<std::uint8_t> expected(onDevice.size());
            stream.value().copy(std::span<std::uint8_t>(expected), onDevice);
            if (auto s = stream.value().synchronize(); !s.ok())
                return s.error();
            fromBytes(expected, reference.tensors.at(name));
        }
        if (auto s = stream.value().synchronize(); !s.ok())
            return s.error();
        fromBytes(bytes, host);
        double const error = maxRelativeError(host, reference.tensors.at(name));
        if (error >= result.maxRelativeError) {
            result.maxRelativeError = error;
            result.worstTensor = name;
        }
        bool const half = host.dtype == DataType::F16 || host.dtype == DataType::BF16;
        // Against cuBLAS, two f32 sums of K terms in different orders: they differ by about
        // sqrt(K) roundings of their magnitude, so the f32 tolerance grows as sqrt(K) / 4 (1e-5
        // up to K = 16, 1.6e-4 at K = 4096). f16 results are dominated by their own rounding.
        double const terms = blas ? static_cast<double>(gemmShape(*gemm, bindings).value().k) : 0;
        double const f32 = std::max(1e-5, 1e-5 * std::sqrt(terms) / 4);
        result.tolerance = std::max(result.tolerance, half ? 1e-2 : f32);
    }

    if (options.repetitions > 0) {
        auto start = runtime::Event::create(device), stop = runtime::Event::create(device);
        if (!start)
            return start.error();
        if (!stop)
            return stop.error();
        // Twice L2, written before each repetition: what the one before left there is gone.
        runtime::DeviceMemory<std::uint32_t> flush;
        if (options.flushL2 && device->description().l2Bytes > 0) {
            auto memory = runtime::DeviceMemory<std::uint32_t>::allocate(
                device, static_cast<std::size_t>(device->description().l2Bytes) / 2);
            if (!memory)
                return memory.error();
            flush = std::move(memory).value();
        }
        for (int i = 0; i < options.warmup; ++i)
            stream.value().launch(loaded.value(), config, arguments);
        std::vector<double> times;
        for (int i = 0; i < options.repetitions; ++i) {
            if (!flush.empty())
                stream.value().fill(flush, static_cast<std::uint32_t>(i + 1));
            stream.value()
                .record(start.value())
                .launch(loaded.value(), config, arguments)
                .record(stop.value());
            if (auto s = stream.value().synchronize(); !s.ok())
                return s.error();
            auto ms = stop.value().millisecondsSince(start.value());
            if (!ms)
                return ms.error();
            times.push_back(ms.value());
        }
        std::sort(times.begin(), times.end());
        result.minMs = times.front();
        result.medianMs = times[times.size() / 2];
    }
    return result;
}

} // namespace kiln::cli
