// The HIP runtime's part of an exported C ABI (ExportCapiDriver.h): the launcher over the HIP
// runtime (the same text for every AMD kernel), and the kernel's arguments laid out as its code
// object's metadata lays out the kernarg segment, which is where the HIP platform
// (runtime/src/hip/HipKernel.h: packArguments) takes the layout from too.
//
// The runtime is loaded with dlopen at the first launch, as the CUDA variant loads the CUDA
// driver, rather than linked: the library then builds with any C compiler on a machine without
// ROCm, loads there, and says what is missing when called; an application that links HIP itself
// loses nothing, since dlopen of the libamdhip64 already in the process returns that one.
#include "ExportCapiDriver.h"
#include "kiln/graph/Error.h"
#include "kiln/runtime/CodeObject.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Platform.h"
#include "kiln/runtime/hip/HipRuntime.h"

#include <algorithm>
#include <fmt/format.h>
#include <utility>
#include <vector>

namespace kiln::cli {

namespace {

// What the launcher is for every AMD kernel: it reads the kernel's kiln_entry, kiln_target,
// kiln_block, kiln_shared_bytes, kiln_code and its kernarg layout (KILN_ARGUMENTS,
// KILN_KERNARG_BYTES, kiln_kernarg), which come before it. {names} is the list of libraries it
// tries, {variable} the environment variable that names one instead (hipLauncher fills them in).
constexpr char const* kLauncher =
    R"launcher(/* ---- The launcher: the same for every exported AMD kernel. ---- */

/* The part of the HIP runtime's ABI this launcher calls, with hip_runtime_api.h's values (the
 * same in ROCm 5, 6 and 7), so that no HIP header is needed to build it. */
typedef int hipError_t;
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
typedef void* hipDeviceptr_t;
#define hipSuccess 0
#define hipErrorInvalidValue 1
#define hipErrorInvalidDevice 101
#define hipErrorSharedObjectInitFailed 303
#define hipDeviceAttributeMultiprocessorCount 63
/* The keys of hipModuleLaunchKernel's `extra`: the packed arguments, and their size. */
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void*)0x02)
#define HIP_LAUNCH_PARAM_END ((void*)0x03)

struct kiln_runtime {
    hipError_t (*hipInit)(unsigned flags);
    const char* (*hipGetErrorName)(hipError_t error);
    const char* (*hipGetErrorString)(hipError_t error);
    hipError_t (*hipGetDevice)(int* device);
    hipError_t (*hipSetDevice)(int device);
    hipError_t (*hipDeviceGetAttribute)(int* value, int attribute, int device);
    hipError_t (*hipModuleLoadData)(hipModule_t* module, const void* image);
    hipError_t (*hipModuleGetFunction)(hipFunction_t* function, hipModule_t module,
                                       const char* name);
    hipError_t (*hipModuleLaunchKernel)(hipFunction_t function, unsigned gridX, unsigned gridY,
                                        unsigned gridZ, unsigned blockX, unsigned blockY,
                                        unsigned blockZ, unsigned sharedBytes, hipStream_t stream,
                                        void** kernelParams, void** extra);
    /* Optional: without it, a launch on a stream runs on the current device. */
    hipError_t (*hipStreamGetDevice)(hipStream_t stream, int* device);
};

static const struct {
    const char* symbol;
    size_t offset;
    int optional;
} kiln_entry_points[] = {
    {"hipInit", offsetof(struct kiln_runtime, hipInit), 0},
    {"hipGetErrorName", offsetof(struct kiln_runtime, hipGetErrorName), 0},
    {"hipGetErrorString", offsetof(struct kiln_runtime, hipGetErrorString), 0},
    {"hipGetDevice", offsetof(struct kiln_runtime, hipGetDevice), 0},
    {"hipSetDevice", offsetof(struct kiln_runtime, hipSetDevice), 0},
    {"hipDeviceGetAttribute", offsetof(struct kiln_runtime, hipDeviceGetAttribute), 0},
    {"hipModuleLoadData", offsetof(struct kiln_runtime, hipModuleLoadData), 0},
    {"hipModuleGetFunction", offsetof(struct kiln_runtime, hipModuleGetFunction), 0},
    {"hipModuleLaunchKernel", offsetof(struct kiln_runtime, hipModuleLaunchKernel), 0},
    {"hipStreamGetDevice", offsetof(struct kiln_runtime, hipStreamGetDevice), 1},
};

static struct kiln_runtime kiln_hip;

/* Where ROCm puts the runtime, tried in this order where ${variable} names none (Kiln's HIP
 * platform tries the same); $ROCM_PATH/lib/libamdhip64.so, where ROCM_PATH is set, comes
 * before the last. */
static const char* const kiln_runtime_names[] = {{names}
};

/* Guards the runtime's loading and the loaded kernels. */
static pthread_mutex_t kiln_lock = PTHREAD_MUTEX_INITIALIZER;
/* 0: not tried yet, 1: loaded, -1: failed as kiln_runtime_error says. */
static int kiln_runtime_state;
static hipError_t kiln_runtime_code;
static char kiln_runtime_error[768];

/* The kernel on each device it was launched on: a module is loaded once per device, and kept. */
#define KILN_DEVICES 64
static struct {
    hipModule_t module;
    hipFunction_t function;
} kiln_loaded[KILN_DEVICES];

/* Why this thread's last launch failed; empty after one that succeeded. */
static _Thread_local char kiln_message[1024];

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static hipError_t
kiln_fail(hipError_t code, const char* format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(kiln_message, sizeof kiln_message, format, arguments);
    va_end(arguments);
    return code;
}

/* A runtime call's failure: the call, the runtime's name and words for the code, the kernel. */
static hipError_t kiln_runtime_fail(hipError_t code, const char* call, const char* detail) {
    const char* name = kiln_hip.hipGetErrorName(code);
    const char* words = kiln_hip.hipGetErrorString(code);
    return kiln_fail(code, "%s failed for %s (%s): %s (%d: %s)%s", call, kiln_entry, kiln_target,
                     name ? name : "an unknown hipError_t", code, words ? words : "no description",
                     detail);
}

/* Opens the runtime: the library ${variable} names, else the first of kiln_runtime_names that
 * loads. NULL, with kiln_runtime_error saying why, when none does. */
static void* kiln_open_runtime(const char** path) {
    const size_t names = sizeof kiln_runtime_names / sizeof kiln_runtime_names[0];
    const char* variable = getenv("{variable}");
    const char* rocm = getenv("ROCM_PATH");
    const char* candidates[sizeof kiln_runtime_names / sizeof kiln_runtime_names[0] + 1];
    char in_rocm[512];
    char why[256] = "unknown error";
    char others[512] = "";
    size_t count = 0, used = 0, i;
    if (variable && *variable) {
        candidates[count++] = variable;
    } else {
        for (i = 0; i + 1 < names; ++i)
            candidates[count++] = kiln_runtime_names[i];
        if (rocm && *rocm &&
            snprintf(in_rocm, sizeof in_rocm, "%s/lib/libamdhip64.so", rocm) < (int)sizeof in_rocm)
            candidates[count++] = in_rocm;
        candidates[count++] = kiln_runtime_names[names - 1];
    }
    for (i = 0; i < count; ++i) {
        void* library = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        const char* reason;
        if (library) {
            *path = candidates[i];
            return library;
        }
        reason = dlerror();
        if (i == 0)
            snprintf(why, sizeof why, "%s", reason ? reason : "unknown error");
        else if (used < sizeof others)
            used += (size_t)snprintf(others + used, sizeof others - used, "%s%s",
                                     i == 1 ? "" : ", ", candidates[i]);
    }
    if (count == 1)
        snprintf(kiln_runtime_error, sizeof kiln_runtime_error,
                 "no HIP runtime: cannot load '%s': %s (install ROCm's HIP runtime, or set "
                 "{variable} to the path of libamdhip64.so)",
                 candidates[0], why);
    else
        snprintf(kiln_runtime_error, sizeof kiln_runtime_error,
                 "no HIP runtime: cannot load %s (nor %s): %s (install ROCm's HIP runtime, or set "
                 "{variable} to the path of libamdhip64.so)",
                 candidates[0], others, why);
    return NULL;
}

/* Loads the runtime once (kiln_lock held); a failure is kept and given again at each call. */
static hipError_t kiln_load_runtime(void) {
    if (kiln_runtime_state == 0) {
        const char* path = NULL;
        void* library;
        size_t i;
        hipError_t code;
        kiln_runtime_state = -1;
        kiln_runtime_code = hipErrorSharedObjectInitFailed;
        library = kiln_open_runtime(&path);
        if (!library)
            return kiln_fail(kiln_runtime_code, "%s", kiln_runtime_error);
        for (i = 0; i < sizeof kiln_entry_points / sizeof kiln_entry_points[0]; ++i) {
            void* address = dlsym(library, kiln_entry_points[i].symbol);
            if (!address && !kiln_entry_points[i].optional) {
                snprintf(kiln_runtime_error, sizeof kiln_runtime_error,
                         "no usable HIP runtime: '%s' lacks %s (it is not libamdhip64)", path,
                         kiln_entry_points[i].symbol);
                dlclose(library);
                return kiln_fail(kiln_runtime_code, "%s", kiln_runtime_error);
            }
            memcpy((char*)&kiln_hip + kiln_entry_points[i].offset, &address, sizeof address);
        }
        code = kiln_hip.hipInit(0);
        if (code != hipSuccess) {
            kiln_runtime_code = code;
            kiln_runtime_fail(code, "hipInit", "");
            snprintf(kiln_runtime_error, sizeof kiln_runtime_error, "%.*s",
                     (int)sizeof kiln_runtime_error - 1, kiln_message);
            return code;
        }
        kiln_runtime_state = 1;
    }
    if (kiln_runtime_state < 0)
        return kiln_fail(kiln_runtime_code, "%s", kiln_runtime_error);
    return hipSuccess;
}

/* The kernel on `device`, the current one (kiln_lock held): loaded there at its first use. */
static hipError_t kiln_function(int device, hipFunction_t* function) {
    hipModule_t module;
    hipError_t code;
    char detail[64];
    if (device < 0 || device >= KILN_DEVICES)
        return kiln_fail(hipErrorInvalidDevice,
                         "%s is launched on device %d; this launcher keeps its kernel on devices 0 "
                         "to %d",
                         kiln_entry, device, KILN_DEVICES - 1);
    if (kiln_loaded[device].function) {
        *function = kiln_loaded[device].function;
        return hipSuccess;
    }
    snprintf(detail, sizeof detail, " on device %d", device);
    if ((code = kiln_hip.hipModuleLoadData(&module, kiln_code)) != hipSuccess)
        return kiln_runtime_fail(code, "hipModuleLoadData", detail);
    if ((code = kiln_hip.hipModuleGetFunction(function, module, kiln_entry)) != hipSuccess)
        return kiln_runtime_fail(code, "hipModuleGetFunction", detail);
    kiln_loaded[device].module = module;
    kiln_loaded[device].function = *function;
    return hipSuccess;
}

/* The device a launch on `stream` runs on: the stream's; for NULL, hipStreamLegacy (1) and
 * hipStreamPerThread (2), and where the runtime cannot say (no hipStreamGetDevice), the current
 * one. */
static hipError_t kiln_device(void* stream, int current, int* device) {
    hipError_t code;
    *device = current;
    if ((uintptr_t)stream > 2 && kiln_hip.hipStreamGetDevice &&
        (code = kiln_hip.hipStreamGetDevice((hipStream_t)stream, device)) != hipSuccess)
        return kiln_runtime_fail(code, "hipStreamGetDevice", " (is the stream a hipStream_t?)");
    return hipSuccess;
}

/* A persistent kernel's grid (its workgroups loop over the tiles `grid` counts): as many
 * workgroups along x as `device` holds at once, `per_multiprocessor` on each compute unit, and
 * no more than the tiles. */
static hipError_t kiln_persistent_grid(int device, unsigned per_multiprocessor, int64_t grid[3]) {
    int multiprocessors = 0;
    hipError_t code;
    int64_t const tiles = grid[0] * grid[1] * grid[2];
    if ((code = kiln_hip.hipDeviceGetAttribute(&multiprocessors,
                                               hipDeviceAttributeMultiprocessorCount, device)) !=
        hipSuccess)
        return kiln_runtime_fail(code, "hipDeviceGetAttribute(MultiprocessorCount)", "");
    grid[0] = (int64_t)multiprocessors * per_multiprocessor;
    if (grid[0] > tiles || grid[0] <= 0)
        grid[0] = tiles;
    grid[1] = grid[2] = 1;
    return hipSuccess;
}

/* Enqueues the kernel on `stream` with the kernel's arguments and `tiles` workgroups, or, for a
 * persistent kernel (`persistent` workgroups per compute unit, 0 for none), the persistent grid
 * of them. The arguments go packed as the kernarg segment holds them (HIP's `extra` form), which
 * HIP copies at the call. */
static hipError_t kiln_launch(void* stream, const int64_t tiles[3], unsigned persistent,
                              void** arguments) {
    _Alignas(16) unsigned char packed[KILN_KERNARG_BYTES];
    size_t packed_bytes = sizeof packed;
    void* extra[5];
    hipFunction_t function = NULL;
    hipError_t code;
    int current = 0;
    int device = 0;
    int switched = 0;
    char detail[160];
    int axis;
    size_t i;
    int64_t grid[3];
    for (axis = 0; axis < 3; ++axis)
        grid[axis] = tiles[axis];
    for (axis = 0; axis < 3; ++axis)
        if (grid[axis] > 0xffffffffLL || grid[axis] < 0)
            return kiln_fail(hipErrorInvalidValue,
                             "%s: the grid of %lld x %lld x %lld workgroups is not a HIP grid",
                             kiln_entry, (long long)grid[0], (long long)grid[1],
                             (long long)grid[2]);
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
        return hipSuccess; /* no workgroup: nothing to compute */
    memset(packed, 0, sizeof packed);
    for (i = 0; i < KILN_ARGUMENTS; ++i)
        memcpy(packed + kiln_kernarg[i].offset, arguments[i], kiln_kernarg[i].bytes);
    extra[0] = HIP_LAUNCH_PARAM_BUFFER_POINTER;
    extra[1] = packed;
    extra[2] = HIP_LAUNCH_PARAM_BUFFER_SIZE;
    extra[3] = &packed_bytes;
    extra[4] = HIP_LAUNCH_PARAM_END;
    pthread_mutex_lock(&kiln_lock);
    code = kiln_load_runtime();
    if (code == hipSuccess && (code = kiln_hip.hipGetDevice(&current)) != hipSuccess)
        kiln_runtime_fail(code, "hipGetDevice", "");
    if (code == hipSuccess)
        code = kiln_device(stream, current, &device);
    if (code == hipSuccess && device != current) {
        if ((code = kiln_hip.hipSetDevice(device)) != hipSuccess)
            kiln_runtime_fail(code, "hipSetDevice", "");
        switched = code == hipSuccess;
    }
    if (code == hipSuccess)
        code = kiln_function(device, &function);
    pthread_mutex_unlock(&kiln_lock);
    if (code == hipSuccess && persistent > 0)
        code = kiln_persistent_grid(device, persistent, grid);
    /* HIP counts a grid in workitems: 2^32 - 1 at most along each axis. */
    for (axis = 0; code == hipSuccess && axis < 3; ++axis)
        if (grid[axis] * kiln_block[axis] > 0xffffffffLL)
            code = kiln_fail(hipErrorInvalidValue,
                             "%s: a grid of %lld x %lld x %lld workgroups of %u x %u x %u "
                             "workitems has more than 2^32 - 1 workitems along %c, the most HIP "
                             "launches",
                             kiln_entry, (long long)grid[0], (long long)grid[1],
                             (long long)grid[2], kiln_block[0], kiln_block[1], kiln_block[2],
                             "xyz"[axis]);
    if (code == hipSuccess &&
        (code = kiln_hip.hipModuleLaunchKernel(function, (unsigned)grid[0], (unsigned)grid[1],
                                               (unsigned)grid[2], kiln_block[0], kiln_block[1],
                                               kiln_block[2], kiln_shared_bytes,
                                               (hipStream_t)stream, NULL, extra)) != hipSuccess) {
        snprintf(detail, sizeof detail,
                 ", a grid of %lld x %lld x %lld workgroups of %u x %u x %u workitems and %u "
                 "bytes of LDS",
                 (long long)grid[0], (long long)grid[1], (long long)grid[2], kiln_block[0],
                 kiln_block[1], kiln_block[2], kiln_shared_bytes);
        kiln_runtime_fail(code, "hipModuleLaunchKernel", detail);
    }
    if (switched)
        kiln_hip.hipSetDevice(current);
    return code;
}

/* ---- The kernel's launch function. ---- */
)launcher";

// The launcher with the runtime's names and its environment variable: Kiln's HIP platform's.
std::string hipLauncher() {
    std::string names;
    for (char const* name : runtime::hip::kHipRuntimeNames)
        names += fmt::format("\n    \"{}\",", name);
    names += fmt::format("\n    \"{}\",", runtime::hip::kHipRuntimeInRocmTree);
    std::string launcher = kLauncher;
    for (auto const& [placeholder, value] :
         {std::pair<std::string, std::string>{"{names}", names},
          std::pair<std::string, std::string>{"{variable}", runtime::kHipRuntimeVariable}})
        for (std::size_t at = launcher.find(placeholder); at != std::string::npos;
             at = launcher.find(placeholder, at + value.size()))
            launcher.replace(at, placeholder.size(), value);
    return launcher;
}

// The kernel's explicit arguments as its code object's metadata lays them out, after checking
// that they are the manifest's parameters (the check the HIP platform makes at load).
std::vector<runtime::CodeObjectArgument> kernargLayout(lowering::EmittedKernel const& kernel,
                                                       std::string const& codeObject) {
    auto internal = [&](std::string const& why) {
        return InternalError(
            fmt::format("the C ABI of {} for {}: {}", kernel.entry, kernel.target, why), __FILE__,
            __LINE__);
    };
    auto const info = runtime::readCodeObject(codeObject, "the code object of " + kernel.entry);
    if (!info.ok())
        throw internal(info.error().message());
    runtime::CodeObjectKernel const* metadata = info->kernel(kernel.entry);
    if (!metadata)
        throw internal("its code object defines " + info->kernelNames() + ", not " + kernel.entry);
    auto const manifest =
        runtime::KernelManifest::fromJson(kernel.manifestJson(), "the manifest of " + kernel.entry);
    if (!manifest.ok())
        throw internal(manifest.error().message());
    if (auto const agreed = runtime::checkManifestAgainstCodeObject(*manifest, *metadata);
        !agreed.ok())
        throw internal(agreed.error().message());
    return metadata->explicitArguments();
}

// KILN_ARGUMENTS, KILN_KERNARG_BYTES and kiln_kernarg: where the launcher packs each argument.
std::string kernargFacts(std::vector<runtime::CodeObjectArgument> const& layout,
                         lowering::EmittedKernel const& kernel) {
    std::size_t bytes = 0;
    std::string entries;
    for (std::size_t i = 0; i < layout.size(); ++i) {
        bytes = std::max(bytes, layout[i].offset + layout[i].size);
        entries += fmt::format("    {{{}u, {}u}}, /* {} */\n", layout[i].offset, layout[i].size,
                               kernel.parameters[i].name);
    }
    return fmt::format(R"(
/* Where the kernel reads its arguments, as its code object's metadata lays out its kernarg
 * segment: the offset and bytes of each, in the manifest's order, and the bytes up to the end of
 * the last (HIP adds the hidden arguments after them). */
#define KILN_ARGUMENTS {}
#define KILN_KERNARG_BYTES {}
static const struct {{
    unsigned offset, bytes;
}} kiln_kernarg[KILN_ARGUMENTS] = {{
{}}};
)",
                       layout.size(), bytes, entries);
}

} // namespace

CapiDriver hipCapiDriver(lowering::EmittedKernel const& kernel, CapiOptions const& options) {
    for (auto const& p : kernel.parameters)
        if (p.tensorMap)
            fail("the kernel parameter '{}' is a tensor map, which the CUDA driver makes; {} is "
                 "an AMD target",
                 p.name, kernel.target);
    if (!options.codeObject)
        fail("the C ABI of an AMD kernel embeds its code object; {} for {} has none", kernel.entry,
             kernel.target);
    std::vector<runtime::CodeObjectArgument> const layout =
        kernargLayout(kernel, *options.codeObject);

    return {
        .needs = fmt::format(" * It needs neither Kiln nor ROCm: the HIP runtime (libamdhip64.so, "
                             "or the library\n * ${} names) is loaded by the first launch.\n",
                             runtime::kHipRuntimeVariable),
        .where = "on `stream`, a hipStream_t, on the stream's device (for NULL,\n * "
                 "hipStreamLegacy and hipStreamPerThread: the current one),\n *",
        .failures = fmt::format(
            "a hipError_t, and {}_error() says why: hipErrorInvalidValue (1)\n * for a negative "
            "size or a grid HIP cannot launch, hipErrorSharedObjectInitFailed (303)\n * when the "
            "HIP runtime cannot be loaded, or the runtime's code.\n *",
            options.name),
        .loaded = "the kernel is loaded once onto each device it runs on, and stays.",
        .argumentsNote = "",
        .through = "the HIP runtime",
        .invalidValue = "hipErrorInvalidValue",
        .devicePointer = "hipDeviceptr_t",
        .code = *options.codeObject,
        .codeNote = fmt::format("The code object assembled for {} ({} bytes; its assembly is "
                                "beside this file)",
                                kernel.target, options.codeObject->size()),
        .kernelFacts = kernargFacts(layout, kernel),
        .launcher = hipLauncher(),
        .helpers = "",
        .declarations = "",
        .preparations = "",
    };
}

} // namespace kiln::cli
