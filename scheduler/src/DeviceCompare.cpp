#include "kiln/scheduler/DeviceCompare.h"

#include "kiln/runtime/KernelArguments.h"
#include "kiln/runtime/KernelLoaderSpec.h"

#include <bit>
#include <fmt/format.h>

namespace kiln::scheduler {

namespace {

// Element types as the kernels take them.
enum : std::uint32_t { kF32 = 0, kF16 = 1, kBF16 = 2, kF64 = 3 };

std::uint32_t typeCode(DataType type) {
    switch (type) {
    case DataType::F16:
        return kF16;
    case DataType::BF16:
        return kBF16;
    case DataType::F64:
        return kF64;
    default:
        return kF32;
    }
}

// Loads element %rd5 of the buffer at `base` into the f64 register `out`, by the type in %r1
// (labels get `tag`). bf16 is the high half of an f32, so it widens by a shift on any target.
std::string loadElement(std::string const& base, std::string const& out, std::string const& tag) {
    return fmt::format(R"(
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra {2}_F32;
    setp.eq.u32 %p1, %r1, 1;
    @%p1 bra {2}_F16;
    setp.eq.u32 %p1, %r1, 2;
    @%p1 bra {2}_BF16;
    shl.b64 %rd8, %rd5, 3;
    add.u64 %rd9, {0}, %rd8;
    ld.global.f64 {1}, [%rd9];
    bra.uni {2}_DONE;
{2}_F32:
    shl.b64 %rd8, %rd5, 2;
    add.u64 %rd9, {0}, %rd8;
    ld.global.f32 %f1, [%rd9];
    cvt.f64.f32 {1}, %f1;
    bra.uni {2}_DONE;
{2}_F16:
    shl.b64 %rd8, %rd5, 1;
    add.u64 %rd9, {0}, %rd8;
    ld.global.b16 %h1, [%rd9];
    cvt.f32.f16 %f1, %h1;
    cvt.f64.f32 {1}, %f1;
    bra.uni {2}_DONE;
{2}_BF16:
    shl.b64 %rd8, %rd5, 1;
    add.u64 %rd9, {0}, %rd8;
    ld.global.u16 %r6, [%rd9];
    shl.b32 %r6, %r6, 16;
    mov.b32 %f1, %r6;
    cvt.f64.f32 {1}, %f1;
{2}_DONE:)",
                       base, out, tag);
}

// A grid-stride loop over `count` elements whose body folds one element into the f64 maximum
// %d2; then the warp's maximum by butterfly shuffles, and lane 0 folds it into *result with an
// unsigned 64-bit atomic max (non-negative f64 values order as their bits do).
std::string reductionKernel(std::string const& name, std::string const& body) {
    // The f64 in %d2, in two 32-bit halves, folded with lanes 16, 8, 4, 2 and 1 apart.
    std::string butterfly;
    for (int lanes = 16; lanes >= 1; lanes /= 2)
        butterfly += fmt::format(R"(    mov.b64 {{%r7, %r8}}, %d2;
    shfl.sync.bfly.b32 %r9, %r7, {0}, 31, -1;
    shfl.sync.bfly.b32 %r10, %r8, {0}, 31, -1;
    mov.b64 %d9, {{%r9, %r10}};
    max.f64 %d2, %d2, %d9;
)",
                                 lanes);
    return fmt::format(R"(
.visible .entry {0}(.param .u64 actual, .param .u64 expected, .param .u64 count,
                    .param .u32 type, .param .f64 floor, .param .u64 result)
{{
    .reg .pred %p<8>;
    .reg .b16 %h<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<2>;
    .reg .f64 %d<12>;
    ld.param.u64 %rd1, [actual];
    ld.param.u64 %rd2, [expected];
    ld.param.u64 %rd3, [count];
    ld.param.u32 %r1, [type];
    ld.param.f64 %d1, [floor];
    ld.param.u64 %rd4, [result];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd4, %rd4;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mov.u32 %r5, %nctaid.x;
    mul.wide.u32 %rd5, %r2, %r3;
    cvt.u64.u32 %rd6, %r4;
    add.u64 %rd5, %rd5, %rd6;
    mul.wide.u32 %rd7, %r5, %r3;
    mov.f64 %d2, 0d0000000000000000;
LOOP:
    setp.ge.u64 %p2, %rd5, %rd3;
    @%p2 bra REDUCE;
{1}
    add.u64 %rd5, %rd5, %rd7;
    bra.uni LOOP;
REDUCE:
{2}    and.b32 %r11, %r4, 31;
    setp.ne.u32 %p7, %r11, 0;
    @%p7 bra END;
    mov.b64 %rd10, %d2;
    atom.global.max.u64 %rd11, [%rd4], %rd10;
END:
    ret;
}}
)",
                       name, body, butterfly);
}

} // namespace

std::string comparisonPtx() {
    // max |r|, NaNs skipped (max.f64 returns the other operand of a NaN).
    std::string const magnitude = loadElement("%rd2", "%d4", "M") + R"(
    abs.f64 %d4, %d4;
    max.f64 %d2, %d2, %d4;)";
    // |a - r| / max(|r|, floor); a NaN on one side only is an infinite error.
    std::string const error = loadElement("%rd1", "%d3", "A") + loadElement("%rd2", "%d4", "R") +
                              R"(
    testp.notanumber.f64 %p3, %d3;
    testp.notanumber.f64 %p4, %d4;
    xor.pred %p5, %p3, %p4;
    @%p5 mov.f64 %d2, 0d7FF0000000000000;
    or.pred %p6, %p3, %p4;
    @%p6 bra NEXT;
    sub.f64 %d5, %d3, %d4;
    abs.f64 %d5, %d5;
    abs.f64 %d6, %d4;
    max.f64 %d6, %d6, %d1;
    div.rn.f64 %d7, %d5, %d6;
    max.f64 %d2, %d2, %d7;
NEXT:)";
    return ".version 7.0\n.target sm_70\n.address_size 64\n" +
           reductionKernel("kiln_largest_magnitude", magnitude) +
           reductionKernel("kiln_max_relative_error", error);
}

bool DeviceComparison::supports(DataType type) {
    return type == DataType::F16 || type == DataType::BF16 || type == DataType::F32 ||
           type == DataType::F64;
}

runtime::Expected<DeviceComparison>
DeviceComparison::load(std::shared_ptr<runtime::Device> device) {
    DeviceComparison c;
    std::string const ptx = comparisonPtx();
    KILN_ASSIGN_OR_RETURN(auto magnitude,
                          runtime::Kernel::load(device, runtime::KernelLoaderSpec::ptxInMemory(
                                                            ptx, "kiln_largest_magnitude")));
    KILN_ASSIGN_OR_RETURN(auto error,
                          runtime::Kernel::load(device, runtime::KernelLoaderSpec::ptxInMemory(
                                                            ptx, "kiln_max_relative_error")));
    c.magnitude_.emplace(std::move(magnitude));
    c.error_.emplace(std::move(error));
    KILN_ASSIGN_OR_RETURN(c.result_, runtime::DeviceMemory<std::uint32_t>::allocate(device, 2));
    c.blocks_ =
        static_cast<std::uint32_t>(std::max(device->description().multiprocessorCount, 1) * 8);
    return c;
}

void DeviceComparison::launch(runtime::Stream& stream, runtime::Kernel const& kernel, DataType type,
                              std::uint64_t actual, std::uint64_t expected, std::size_t count,
                              double floor) {
    if (count == 0)
        return;
    runtime::KernelArguments arguments;
    arguments.add(actual)
        .add(expected)
        .add(static_cast<std::uint64_t>(count))
        .add(typeCode(type))
        .add(floor)
        .add(result_.pointer().address());
    std::uint64_t const blocks = std::min<std::uint64_t>(blocks_, (count + 255) / 256);
    stream.launch(kernel,
                  runtime::LaunchConfig{{static_cast<std::uint32_t>(blocks), 1, 1}, {256, 1, 1}, 0},
                  arguments);
}

runtime::Expected<double> DeviceComparison::reduce(runtime::Stream& stream,
                                                   runtime::Kernel const& kernel, DataType type,
                                                   std::uint64_t actual, std::uint64_t expected,
                                                   std::size_t count, double floor) {
    if (!supports(type))
        return runtime::Error(runtime::ErrorCode::InvalidArgument,
                              fmt::format("cannot compare {} tensors on the device", name(type)));
    std::uint32_t halves[2] = {0, 0};
    stream.fill(result_, 0u);
    launch(stream, kernel, type, actual, expected, count, floor);
    stream.copy(std::span<std::uint32_t>(halves), result_);
    KILN_RETURN_IF_ERROR(stream.synchronize());
    return std::bit_cast<double>(std::uint64_t(halves[1]) << 32 | halves[0]);
}

void DeviceComparison::readThrough(runtime::Stream& stream, std::uint64_t address,
                                   std::size_t count) {
    launch(stream, *magnitude_, DataType::F32, address, address, count, 0);
}

runtime::Expected<double> DeviceComparison::largestMagnitude(runtime::Stream& stream, DataType type,
                                                             std::uint64_t address,
                                                             std::size_t count) {
    return reduce(stream, *magnitude_, type, address, address, count, 0);
}

runtime::Expected<double> DeviceComparison::maxRelativeError(runtime::Stream& stream, DataType type,
                                                             std::uint64_t actual,
                                                             std::uint64_t expected,
                                                             std::size_t count, double scale) {
    return reduce(stream, *error_, type, actual, expected, count, std::max(1e-2 * scale, 1e-300));
}

} // namespace kiln::scheduler
