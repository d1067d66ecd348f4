// Blas.h: cuBLAS, loaded at run time, as the reference and the baseline for GEMM.
//
// Like the driver, cuBLAS is never linked: BlasLibrary dlopens it ($KILN_CUBLAS_LIBRARY, else
// libcublas.so.13, .so.12, .so, then the same in /usr/local/cuda/lib64) and resolves its entry
// points with dlsym, so every binary starts where it is missing and says "cuBLAS not found".
// Blas is one cuBLAS handle on one CUDA device. Its GEMM takes Kiln's row-major tensors:
// D (m x n) = alpha * A x B + beta * D, which it hands to cuBLAS (column-major) as
// D^T = B^T x A^T. f32 inputs go to cublasSgemm_v2; f16 and bf16 inputs to cublasGemmEx with
// f32 accumulation (CUBLAS_COMPUTE_32F) and an f32, f16 or bf16 result.
// A handle made as a reference (BlasMode::Reference, the default) disallows reduced-precision
// reductions: with an f16 result cuBLAS may otherwise add split-K partial sums in f16, and at
// some shapes (M = 129, N = 4097, K = 520) that result is further from the exact product than a
// correct Kiln kernel is. A baseline for speed (BlasMode::Fastest) keeps cuBLAS's default.
#pragma once

#include "kiln/runtime/Device.h"
#include "kiln/runtime/DevicePointer.h"
#include "kiln/runtime/ScalarType.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Stream.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::runtime::cuda {

/// The environment variable that names the cuBLAS library to load instead of the default list.
inline constexpr char const* kCublasLibraryVariable = "KILN_CUBLAS_LIBRARY";

/// The shape of a row-major GEMM: D is m x n, the sum runs over k.
struct GemmShape {
    std::int64_t m = 0, n = 0, k = 0;
    bool transA = false; ///< A is stored k x m (else m x k)
    bool transB = false; ///< B is stored n x k (else k x n)

    /// Multiply-adds times two: the FLOP count by which GEMM speed is stated.
    double flops() const {
        return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    }
};

struct BlasFunctions; // the resolved entry points (Blas.cpp)

/// What a cuBLAS handle is for: judging results (no reduced-precision reductions) or speed.
enum class BlasMode { Reference, Fastest };

/// The cuBLAS library, opened and its entry points resolved; no device is touched.
class BlasLibrary {
public:
    /// The libraries tried, in order, when none is named: $KILN_CUBLAS_LIBRARY if set, else
    /// libcublas.so.13, .so.12, .so, then the same in /usr/local/cuda/lib64.
    static std::vector<std::string> candidates();
    /// Opens `library` (empty: the first of candidates() that loads) and resolves
    /// cublasCreate_v2, cublasDestroy_v2, cublasSetStream_v2, cublasSetMathMode, cublasSgemm_v2,
    /// cublasGemmEx and cublasGetVersion_v2. NotFound "cuBLAS not found: ..." with each library
    /// tried and why.
    static Expected<std::shared_ptr<BlasLibrary const>> load(std::string const& library = {});
    ~BlasLibrary();
    BlasLibrary(BlasLibrary const&) = delete;
    BlasLibrary& operator=(BlasLibrary const&) = delete;

    /// The library that was opened.
    std::string const& path() const { return path_; }
    /// The entry points.
    BlasFunctions const& api() const { return *api_; }
    /// "CUBLAS_STATUS_INVALID_VALUE" (from cublasGetStatusString where the library has it).
    std::string describe(int status) const;

private:
    BlasLibrary() = default;
    std::string path_;
    std::unique_ptr<BlasFunctions> api_;
};

/// A cuBLAS handle on one CUDA device.
class Blas {
public:
    /// Loads cuBLAS (see BlasLibrary::load) and creates a handle in `device`'s context, in
    /// `mode`. Unsupported for a device of another platform.
    static Expected<std::shared_ptr<Blas>> create(std::shared_ptr<Device> device,
                                                  BlasMode mode = BlasMode::Reference,
                                                  std::string const& library = {});
    ~Blas();
    Blas(Blas const&) = delete;
    Blas& operator=(Blas const&) = delete;

    /// D = alpha * A x B + beta * D in f32 (cublasSgemm_v2), queued on `stream`.
    Status gemm(Stream& stream, GemmShape const& shape, float alpha, DevicePointer<float const> a,
                DevicePointer<float const> b, float beta, DevicePointer<float> d);
    /// The same with f16 or bf16 inputs, f32 accumulation and a result of `dType` (F32, F16 or
    /// BF16) through cublasGemmEx. Addresses are raw: `inType` says what A and B hold.
    Status gemmEx(Stream& stream, GemmShape const& shape, ScalarType inType, ScalarType dType,
                  float alpha, std::uint64_t a, std::uint64_t b, float beta, std::uint64_t d);

    /// What the handle is for.
    BlasMode mode() const { return mode_; }
    /// cuBLAS's version, e.g. 130100 for 13.1.0.
    int version() const { return version_; }
    /// The library that was opened.
    std::string const& library() const { return library_->path(); }

private:
    Blas() = default;

    std::shared_ptr<BlasLibrary const> library_;
    std::shared_ptr<Device> device_;
    void* handle_ = nullptr;
    int version_ = 0;
    BlasMode mode_ = BlasMode::Reference;
};

} // namespace kiln::runtime::cuda
