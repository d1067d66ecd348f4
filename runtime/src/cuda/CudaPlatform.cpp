// CudaPlatform.cpp: the CUDA platform and its devices.
#include "CudaPlatform.h"

#include "CudaDevice.h"

namespace kiln::runtime::cuda {
namespace {

std::string versionText(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

class CudaPlatform final : public Platform {
public:
    CudaPlatform(std::shared_ptr<CudaDriver> driver, int count)
        : driver_(std::move(driver))
        , count_(count) {}

    std::string_view name() const override { return "cuda"; }
    std::string version() const override {
        return "CUDA " + versionText(driver_->version()) + " (driver library " +
               driver_->library() + ")";
    }
    int deviceCount() const override { return count_; }
    Expected<std::shared_ptr<Device>> device(int ordinal) override {
        if (ordinal < 0 || ordinal >= count_) {
            return Error(ErrorCode::NoDevice, "no CUDA device " + std::to_string(ordinal) +
                                                  ": the driver sees " + std::to_string(count_) +
                                                  " device(s)");
        }
        KILN_ASSIGN_OR_RETURN(std::shared_ptr<CudaDevice> device,
                              CudaDevice::open(driver_, ordinal));
        return std::shared_ptr<Device>(std::move(device));
    }

private:
    std::shared_ptr<CudaDriver> driver_;
    int count_;
};

} // namespace

Expected<std::shared_ptr<Platform>> loadCudaPlatform(PlatformOptions const& options) {
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<CudaDriver> driver,
                          CudaDriver::load(options.driverLibrary));
    int count = 0;
    KILN_RETURN_IF_ERROR(driver->check(driver->api().cuDeviceGetCount(&count), "cuDeviceGetCount"));
    if (count == 0) {
        return Error(ErrorCode::NoDevice, "no CUDA device: the driver (CUDA " +
                                              versionText(driver->version()) + ", " +
                                              driver->library() + ") sees none");
    }
    return std::shared_ptr<Platform>(std::make_shared<CudaPlatform>(std::move(driver), count));
}

} // namespace kiln::runtime::cuda
