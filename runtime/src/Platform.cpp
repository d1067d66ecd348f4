// Platform.cpp: platforms by name; the CUDA platform when this build has cuda.h, and HIP.
#include "kiln/runtime/Platform.h"

#include "hip/HipPlatform.h"

#if KILN_HAVE_CUDA
#include "cuda/CudaPlatform.h"
#endif

namespace kiln::runtime {

std::vector<std::string> platformNames() {
    return {"cuda", "hip"};
}

Expected<std::shared_ptr<Platform>> loadPlatform(std::string_view name,
                                                 PlatformOptions const& options) {
    if (name == "cuda") {
#if KILN_HAVE_CUDA
        return cuda::loadCudaPlatform(options);
#else
        return Error(ErrorCode::Unsupported,
                     "the CUDA platform is not in this build: cuda.h was not found when it was "
                     "configured (set CUDAToolkit_ROOT and configure again)");
#endif
    }
    if (name == "hip")
        return hip::loadHipPlatform(options);
    return Error(ErrorCode::Unsupported,
                 "unknown platform '" + std::string(name) + "'; known platforms: cuda, hip");
}

} // namespace kiln::runtime
