// CudaModule.cpp: loading code with cuModuleLoadDataEx (the PTX JIT), and its kernels.
#include "CudaObjects.h"

#include <cstring>
#include <optional>
#include <vector>

namespace kiln::runtime::cuda {
namespace {

/// The JIT error log starts at 64 KB and grows until the whole log fits (up to 256 MB).
constexpr std::size_t kFirstLogBytes = std::size_t{1} << 16;
constexpr std::size_t kLastLogBytes = std::size_t{1} << 28;
/// The information log (warnings, register use) is kept up to 1 MB.
constexpr std::size_t kInfoLogBytes = std::size_t{1} << 20;

class CudaKernel final : public KernelBackend {
public:
    CudaKernel(CudaContext context, CUfunction function, std::string name)
        : context_(std::move(context))
        , function_(function)
        , name_(std::move(name)) {}

    std::string const& name() const override { return name_; }

    Expected<KernelAttributes> attributes() const override {
        ScopedContext scope(api(), context_.context);
        Status failure;
        auto get = [&](CUfunction_attribute attribute, char const* what) {
            int value = 0;
            if (failure.ok()) {
                failure = context_.driver->check(
                    api().cuFuncGetAttribute(&value, attribute, function_), "cuFuncGetAttribute",
                    std::string(what) + " of kernel '" + name_ + "' on " + context_.device);
            }
            return value;
        };
        auto size = [](int value) { return static_cast<std::size_t>(value); };
        KernelAttributes attributes;
        attributes.maxThreadsPerBlock =
            get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block");
        attributes.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS, "registers");
        attributes.staticSharedBytes =
            size(get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory"));
        attributes.localBytes = size(get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local memory"));
        attributes.maxDynamicSharedBytes =
            size(get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max dynamic shared memory"));
        attributes.ptxVersion = get(CU_FUNC_ATTRIBUTE_PTX_VERSION, "PTX version");
        attributes.binaryVersion = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION, "binary version");
        if (!failure.ok())
            return failure.error();
        return attributes;
    }

    Status setMaxDynamicSharedBytes(std::size_t bytes) override {
        ScopedContext scope(api(), context_.context);
        return context_.driver->check(
            api().cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(bytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            std::to_string(bytes) + " bytes for kernel '" + name_ + "' on " + context_.device);
    }

    Expected<std::optional<std::vector<ParameterLayout>>> parameterLayout() const override {
        if (!api().cuFuncGetParamInfo)
            return std::optional<std::vector<ParameterLayout>>();
        ScopedContext scope(api(), context_.context);
        std::vector<ParameterLayout> layout;
        // The driver answers INVALID_VALUE past the last parameter.
        for (std::size_t index = 0; index < 4096; ++index) {
            std::size_t offset = 0;
            std::size_t size = 0;
            CUresult const result = api().cuFuncGetParamInfo(function_, index, &offset, &size);
            if (result == CUDA_SUCCESS) {
                layout.push_back({offset, size});
                continue;
            }
            if (result == CUDA_ERROR_INVALID_VALUE)
                break;
            if (index == 0)
                return std::optional<std::vector<ParameterLayout>>(); // cannot tell
            return context_.driver
                ->check(result, "cuFuncGetParamInfo",
                        "parameter " + std::to_string(index) + " of kernel '" + name_ + "' on " +
                            context_.device)
                .error();
        }
        return std::optional<std::vector<ParameterLayout>>(std::move(layout));
    }

    void* native() const override { return function_; }

private:
    CudaFunctions const& api() const { return context_.driver->api(); }
    CudaContext context_;
    CUfunction function_;
    std::string name_;
};

class CudaModule final : public ModuleBackend {
public:
    CudaModule(CudaContext context, CUmodule module, std::string origin,
               std::vector<std::string> entries, std::string infoLog)
        : context_(std::move(context))
        , module_(module)
        , origin_(std::move(origin))
        , entries_(std::move(entries))
        , infoLog_(std::move(infoLog)) {}
    ~CudaModule() override {
        ScopedContext scope(context_.driver->api(), context_.context);
        context_.driver->api().cuModuleUnload(module_);
    }

    Expected<std::unique_ptr<KernelBackend>> kernel(std::string const& name) override {
        CudaFunctions const& api = context_.driver->api();
        ScopedContext scope(api, context_.context);
        CUfunction function = nullptr;
        CUresult const result = api.cuModuleGetFunction(&function, module_, name.c_str());
        if (result == CUDA_ERROR_NOT_FOUND) {
            std::string known;
            for (std::string const& entry : entries_)
                known += (known.empty() ? "" : ", ") + entry;
            return Error(ErrorCode::NotFound,
                         "kernel '" + name + "' is not in " + origin_ +
                             (entries_.empty() ? std::string(" (loaded on ") + context_.device + ")"
                                               : "; its entries are: " + known));
        }
        KILN_RETURN_IF_ERROR(context_.driver->check(result, "cuModuleGetFunction",
                                                    "kernel '" + name + "' in " + origin_));
        return std::unique_ptr<KernelBackend>(
            std::make_unique<CudaKernel>(context_, function, name));
    }
    std::string const& jitLog() const override { return infoLog_; }

private:
    CudaContext context_;
    CUmodule module_;
    std::string origin_;
    std::vector<std::string> entries_;
    std::string infoLog_;
};

bool isJitFailure(CUresult result) {
    return result == CUDA_ERROR_INVALID_PTX || result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
           result == CUDA_ERROR_NO_BINARY_FOR_GPU || result == CUDA_ERROR_INVALID_IMAGE ||
           result == CUDA_ERROR_JIT_COMPILER_NOT_FOUND ||
           result == CUDA_ERROR_JIT_COMPILATION_DISABLED ||
           result == CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
}

} // namespace

Expected<std::unique_ptr<ModuleBackend>> loadCudaModule(CudaContext const& context,
                                                        KernelLoaderSpec const& spec) {
    std::string const origin = spec.describe();
    if (spec.format() == CodeFormat::CodeObject) {
        return Error(ErrorCode::Unsupported,
                     "kernel '" + spec.kernelName() + "' (" + origin +
                         ") is AMD code, which the CUDA platform cannot load on " + context.device +
                         " (load it on the \"hip\" platform)");
    }
    KILN_ASSIGN_OR_RETURN(std::string image, spec.image());
    if (image.empty()) {
        return Error(ErrorCode::InvalidArgument,
                     "the code of kernel '" + spec.kernelName() + "' (" + origin + ") is empty");
    }
    std::string target;
    std::vector<std::string> entries;
    if (spec.format() == CodeFormat::Ptx) {
        target = ptxTarget(image);
        entries = ptxEntries(image);
    } else if (spec.manifest()) {
        target = spec.manifest()->target;
    }

    CudaFunctions const& api = context.driver->api();
    ScopedContext scope(api, context.context);
    for (std::size_t errorBytes = kFirstLogBytes;; errorBytes *= 4) {
        std::vector<char> errorLog(errorBytes, '\0');
        std::vector<char> infoLog(kInfoLogBytes, '\0');
        CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                  CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                                  CU_JIT_LOG_VERBOSE};
        void* values[] = {errorLog.data(), reinterpret_cast<void*>(errorBytes), infoLog.data(),
                          reinterpret_cast<void*>(kInfoLogBytes), reinterpret_cast<void*>(1)};
        CUmodule module = nullptr;
        CUresult const result = api.cuModuleLoadDataEx(
            &module, image.c_str(), static_cast<unsigned>(std::size(options)), options, values);
        std::size_t const errorLength = strnlen(errorLog.data(), errorBytes);
        if (result == CUDA_SUCCESS) {
            std::string info(infoLog.data(), strnlen(infoLog.data(), kInfoLogBytes));
            return std::unique_ptr<ModuleBackend>(std::make_unique<CudaModule>(
                context, module, origin, std::move(entries), std::move(info)));
        }
        // A log that fills its buffer may have been cut: compile again with a larger one, so the
        // error always carries the whole log.
        if (errorLength + 1 >= errorBytes && errorBytes < kLastLogBytes)
            continue;

        std::string message = "cuModuleLoadDataEx failed: " + context.driver->describe(result) +
                              ": kernel '" + spec.kernelName() + "' (" + origin +
                              (target.empty() ? "" : ", target " + target) + ") on " +
                              context.device;
        if (errorLength > 0) {
            message += "; JIT error log (" + std::to_string(errorLength) + " bytes):\n";
            message.append(errorLog.data(), errorLength);
        } else {
            message += "; the JIT wrote no error log";
        }
        return Error(isJitFailure(result) ? ErrorCode::JitFailed : ErrorCode::DriverError,
                     std::move(message));
    }
}

} // namespace kiln::runtime::cuda
