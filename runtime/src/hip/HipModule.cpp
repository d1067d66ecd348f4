// HipModule.cpp: loading AMD code objects with hipModuleLoadData, checked first against their
// metadata note, and their kernels.
#include "HipKernel.h"
#include "HipObjects.h"

#include <cstring>

namespace kiln::runtime::hip {
namespace {

/// hipModuleLoadData's answers for code the device cannot run (JitFailed, as on CUDA).
bool isLoadFailure(HipError result) {
    return result == kHipErrorInvalidImage || result == kHipErrorNoBinaryForGpu ||
           result == kHipErrorInvalidKernelFile || result == kHipErrorSharedObjectSymbolNotFound ||
           result == kHipErrorSharedObjectInitFailed;
}

class HipModule final : public ModuleBackend {
public:
    HipModule(HipContext context, ModuleHandle module, std::string origin, CodeObjectInfo info)
        : context_(std::move(context))
        , module_(module)
        , origin_(std::move(origin))
        , info_(std::move(info)) {}
    ~HipModule() override {
        ScopedDevice scope(context_.runtime->api(), context_.ordinal);
        (void)context_.runtime->api().hipModuleUnload(module_);
    }

    Expected<std::unique_ptr<KernelBackend>> kernel(std::string const& name) override {
        CodeObjectKernel const* metadata = info_.kernel(name);
        if (!metadata)
            return notFound(name);
        HipFunctions const& api = context_.runtime->api();
        ScopedDevice scope(api, context_.ordinal);
        FunctionHandle function = nullptr;
        HipError const result = api.hipModuleGetFunction(&function, module_, name.c_str());
        if (result == kHipErrorNotFound)
            return notFound(name);
        KILN_RETURN_IF_ERROR(context_.runtime->check(result, "hipModuleGetFunction",
                                                     "kernel '" + name + "' in " + origin_));
        return std::unique_ptr<KernelBackend>(
            std::make_unique<HipKernel>(context_, function, *metadata));
    }
    /// HIP loads code objects as they are: there is no JIT and no log.
    std::string const& jitLog() const override { return log_; }

private:
    Error notFound(std::string const& name) const {
        return Error(ErrorCode::NotFound, "kernel '" + name + "' is not in " + origin_ +
                                              "; its kernels are: " + info_.kernelNames());
    }

    HipContext context_;
    ModuleHandle module_;
    std::string origin_;
    CodeObjectInfo info_;
    std::string log_;
};

} // namespace

Expected<KernelAttributes> HipKernel::attributes() const {
    ScopedDevice scope(api(), context_.ordinal);
    Status failure;
    auto get = [&](HipFunctionAttribute attribute, char const* what) {
        int value = 0;
        if (failure.ok()) {
            failure = context_.runtime->check(
                api().hipFuncGetAttribute(&value, attribute, function_), "hipFuncGetAttribute",
                std::string(what) + " of kernel '" + name() + "' on " + context_.device);
        }
        return value;
    };
    auto size = [](int value) { return static_cast<std::size_t>(value); };
    KernelAttributes attributes;
    attributes.maxThreadsPerBlock =
        get(HipFunctionAttribute::MaxThreadsPerBlock, "max threads per block");
    attributes.registers = get(HipFunctionAttribute::NumRegs, "registers");
    attributes.staticSharedBytes = size(get(HipFunctionAttribute::SharedSizeBytes, "static LDS"));
    attributes.localBytes = size(get(HipFunctionAttribute::LocalSizeBytes, "scratch"));
    attributes.maxDynamicSharedBytes =
        size(get(HipFunctionAttribute::MaxDynamicSharedSizeBytes, "max dynamic LDS"));
    if (!failure.ok())
        return failure.error();
    return attributes;
}

Status HipKernel::setMaxDynamicSharedBytes(std::size_t bytes) {
    int available = 0;
    {
        ScopedDevice scope(api(), context_.ordinal);
        KILN_RETURN_IF_ERROR(context_.runtime->check(
            api().hipFuncGetAttribute(&available, HipFunctionAttribute::MaxDynamicSharedSizeBytes,
                                      function_),
            "hipFuncGetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            "kernel '" + name() + "' on " + context_.device));
    }
    if (bytes <= static_cast<std::size_t>(available))
        return {};
    return Error(ErrorCode::LaunchOutOfLimits,
                 "kernel '" + name() + "' on " + context_.device + ": " + std::to_string(bytes) +
                     " bytes of dynamic LDS, but the device leaves the kernel " +
                     std::to_string(available) + " (AMD GPUs have no larger opt-in)");
}

Expected<std::optional<std::vector<ParameterLayout>>> HipKernel::parameterLayout() const {
    return std::optional<std::vector<ParameterLayout>>(metadata_.parameterLayout());
}

std::vector<unsigned char> HipKernel::packArguments(void** arguments) const {
    std::vector<unsigned char> buffer(metadata_.explicitArgumentBytes(), 0);
    std::size_t index = 0;
    for (CodeObjectArgument const& argument : metadata_.arguments) {
        if (argument.hidden())
            continue;
        std::memcpy(buffer.data() + argument.offset, arguments[index++], argument.size);
    }
    return buffer;
}

Expected<std::unique_ptr<ModuleBackend>> loadHipModule(HipContext const& context,
                                                       KernelLoaderSpec const& spec) {
    std::string const origin = spec.describe();
    std::string const kernel = "kernel '" + spec.kernelName() + "' (" + origin + ")";
    if (spec.format() != CodeFormat::CodeObject) {
        return Error(ErrorCode::Unsupported,
                     kernel + " is NVIDIA code, which the HIP platform cannot load on " +
                         context.device +
                         " (load an AMD code object: KernelLoaderSpec::codeObjectInMemory or "
                         "codeObjectOnDisk)");
    }
    KILN_ASSIGN_OR_RETURN(std::string image, spec.image());
    if (image.empty())
        return Error(ErrorCode::InvalidArgument, "the code of " + kernel + " is empty");

    // What the metadata note says is checked before HIP sees the code: its errors name the
    // processor and the parameter, where hipModuleLoadData would only fail.
    KILN_ASSIGN_OR_RETURN(CodeObjectInfo info, readCodeObject(image, "the code of " + kernel));
    if (!info.processor.empty() && info.processor != context.target) {
        return Error(ErrorCode::JitFailed, kernel + " is code for " + info.processor +
                                               ", which does not run on " + context.device +
                                               " (assemble it for " + context.target + ")");
    }
    if (spec.manifest()) {
        KernelManifest const& manifest = *spec.manifest();
        CodeObjectKernel const* metadata = info.kernel(manifest.entry);
        if (!metadata) {
            return Error(ErrorCode::NotFound,
                         "the manifest describes kernel '" + manifest.entry + "' but " + origin +
                             " does not define it; its kernels are: " + info.kernelNames());
        }
        KILN_RETURN_IF_ERROR(checkManifestAgainstCodeObject(manifest, *metadata));
    }

    HipFunctions const& api = context.runtime->api();
    ScopedDevice scope(api, context.ordinal);
    ModuleHandle module = nullptr;
    HipError const result = api.hipModuleLoadData(&module, image.data());
    if (result != kHipSuccess) {
        return Error(isLoadFailure(result) ? ErrorCode::JitFailed : ErrorCode::DriverError,
                     "hipModuleLoadData failed: " + context.runtime->describe(result) + ": " +
                         kernel + ", code for " +
                         (info.targetId.empty() ? info.processor : info.targetId) + ", on " +
                         context.device + " (" + context.gcnArchName + ")");
    }
    return std::unique_ptr<ModuleBackend>(
        std::make_unique<HipModule>(context, module, origin, std::move(info)));
}

} // namespace kiln::runtime::hip
