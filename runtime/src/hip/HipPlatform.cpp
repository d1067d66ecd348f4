// HipPlatform.cpp: the HIP platform and its devices.
#include "HipPlatform.h"

#include "HipDevice.h"

namespace kiln::runtime::hip {
namespace {

class HipPlatform final : public Platform {
public:
    HipPlatform(std::shared_ptr<HipRuntime> runtime, int count)
        : runtime_(std::move(runtime))
        , count_(count) {}

    std::string_view name() const override { return "hip"; }
    std::string version() const override {
        return "HIP " + runtime_->versionText() + " (runtime library " + runtime_->library() + ")";
    }
    int deviceCount() const override { return count_; }
    Expected<std::shared_ptr<Device>> device(int ordinal) override {
        if (ordinal < 0 || ordinal >= count_) {
            return Error(ErrorCode::NoDevice, "no HIP device " + std::to_string(ordinal) +
                                                  ": the runtime sees " + std::to_string(count_) +
                                                  " device(s)");
        }
        KILN_ASSIGN_OR_RETURN(std::shared_ptr<HipDevice> device,
                              HipDevice::open(runtime_, ordinal));
        return std::shared_ptr<Device>(std::move(device));
    }

private:
    std::shared_ptr<HipRuntime> runtime_;
    int count_;
};

} // namespace

Expected<std::shared_ptr<Platform>> loadHipPlatform(PlatformOptions const& options) {
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<HipRuntime> runtime,
                          HipRuntime::load(options.driverLibrary));
    int count = 0;
    HipError const result = runtime->api().hipGetDeviceCount(&count);
    if (result == kHipErrorNoDevice || (result == kHipSuccess && count == 0)) {
        return Error(ErrorCode::NoDevice, "no AMD device: the HIP runtime (HIP " +
                                              runtime->versionText() + ", " + runtime->library() +
                                              ") sees none");
    }
    KILN_RETURN_IF_ERROR(runtime->check(result, "hipGetDeviceCount"));
    return std::shared_ptr<Platform>(std::make_shared<HipPlatform>(std::move(runtime), count));
}

} // namespace kiln::runtime::hip
