// GpuFixture.cpp: opening device 0 once per process, or saying why not.
#include "gpu/GpuFixture.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace kiln::runtime::test {
namespace {

struct Opened {
    std::shared_ptr<Device> device;
    std::string why; ///< why there is none
};

Opened const& openDevice() {
    static Opened const opened = [] {
        Expected<std::shared_ptr<Platform>> platform = loadPlatform("cuda");
        if (!platform.ok())
            return Opened{nullptr, platform.error().message()};
        Expected<std::shared_ptr<Device>> device = (*platform)->device(0);
        if (!device.ok())
            return Opened{nullptr, device.error().message()};
        DeviceDescription const& d = (*device)->description();
        if (d.computeMajor < 8) {
            return Opened{nullptr, d.summary() + " is older than sm_80, the test PTX's target"};
        }
        std::printf("[ gpu      ] %s, %d SMs, %lld MB L2, CUDA driver %d, %s\n", d.name.c_str(),
                    d.multiprocessorCount, static_cast<long long>(d.l2Bytes >> 20), d.driverVersion,
                    (*platform)->version().c_str());
        return Opened{*device, {}};
    }();
    return opened;
}

} // namespace

void GpuTest::SetUp() {
    Opened const& opened = openDevice();
    if (!opened.device) {
        char const* require = std::getenv("KILN_REQUIRE_GPU");
        if (require && std::string(require) == "1") {
            FAIL() << "KILN_REQUIRE_GPU=1 but there is no usable GPU: " << opened.why;
        }
        GTEST_SKIP() << "no GPU: " << opened.why;
    }
    device_ = opened.device;
}

Stream GpuTest::newStream() const {
    Expected<Stream> stream = Stream::create(device_);
    if (!stream.ok())
        throw std::runtime_error(stream.error().message());
    return std::move(stream).value();
}

std::vector<float> randomFloats(std::size_t count, std::uint32_t seed) {
    std::mt19937 engine(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(count);
    for (float& value : values) {
        do {
            value = uniform(engine);
        } while (value == 0.0f);
    }
    return values;
}

std::vector<std::uint32_t> randomWords(std::size_t count, std::uint32_t seed) {
    std::mt19937 engine(seed);
    std::vector<std::uint32_t> values(count);
    for (std::uint32_t& value : values)
        value = engine();
    return values;
}

} // namespace kiln::runtime::test
