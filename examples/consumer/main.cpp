// The consumer: y = alpha * x + y on the GPU with the kernel `kiln export` wrote to axpy.h,
// checked on the CPU. Without a GPU (no driver, no device) it says so and exits 0: building
// and linking against the installed package is then what it shows.
#include "axpy.h"
#include "kiln/runtime/DeviceMemory.h"
#include "kiln/runtime/Platform.h"

#include <cmath>
#include <cstdio>
#include <type_traits>
#include <vector>

// The sizes go by name, through kiln_export::axpy::Sizes, or not at all.
static_assert(!std::is_invocable_v<decltype(kiln_export::axpy::grid), std::int64_t>);
static_assert(!std::is_constructible_v<kiln_export::axpy::Sizes, std::int64_t>);

int main() {
    auto platform = kiln::runtime::loadPlatform("cuda");
    if (!platform.ok()) {
        std::printf("consumer: built against the installed Kiln; not run: %s\n",
                    platform.error().message().c_str());
        return 0;
    }
    auto device = platform.value()->device(0);
    if (!device.ok()) {
        std::printf("consumer: not run: %s\n", device.error().message().c_str());
        return 0;
    }
    std::int64_t const n = 1000003;
    float const alpha = 2.5f;
    std::vector<float> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = float(i % 97) * 0.25f;
        y[i] = float(i % 13) - 6.0f;
    }
    auto dx = kiln::runtime::DeviceMemory<float>::allocate(device.value(), x.size());
    auto dy = kiln::runtime::DeviceMemory<float>::allocate(device.value(), y.size());
    auto kernel = kiln_export::axpy::load(device.value());
    auto stream = kiln::runtime::Stream::create(device.value());
    if (!dx.ok() || !dy.ok() || !kernel.ok() || !stream.ok()) {
        std::fprintf(stderr, "consumer: setup failed: %s\n",
                     !kernel.ok() ? kernel.error().message().c_str() : "memory or stream");
        return 1;
    }
    if (!dx.value().write(x).ok() || !dy.value().write(y).ok())
        return 1;
    // Sizes by name (designated initializers): the header takes them no other way.
    kiln_export::axpy::Sizes const sizes{.N = n};
    kiln_export::axpy::launch(stream.value(), kernel.value(), sizes, dx.value(), dy.value(), alpha);
    if (auto s = stream.value().synchronize(); !s.ok()) {
        std::fprintf(stderr, "consumer: launch failed: %s\n", s.message().c_str());
        return 1;
    }
    auto result = dy.value().read();
    if (!result.ok())
        return 1;
    for (std::size_t i = 0; i < y.size(); ++i) {
        float const expected = alpha * x[i] + y[i];
        if (std::fabs(result.value()[i] - expected) > 1e-5f * std::fabs(expected) + 1e-6f) {
            std::fprintf(stderr, "consumer: y[%zu] = %g, expected %g\n", i,
                         double(result.value()[i]), double(expected));
            return 1;
        }
    }
    std::printf("consumer: axpy of %lld values on %s: correct\n", static_cast<long long>(n),
                device.value()->description().name.c_str());
    return 0;
}
