#include "kiln/scheduler/DeviceRun.h"

#include "kiln/graph/ExpressionText.h"
#include "kiln/graph/Reference.h"
#include "kiln/lowering/LaunchShape.h"
#include "kiln/lowering/Occupancy.h"
#include "kiln/lowering/TensorMaps.h"
#include "kiln/runtime/CommandBuffer.h"
#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Event.h"
#include "kiln/runtime/Kernel.h"
#include "kiln/runtime/KernelArguments.h"
#include "kiln/runtime/PersistentGrid.h"
#include "kiln/runtime/Ptxas.h"
#include "kiln/runtime/Stream.h"
#include "kiln/scheduler/DeviceCompare.h"
#include "kiln/scheduler/GemmReference.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace kiln::scheduler {

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

// A size formula of a manifest ("ceildiv(M, 4) * 16 + M * 64"): every name a size parameter.
class SizeNames : public NameResolver {
public:
    ExprPtr name(std::string_view n) const override {
        return argument(std::string(n), DataType::I64);
    }
};

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

std::pair<double, double> medianAndPrecision(std::vector<double> samples) {
    if (samples.empty())
        return {0, std::numeric_limits<double>::infinity()};
    std::sort(samples.begin(), samples.end());
    std::size_t const n = samples.size();
    double const median = (samples[(n - 1) / 2] + samples[n / 2]) / 2;
    double const reach = 0.98 * std::sqrt(static_cast<double>(n));
    auto const rank = [&](double r) {
        return static_cast<std::size_t>(std::clamp(r, 0.0, static_cast<double>(n - 1)));
    };
    double const low = samples[rank(std::floor(double(n) / 2 - reach) - 1)];
    double const high = samples[rank(std::ceil(double(n) / 2 + reach) - 1)];
    return {median, median > 0 ? (high - low) / (2 * median) : 0};
}

// One tensor of the problem: its inputs, the buffer kernels write, and what it must hold after.
struct Tensor {
    DataType dtype{};
    std::size_t elements = 0; ///< in the buffer (every offset the strides reach)
    bool dense = false;       ///< the buffer holds the shape's elements and nothing else
    runtime::DeviceMemory<std::uint8_t> working, expected;
    bool compared = false;
    double scale = 0; ///< the reference's largest magnitude
};

struct DeviceProblem::State {
    std::shared_ptr<runtime::Device> device;
    std::optional<runtime::Stream> stream;
    Bindings bindings;  ///< the random inputs
    Bindings reference; ///< on the host, where the CPU computed it
    std::map<std::string, Tensor> tensors;
    std::map<std::string, runtime::DeviceMemory<std::uint8_t>> inputs; ///< by tensor name
    std::optional<DeviceComparison> comparison;
    runtime::DeviceMemory<std::uint32_t> flush;
    std::vector<runtime::Event> events;
    std::string reference_name;
    double gemmTerms = 0; ///< K, where the Command is a GEMM
};

DeviceProblem::DeviceProblem(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
DeviceProblem::~DeviceProblem() = default;

std::string const& DeviceProblem::reference() const {
    return state_->reference_name;
}

runtime::Expected<std::unique_ptr<DeviceProblem>>
DeviceProblem::create(std::shared_ptr<runtime::Device> device, Command const& command,
                      std::map<std::string, double> const& problem,
                      DeviceRunOptions const& options) {
    auto s = std::make_unique<State>();
    s->device = device;
    s->bindings = randomBindings(command, problem, options.seed);
    KILN_ASSIGN_OR_RETURN(auto stream, runtime::Stream::create(device));
    s->stream.emplace(std::move(stream));
    KILN_ASSIGN_OR_RETURN(auto comparison, DeviceComparison::load(device));
    s->comparison.emplace(std::move(comparison));
    runtime::Stream& st = *s->stream;

    // A large GEMM is checked against cuBLAS on the device; anything else (or a GEMM where
    // cuBLAS does not load) against the CPU reference.
    std::optional<GemmForm> gemm = matchGemm(command);
    std::shared_ptr<runtime::cuda::Blas> blas;
    std::string cublasMissing;
    if (gemm) {
        auto shape = gemmShape(*gemm, s->bindings);
        if (shape)
            s->gemmTerms = static_cast<double>(shape.value().k);
        if (shape && shape.value().flops() > options.deviceReferenceFlops) {
            auto created = runtime::cuda::Blas::create(device, runtime::cuda::BlasMode::Reference);
            if (created) {
                blas = created.value();
            } else {
                cublasMissing = " (cuBLAS: " + created.error().message() + ")";
            }
        }
    }
    s->reference_name = blas ? "cuBLAS " + std::to_string(blas->version()) : "CPU" + cublasMissing;
    if (!blas) {
        s->reference = s->bindings;
        runReference(command, s->reference);
    }

    auto const allocate = [&](std::size_t bytes) {
        return runtime::DeviceMemory<std::uint8_t>::allocate(device,
                                                             std::max<std::size_t>(bytes, 1));
    };
    for (auto const& [name, host] : s->bindings.tensors) {
        Tensor t;
        t.dtype = host.dtype;
        t.elements = host.data.size();
        t.dense = host.elements() == static_cast<std::int64_t>(host.data.size());
        auto const bytes = toBytes(host);
        KILN_ASSIGN_OR_RETURN(auto inputs, allocate(bytes.size()));
        KILN_ASSIGN_OR_RETURN(t.working, allocate(bytes.size()));
        if (!bytes.empty())
            st.copy(inputs, std::span<std::uint8_t const>(bytes));
        s->inputs.emplace(name, std::move(inputs));
        // With cuBLAS only D is compared (against cuBLAS's D); with the CPU, every tensor.
        t.compared = blas ? name == gemm->d : true;
        if (t.compared) {
            KILN_ASSIGN_OR_RETURN(t.expected, allocate(bytes.size()));
            if (!blas) {
                HostTensor const& r = s->reference.tensors.at(name);
                auto const expected = toBytes(r);
                if (!expected.empty())
                    st.copy(t.expected, std::span<std::uint8_t const>(expected));
                t.scale = largestMagnitude(r);
            }
        }
        s->tensors.emplace(name, std::move(t));
    }
    if (blas) {
        Tensor& d = s->tensors.at(gemm->d);
        runtime::Status const status =
            gemmOnDevice(*blas, st, *gemm, s->bindings, s->inputs, d.expected);
        KILN_RETURN_IF_ERROR(status);
        KILN_RETURN_IF_ERROR(st.synchronize());
        if (!DeviceComparison::supports(d.dtype) || !d.dense)
            return runtime::Error(runtime::ErrorCode::InvalidArgument,
                                  "cuBLAS's result cannot be compared on the device");
        KILN_ASSIGN_OR_RETURN(
            d.scale, s->comparison->largestMagnitude(st, d.dtype, d.expected.pointer().address(),
                                                     d.elements));
    }
    // Twice L2, read before each timed repetition: what the one before left there is gone, and
    // what is there instead is clean. (A write would leave L2 full of dirty lines, whose
    // write-back a kernel that reads would pay: 4-5 us of a 100 us row sum on the H100.) Zeroed
    // and read once here, so that the zeros' own write-back is over before any timing.
    if (options.flushL2 && device->description().l2Bytes > 0) {
        KILN_ASSIGN_OR_RETURN(
            s->flush, runtime::DeviceMemory<std::uint32_t>::allocate(
                          device, static_cast<std::size_t>(device->description().l2Bytes) / 2));
        st.fill(s->flush, 0u);
        s->comparison->readThrough(st, s->flush.pointer().address(), s->flush.size());
    }
    KILN_RETURN_IF_ERROR(st.synchronize());
    return std::unique_ptr<DeviceProblem>(new DeviceProblem(std::move(s)));
}

namespace {

// A short kernel's command buffer: `launches` launches, each on its own copy of the tensors (as
// many copies as fill twice L2, at most 32, so that no launch finds its inputs in L2 from the one
// before), and the copies it names.
struct Replay {
    runtime::CommandBuffer buffer;
    int launches = 0;
    std::vector<runtime::DeviceMemory<std::uint8_t>> copies;
};

template <class ArgumentsAt>
runtime::Expected<Replay> recordReplay(DeviceProblem::State& s, runtime::Kernel const& kernel,
                                       runtime::LaunchConfig const& config,
                                       runtime::KernelArguments const& arguments,
                                       ArgumentsAt const& argumentsAt, double medianMs) {
    std::size_t tensorBytes = 0;
    for (auto const& [name, t] : s.tensors)
        tensorBytes += t.working.size();
    auto const l2 =
        static_cast<std::size_t>(std::max<std::int64_t>(s.device->description().l2Bytes, 0));
    std::size_t const sets =
        std::clamp<std::size_t>(2 * l2 / std::max<std::size_t>(tensorBytes, 1) + 1, 1, 32);
    std::vector<runtime::DeviceMemory<std::uint8_t>> copies;
    std::vector<runtime::KernelArguments> rotation{arguments};
    for (std::size_t c = 1; c < sets; ++c) {
        std::map<std::string, std::uint64_t> at;
        for (auto const& [name, t] : s.tensors) {
            KILN_ASSIGN_OR_RETURN(auto copy, runtime::DeviceMemory<std::uint8_t>::allocate(
                                                 s.device, t.working.size()));
            s.stream->copy(copy, s.inputs.at(name));
            at[name] = copy.pointer().address();
            copies.push_back(std::move(copy));
        }
        KILN_ASSIGN_OR_RETURN(auto args,
                              argumentsAt([&](std::string const& name) { return at.at(name); }));
        rotation.push_back(std::move(args));
    }
    // About a millisecond a replay, and every copy used.
    int const launches =
        std::clamp(static_cast<int>(1.0 / std::max(medianMs, 1e-4)), static_cast<int>(sets), 256);
    KILN_ASSIGN_OR_RETURN(auto buffer,
                          runtime::CommandBuffer::record(*s.stream, [&](runtime::Stream& r) {
                              for (int l = 0; l < launches; ++l)
                                  r.launch(kernel, config, rotation[std::size_t(l) % sets]);
                          }));
    return Replay{std::move(buffer), launches, std::move(copies)};
}

} // namespace

runtime::Expected<DeviceRunResult> DeviceProblem::run(runtime::Kernel const& kernel,
                                                      KernelGraph const& lowered,
                                                      std::size_t sharedBytes,
                                                      DeviceRunOptions const& options) {
    State& s = *state_;
    runtime::Stream& stream = *s.stream;
    DeviceRunResult result;
    result.reference = s.reference_name;

    // Every tensor back to its inputs: nothing a kernel before this one wrote can pass for
    // this one's result.
    for (auto& [name, t] : s.tensors)
        stream.copy(t.working, s.inputs.at(name));

    // A workspace the manifest declares (a Reduce's rows split over workgroups), as large as
    // it says for these sizes and zeroed once: each launch leaves it zeroed, so every launch
    // below (one stream, in turn: the timed ones and a replay's) uses the same one.
    std::map<std::string, runtime::DeviceMemory<std::uint32_t>> workspaces;
    if (kernel.manifest())
        for (auto const& p : kernel.manifest()->parameters) {
            if (p.workspaceBytes.empty())
                continue;
            std::int64_t bytes = 0;
            try {
                bytes = evaluateInt(*parseExpression(p.workspaceBytes, SizeNames()),
                                    BindingsEnvironment(s.bindings));
            } catch (std::exception const& e) {
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("the workspace {} of '{}' bytes: {}", p.name,
                                         p.workspaceBytes, e.what()));
            }
            KILN_ASSIGN_OR_RETURN(
                auto memory,
                runtime::DeviceMemory<std::uint32_t>::allocate(
                    s.device, std::max<std::size_t>(static_cast<std::size_t>(bytes + 3) / 4, 1)));
            stream.fill(memory, 0u);
            workspaces.emplace(p.name, std::move(memory));
        }

    // Arguments, in the kernel's parameter order, with each tensor at `address(name)`.
    auto const argumentsAt =
        [&](auto const& address) -> runtime::Expected<runtime::KernelArguments> {
        runtime::KernelArguments arguments;
        for (auto const& arg : lowered.arguments) {
            switch (arg.kind) {
            case KernelArgument::Kind::Tensor:
                if (!s.tensors.count(arg.name))
                    return Error(ErrorCode::InvalidArgument,
                                 fmt::format("the kernel takes a tensor '{}' the Command does "
                                             "not have",
                                             arg.name));
                addTensor(arguments, arg.dtype, address(arg.name));
                break;
            case KernelArgument::Kind::Scalar:
                addScalar(arguments, arg.dtype, s.bindings.scalars.at(arg.name));
                break;
            case KernelArgument::Kind::Size:
                arguments.add(s.bindings.sizes.at(arg.name));
                break;
            }
        }
        // A TMA kernel's tensor maps, after the graph's arguments: each encoded from its
        // tensor's address and the tensor's extents and strides in the lowered graph. A
        // workspace, in its place among them.
        if (kernel.manifest())
            for (auto const& p : kernel.manifest()->parameters) {
                if (auto const w = workspaces.find(p.name); w != workspaces.end()) {
                    addPointer<std::uint8_t>(arguments, w->second.pointer().address());
                    continue;
                }
                if (p.kind != runtime::ParameterKind::TensorMap)
                    continue;
                auto const geometry = lowering::tensorGeometry(lowered, p.tensor);
                if (!geometry || geometry->sizes.size() != p.tensorMap->rank ||
                    !s.tensors.count(p.tensor))
                    return Error(ErrorCode::InvalidArgument,
                                 fmt::format("the tensor map {} maps '{}', which the Command "
                                             "has not as a tensor of {} dimensions",
                                             p.name, p.tensor, p.tensorMap->rank));
                runtime::TensorMapLayout layout;
                layout.shape = *p.tensorMap;
                BindingsEnvironment const sizes(s.bindings);
                for (std::size_t d = 0; d < geometry->sizes.size(); ++d) {
                    layout.sizes[d] =
                        static_cast<std::uint64_t>(evaluateInt(*geometry->sizes[d], sizes));
                    if (d > 0)
                        layout.strides[d] = static_cast<std::uint64_t>(
                            evaluateInt(*geometry->strides[d], sizes) *
                            static_cast<std::int64_t>(runtime::sizeOf(p.type)));
                }
                auto const map = s.device->encodeTensorMap(address(p.tensor), layout);
                if (!map.ok())
                    return map.error().withContext("the tensor map " + p.name);
                arguments.add(map.value());
            }
        return arguments;
    };
    KILN_ASSIGN_OR_RETURN(auto const arguments, argumentsAt([&](std::string const& name) {
                              return s.tensors.at(name).working.pointer().address();
                          }));
    for (auto const& arg : lowered.arguments)
        if (arg.kind == KernelArgument::Kind::Tensor)
            result.bytes += static_cast<double>(s.bindings.tensors.at(arg.name).elements() *
                                                sizeInBytes(arg.dtype)) *
                            static_cast<double>(accesses(lowered, arg.name));
    auto const shape = lowering::launchShape(lowered);
    BindingsEnvironment const environment(s.bindings);
    for (int a = 0; a < 3; ++a) {
        result.grid[a] = evaluateInt(*shape.grid[a], environment);
        if (result.grid[a] <= 0)
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("the grid has {} workgroups along axis {} for this problem",
                                     result.grid[a], a));
    }
    // The block the kernel was generated for: the graph's, unless code generation added warps
    // of its own (WARP_SPECIALIZE's producer warpgroup), which the manifest says.
    runtime::Dim3 block{static_cast<std::uint32_t>(shape.block[0]),
                        static_cast<std::uint32_t>(shape.block[1]),
                        static_cast<std::uint32_t>(shape.block[2])};
    if (kernel.manifest() && kernel.manifest()->block)
        block = *kernel.manifest()->block;
    runtime::Dim3 grid{static_cast<std::uint32_t>(result.grid[0]),
                       static_cast<std::uint32_t>(result.grid[1]),
                       static_cast<std::uint32_t>(result.grid[2])};
    // CLUSTER_M, CLUSTER_N: the thread-block cluster the manifest declares. The grid of tiles is
    // a whole number of clusters, its last ones past the edge where the tiles are not (the
    // manifest's grid, TileOrder.h).
    runtime::Dim3 const cluster =
        kernel.manifest() ? kernel.manifest()->cluster.value_or(runtime::Dim3{}) : runtime::Dim3{};
    // A persistent kernel's grid counts its tiles; it is launched on as many workgroups as the
    // device's multiprocessors hold at once, each looping over tiles (PersistentGrid.h), in
    // whole clusters.
    if (kernel.manifest() && kernel.manifest()->workgroupsPerMultiprocessor > 0) {
        grid = runtime::persistentGrid(grid, kernel.manifest()->workgroupsPerMultiprocessor,
                                       s.device->description().multiprocessorCount,
                                       static_cast<std::uint32_t>(cluster.count()));
    } else {
        grid.x = (grid.x + cluster.x - 1) / cluster.x * cluster.x;
        grid.y = (grid.y + cluster.y - 1) / cluster.y * cluster.y;
    }
    result.grid = {grid.x, grid.y, grid.z};
    runtime::LaunchConfig const config{grid, block, sharedBytes, cluster};
    stream.launch(kernel, config, arguments);
    // With a workspace, the result compared is the second launch's, on the workspace as the
    // first left it (and on the inputs again): a kernel that does not leave it zeroed fails.
    if (!workspaces.empty()) {
        for (auto& [name, t] : s.tensors)
            stream.copy(t.working, s.inputs.at(name));
        stream.launch(kernel, config, arguments);
    }
    if (auto st = stream.synchronize(); !st.ok())
        return st.error().withContext(kernel.name());

    // Every compared tensor against the reference, on the device where it can be.
    for (auto& [name, t] : s.tensors) {
        if (!t.compared)
            continue;
        double error = 0;
        if (DeviceComparison::supports(t.dtype)) {
            // Outside the shape, a strided buffer holds its inputs on both sides.
            KILN_ASSIGN_OR_RETURN(error, s.comparison->maxRelativeError(
                                             stream, t.dtype, t.working.pointer().address(),
                                             t.expected.pointer().address(), t.elements, t.scale));
        } else {
            HostTensor host = s.bindings.tensors.at(name);
            std::vector<std::uint8_t> bytes(t.working.size());
            stream.copy(std::span<std::uint8_t>(bytes), t.working);
            KILN_RETURN_IF_ERROR(stream.synchronize());
            fromBytes(bytes, host);
            error = maxRelativeError(host, s.reference.tensors.at(name));
        }
        if (error >= result.maxRelativeError) {
            result.maxRelativeError = error;
            result.worstTensor = name;
        }
        bool const half = t.dtype == DataType::F16 || t.dtype == DataType::BF16;
        // A GEMM's f32 result is a sum of K terms: it carries about sqrt(K) roundings of the
        // terms' magnitude, which near a result that cancels (measured against 1% of the
        // tensor's largest, maxRelativeError) exceed 1e-5 of it from K of about 50 on, against
        // the exact CPU reference as against cuBLAS's sum in another order. So the f32 tolerance
        // grows as sqrt(K) / 4: 1e-5 up to K = 16, 2.2e-5 at K = 77, 1.6e-4 at K = 4096. f16
        // results are dominated by their own rounding.
        double const f32 = std::max(1e-5, 1e-5 * std::sqrt(s.gemmTerms) / 4);
        result.tolerance = std::max(result.tolerance, half ? 1e-2 : f32);
    }

    if (options.repetitions <= 0)
        return result;
    for (int i = 0; i < options.warmup; ++i)
        stream.launch(kernel, config, arguments);
    if (options.warmupSeconds > 0) { // rounds of 8 launches until the time has passed
        auto const warming = std::chrono::steady_clock::now();
        auto const until = warming + std::chrono::duration<double>(options.warmupSeconds);
        // Bounded by the time (each round waits for its launches) and by a count of rounds
        // that a launch of a microsecond would need.
        for (int round = 0; round < 1 << 20 && std::chrono::steady_clock::now() < until; ++round) {
            for (int i = 0; i < 8; ++i)
                stream.launch(kernel, config, arguments);
            KILN_RETURN_IF_ERROR(stream.synchronize());
        }
    }
    // Timed in rounds: each round queues its samples and waits once. A sample is one launch
    // between its own pair of events, after a read of the L2 buffer; or, for a short kernel,
    // a replayed command buffer of many launches (below).
    using Clock = std::chrono::steady_clock;
    auto const start = Clock::now();
    bool const adaptive = options.maxRepetitions > options.repetitions;
    int const most = adaptive ? options.maxRepetitions : options.repetitions;
    std::optional<runtime::CommandBuffer> replayed;
    std::vector<runtime::DeviceMemory<std::uint8_t>> copies;
    bool replayTried = false;
    int round = options.repetitions;
    while (true) {
        while (s.events.size() < 2 * static_cast<std::size_t>(round)) {
            KILN_ASSIGN_OR_RETURN(auto event, runtime::Event::create(s.device));
            s.events.push_back(std::move(event));
        }
        for (int i = 0; i < round; ++i) {
            if (replayed) {
                stream.record(s.events[2 * i]).replay(*replayed).record(s.events[2 * i + 1]);
                continue;
            }
            if (!s.flush.empty())
                s.comparison->readThrough(stream, s.flush.pointer().address(), s.flush.size());
            stream.record(s.events[2 * i])
                .launch(kernel, config, arguments)
                .record(s.events[2 * i + 1]);
        }
        if (auto st = stream.synchronize(); !st.ok())
            return st.error().withContext(kernel.name());
        for (int i = 0; i < round; ++i) {
            KILN_ASSIGN_OR_RETURN(double ms,
                                  s.events[2 * i + 1].millisecondsSince(s.events[2 * i]));
            result.samplesMs.push_back(ms / result.launchesPerSample);
        }
        auto const [median, precision] = medianAndPrecision(result.samplesMs);
        result.medianMs = median;
        result.precision = precision;
        int const done = static_cast<int>(result.samplesMs.size());
        double const seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (!replayTried && median < options.replayBelowMs && seconds < options.maxSeconds) {
            // Tens of microseconds: the cost of each launch and of its events would count.
            // Instead, many launches recorded once and replayed between one pair of events.
            // Where that cannot be set up (no memory for the copies, a driver without graphs),
            // timing goes on launch by launch.
            replayTried = true;
            if (auto made = recordReplay(s, kernel, config, arguments, argumentsAt, median);
                made.ok()) {
                auto& [buffer, launches, held] = made.value();
                copies = std::move(held);
                replayed.emplace(std::move(buffer));
                stream.replay(*replayed); // warm-up
                result.launchesPerSample = launches;
                result.samplesMs.clear();
                round = options.repetitions;
                continue;
            }
        }
        if (!adaptive || done >= most || precision <= options.precision ||
            seconds >= options.maxSeconds)
            break;
        // Half again as many, but never past the cap or (at the rate so far) the time left.
        double const perSample = seconds / done;
        int const inTime = static_cast<int>((options.maxSeconds - seconds) / perSample) + 1;
        round = std::clamp(done / 2, 1, std::min(most - done, inTime));
    }
    result.minMs = *std::min_element(result.samplesMs.begin(), result.samplesMs.end());
    return result;
}

runtime::Expected<LoadedKernel> loadEmitted(std::shared_ptr<runtime::Device> const& device,
                                            lowering::EmittedKernel const& kernel) {
    runtime::KernelLoaderSpec spec =
        runtime::KernelLoaderSpec::ptxInMemory(kernel.code, kernel.entry);
    int registers = 0;
    if (runtime::findPtxas()) {
        KILN_ASSIGN_OR_RETURN(auto assembled, runtime::assemblePtx(kernel.code, kernel.target));
        registers = assembled.registers;
        lowering::checkRegisters(kernel, registers);
        spec = runtime::KernelLoaderSpec::cubinInMemory(
            std::string(assembled.cubin.begin(), assembled.cubin.end()), kernel.entry);
    }
    // A persistent grid sized by the registers ptxas gave (Occupancy.h).
    KILN_ASSIGN_OR_RETURN(
        auto manifest,
        runtime::KernelManifest::fromJson(
            lowering::withAssembledRegisters(kernel, registers).manifestJson(), kernel.entry));
    KILN_ASSIGN_OR_RETURN(auto loaded, runtime::Kernel::load(device, spec.withManifest(manifest)));
    return LoadedKernel{std::move(loaded), registers};
}

runtime::Expected<DeviceRunResult>
runOnDevice(std::shared_ptr<runtime::Device> const& device, Command const& command,
            std::map<std::string, double> const& problem, KernelGraph const& lowered,
            lowering::EmittedKernel const& kernel, DeviceRunOptions const& options) {
    KILN_ASSIGN_OR_RETURN(auto loaded, loadEmitted(device, kernel));
    KILN_ASSIGN_OR_RETURN(auto onDevice, DeviceProblem::create(device, command, problem, options));
    KILN_ASSIGN_OR_RETURN(auto result,
                          onDevice->run(loaded.kernel, lowered, kernel.sharedBytes, options));
    result.registers = loaded.registers;
    return result;
}

} // namespace kiln::scheduler
