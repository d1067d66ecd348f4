// Blas.cpp: cuBLAS through dlopen/dlsym, and GEMM on Kiln's row-major tensors.
//
// The few cuBLAS types and constants needed are declared here (cuBLAS's header is not needed to
// build); where the header is present they are checked against it.
#include "kiln/runtime/cuda/Blas.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <utility>

#if KILN_HAVE_CUDA
#include "CudaDevice.h"
#endif

namespace kiln::runtime::cuda {

namespace blas {
using Handle = void*;
using Status = int;                  // cublasStatus_t
constexpr int kOpN = 0;              // CUBLAS_OP_N
constexpr int kOpT = 1;              // CUBLAS_OP_T
constexpr int kR32F = 0;             // CUDA_R_32F
constexpr int kR16F = 2;             // CUDA_R_16F
constexpr int kR16BF = 14;           // CUDA_R_16BF
constexpr int kCompute32F = 68;      // CUBLAS_COMPUTE_32F
constexpr int kGemmDefault = -1;     // CUBLAS_GEMM_DEFAULT
constexpr int kDefaultMath = 0;      // CUBLAS_DEFAULT_MATH
constexpr int kExactReductions = 16; // CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
} // namespace blas

#if __has_include(<cublas_v2.h>)
} // namespace kiln::runtime::cuda
#include <cublas_v2.h>
namespace kiln::runtime::cuda {
static_assert(blas::kOpN == CUBLAS_OP_N && blas::kOpT == CUBLAS_OP_T);
static_assert(blas::kR32F == CUDA_R_32F && blas::kR16F == CUDA_R_16F &&
              blas::kR16BF == CUDA_R_16BF);
static_assert(blas::kCompute32F == CUBLAS_COMPUTE_32F && blas::kGemmDefault == CUBLAS_GEMM_DEFAULT);
static_assert(blas::kDefaultMath == CUBLAS_DEFAULT_MATH &&
              blas::kExactReductions == CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
#endif

/// The entry points, by the cuBLAS names they were resolved from.
struct BlasFunctions {
    blas::Status (*cublasCreate_v2)(blas::Handle*) = nullptr;
    blas::Status (*cublasDestroy_v2)(blas::Handle) = nullptr;
    blas::Status (*cublasSetStream_v2)(blas::Handle, void*) = nullptr;
    blas::Status (*cublasSetMathMode)(blas::Handle, int) = nullptr;
    blas::Status (*cublasGetVersion_v2)(blas::Handle, int*) = nullptr;
    blas::Status (*cublasSgemm_v2)(blas::Handle, int, int, int, int, int, float const*,
                                   float const*, int, float const*, int, float const*, float*,
                                   int) = nullptr;
    blas::Status (*cublasGemmEx)(blas::Handle, int, int, int, int, int, void const*, void const*,
                                 int, int, void const*, int, int, void const*, void*, int, int, int,
                                 int) = nullptr;
    /// Optional (cuBLAS 11.4+).
    char const* (*cublasGetStatusString)(blas::Status) = nullptr;
};

namespace {

template <class F>
void assign(F& out, void* address) {
    static_assert(sizeof(F) == sizeof(void*));
    std::memcpy(&out, &address, sizeof(void*));
}

} // namespace

std::vector<std::string> BlasLibrary::candidates() {
    if (char const* variable = std::getenv(kCublasLibraryVariable); variable && *variable)
        return {variable};
    std::vector<std::string> names;
    for (char const* dir : {"", "/usr/local/cuda/lib64/"})
        for (char const* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
            names.push_back(std::string(dir) + name);
    return names;
}

Expected<std::shared_ptr<BlasLibrary const>> BlasLibrary::load(std::string const& library) {
    std::vector<std::string> const tried = library.empty() ? candidates() : std::vector{library};
    void* handle = nullptr;
    std::string path, reasons;
    for (auto const& name : tried) {
        // Never dlclose'd: cuBLAS keeps state that lives as long as the process.
        handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            path = name;
            break;
        }
        char const* reason = dlerror();
        reasons += std::string(reasons.empty() ? "" : "; ") + (reason ? reason : name);
    }
    if (!handle) {
        return Error(ErrorCode::NotFound, "cuBLAS not found: " + reasons +
                                              " (install cuBLAS, or set " + kCublasLibraryVariable +
                                              " to the path of "
                                              "libcublas.so)");
    }
    std::shared_ptr<BlasLibrary> loaded(new BlasLibrary());
    loaded->path_ = path;
    loaded->api_ = std::make_unique<BlasFunctions>();
    BlasFunctions& api = *loaded->api_;
    std::string missing;
    auto require = [&](auto& slot, char const* name) {
        assign(slot, dlsym(handle, name));
        if (!slot)
            missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    require(api.cublasCreate_v2, "cublasCreate_v2");
    require(api.cublasDestroy_v2, "cublasDestroy_v2");
    require(api.cublasSetStream_v2, "cublasSetStream_v2");
    require(api.cublasSetMathMode, "cublasSetMathMode");
    require(api.cublasGetVersion_v2, "cublasGetVersion_v2");
    require(api.cublasSgemm_v2, "cublasSgemm_v2");
    require(api.cublasGemmEx, "cublasGemmEx");
    assign(api.cublasGetStatusString, dlsym(handle, "cublasGetStatusString"));
    if (!missing.empty()) {
        return Error(ErrorCode::NotFound, "cuBLAS not found: '" + path + "' lacks " + missing +
                                              " (a cuBLAS of CUDA 11 or newer is needed)");
    }
    return std::shared_ptr<BlasLibrary const>(std::move(loaded));
}

BlasLibrary::~BlasLibrary() = default;

std::string BlasLibrary::describe(int status) const {
    static constexpr std::pair<int, char const*> kNames[] = {
        {0, "SUCCESS"},           {1, "NOT_INITIALIZED"}, {3, "ALLOC_FAILED"},
        {7, "INVALID_VALUE"},     {8, "ARCH_MISMATCH"},   {11, "MAPPING_ERROR"},
        {13, "EXECUTION_FAILED"}, {14, "INTERNAL_ERROR"}, {15, "NOT_SUPPORTED"},
        {16, "LICENSE_ERROR"}};
    std::string name = "cuBLAS status " + std::to_string(status);
    for (auto const& [code, text] : kNames)
        if (code == status)
            name = std::string("CUBLAS_STATUS_") + text;
    char const* text = api_->cublasGetStatusString ? api_->cublasGetStatusString(status) : nullptr;
    return text ? name + " (" + text + ")" : name;
}

#if KILN_HAVE_CUDA

namespace {

CudaDevice& cudaDevice(Device& device) {
    return static_cast<CudaDevice&>(device);
}

Error blasError(BlasLibrary const& library, int status, std::string const& call,
                Device const& device) {
    return Error(ErrorCode::DriverError, call + " failed: " + library.describe(status) + " on " +
                                             device.description().summary());
}

int dataType(ScalarType type) {
    switch (type) {
    case ScalarType::F16:
        return blas::kR16F;
    case ScalarType::BF16:
        return blas::kR16BF;
    case ScalarType::F32:
        return blas::kR32F;
    default:
        return -1;
    }
}

// cuBLAS takes 32-bit sizes.
Status checkShape(GemmShape const& shape, char const* call) {
    for (std::int64_t v : {shape.m, shape.n, shape.k}) {
        if (v <= 0 || v > INT_MAX) {
            return Error(ErrorCode::InvalidArgument,
                         std::string(call) + ": the sizes m = " + std::to_string(shape.m) +
                             ", n = " + std::to_string(shape.n) +
                             ", k = " + std::to_string(shape.k) + " must lie in 1 .. 2^31 - 1");
        }
    }
    return {};
}

// Row-major D = op(A) x op(B) is column-major D^T = op(B)^T x op(A)^T: cuBLAS gets B first, its
// "m" is our n, and each operand's leading dimension is its row length as stored.
struct ColumnMajor {
    int opB, opA, m, n, k, ldb, lda, ldd;
};
ColumnMajor columnMajor(GemmShape const& s) {
    return {s.transB ? blas::kOpT : blas::kOpN,
            s.transA ? blas::kOpT : blas::kOpN,
            static_cast<int>(s.n),
            static_cast<int>(s.m),
            static_cast<int>(s.k),
            static_cast<int>(s.transB ? s.k : s.n),
            static_cast<int>(s.transA ? s.m : s.k),
            static_cast<int>(s.n)};
}

} // namespace

Expected<std::shared_ptr<Blas>> Blas::create(std::shared_ptr<Device> device, BlasMode mode,
                                             std::string const& library) {
    if (!device || device->description().platform != "cuda") {
        return Error(ErrorCode::Unsupported,
                     "cuBLAS runs on CUDA devices only" +
                         (device ? "; not on " + device->description().summary() : ""));
    }
    KILN_ASSIGN_OR_RETURN(auto loaded, BlasLibrary::load(library));
    std::shared_ptr<Blas> blas(new Blas());
    blas->library_ = std::move(loaded);
    blas->device_ = std::move(device);
    CudaDevice& cuda = cudaDevice(*blas->device_);
    ScopedContext scope(cuda.driver().api(), cuda.context());
    BlasFunctions const& api = blas->library_->api();
    if (int s = api.cublasCreate_v2(&blas->handle_); s != 0)
        return blasError(*blas->library_, s, "cublasCreate_v2", *blas->device_);
    if (int s = api.cublasGetVersion_v2(blas->handle_, &blas->version_); s != 0)
        return blasError(*blas->library_, s, "cublasGetVersion_v2", *blas->device_);
    blas->mode_ = mode;
    int const math = mode == BlasMode::Reference ? blas::kExactReductions : blas::kDefaultMath;
    if (int s = api.cublasSetMathMode(blas->handle_, math); s != 0)
        return blasError(*blas->library_, s, "cublasSetMathMode", *blas->device_);
    return blas;
}

Blas::~Blas() {
    if (!handle_)
        return;
    CudaDevice& cuda = cudaDevice(*device_);
    ScopedContext scope(cuda.driver().api(), cuda.context());
    library_->api().cublasDestroy_v2(handle_);
}

Status Blas::gemm(Stream& stream, GemmShape const& shape, float alpha, DevicePointer<float const> a,
                  DevicePointer<float const> b, float beta, DevicePointer<float> d) {
    KILN_RETURN_IF_ERROR(stream.status());
    KILN_RETURN_IF_ERROR(checkShape(shape, "cublasSgemm_v2"));
    CudaDevice& cuda = cudaDevice(*device_);
    ScopedContext scope(cuda.driver().api(), cuda.context());
    BlasFunctions const& api = library_->api();
    if (int s = api.cublasSetStream_v2(handle_, stream.backend().native()); s != 0)
        return blasError(*library_, s, "cublasSetStream_v2", *device_);
    ColumnMajor const c = columnMajor(shape);
    auto const* pa = reinterpret_cast<float const*>(a.address());
    auto const* pb = reinterpret_cast<float const*>(b.address());
    auto* pd = reinterpret_cast<float*>(d.address());
    if (int s = api.cublasSgemm_v2(handle_, c.opB, c.opA, c.m, c.n, c.k, &alpha, pb, c.ldb, pa,
                                   c.lda, &beta, pd, c.ldd);
        s != 0)
        return blasError(*library_, s, "cublasSgemm_v2", *device_);
    return {};
}

Status Blas::gemmEx(Stream& stream, GemmShape const& shape, ScalarType inType, ScalarType dType,
                    float alpha, std::uint64_t a, std::uint64_t b, float beta, std::uint64_t d) {
    KILN_RETURN_IF_ERROR(stream.status());
    KILN_RETURN_IF_ERROR(checkShape(shape, "cublasGemmEx"));
    if (inType != ScalarType::F16 && inType != ScalarType::BF16) {
        return Error(ErrorCode::InvalidArgument,
                     "cublasGemmEx: the inputs must be f16 or bf16, not " +
                         std::string(name(inType)));
    }
    if (dataType(dType) < 0) {
        return Error(ErrorCode::InvalidArgument,
                     "cublasGemmEx: the result must be f32, f16 or bf16, not " +
                         std::string(name(dType)));
    }
    CudaDevice& cuda = cudaDevice(*device_);
    ScopedContext scope(cuda.driver().api(), cuda.context());
    BlasFunctions const& api = library_->api();
    if (int s = api.cublasSetStream_v2(handle_, stream.backend().native()); s != 0)
        return blasError(*library_, s, "cublasSetStream_v2", *device_);
    ColumnMajor const c = columnMajor(shape);
    int const in = dataType(inType);
    if (int s = api.cublasGemmEx(
            handle_, c.opB, c.opA, c.m, c.n, c.k, &alpha, reinterpret_cast<void const*>(b), in,
            c.ldb, reinterpret_cast<void const*>(a), in, c.lda, &beta, reinterpret_cast<void*>(d),
            dataType(dType), c.ldd, blas::kCompute32F, blas::kGemmDefault);
        s != 0)
        return blasError(*library_, s, "cublasGemmEx", *device_);
    return {};
}

#else // !KILN_HAVE_CUDA

Expected<std::shared_ptr<Blas>> Blas::create(std::shared_ptr<Device>, BlasMode,
                                             std::string const&) {
    return Error(ErrorCode::Unsupported, "cuBLAS needs the CUDA platform, which this build of "
                                         "Kiln lacks (cuda.h was not found)");
}
Blas::~Blas() = default;
Status Blas::gemm(Stream&, GemmShape const&, float, DevicePointer<float const>,
                  DevicePointer<float const>, float, DevicePointer<float>) {
    return Error(ErrorCode::Unsupported, "cuBLAS needs the CUDA platform");
}
Status Blas::gemmEx(Stream&, GemmShape const&, ScalarType, ScalarType, float, std::uint64_t,
                    std::uint64_t, float, std::uint64_t) {
    return Error(ErrorCode::Unsupported, "cuBLAS needs the CUDA platform");
}

#endif

} // namespace kiln::runtime::cuda
