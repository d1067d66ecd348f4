// The CUDA driver's part of an exported C ABI (ExportCapiDriver.h): the launcher over the CUDA
// driver (the same text for every NVIDIA kernel), and a TMA kernel's tensor maps.
#include "ExportCapiDriver.h"
#include "ExportInterface.h"
#include "kiln/graph/Error.h"

#include <array>
#include <fmt/format.h>
#include <vector>

namespace kiln::cli {

namespace {

// What the launcher is for every kernel: it reads the kernel's kiln_entry, kiln_target,
// kiln_block, kiln_shared_bytes and kiln_code, which come before it.
constexpr char const* kLauncher =
    R"launcher(/* ---- The launcher: the same for every exported kernel. ---- */

/* The part of the CUDA driver's ABI this launcher calls, with cuda.h's values, so that no CUDA
 * header is needed to build it. */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef unsigned long long CUdeviceptr;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_SHARED_OBJECT_INIT_FAILED 303
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16

struct kiln_driver {
    CUresult (*cuInit)(unsigned flags);
    CUresult (*cuGetErrorName)(CUresult error, const char** name);
    CUresult (*cuGetErrorString)(CUresult error, const char** words);
    CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
    CUresult (*cuCtxGetCurrent)(CUcontext* context);
    CUresult (*cuCtxPushCurrent)(CUcontext context);
    CUresult (*cuCtxPopCurrent)(CUcontext* context);
    CUresult (*cuStreamGetCtx)(CUstream stream, CUcontext* context);
    CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
    CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
    CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
    CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ,
                               unsigned blockX, unsigned blockY, unsigned blockZ,
                               unsigned sharedBytes, CUstream stream, void** arguments,
                               void** extra);
    CUresult (*cuCtxGetId)(CUcontext context, unsigned long long* id); /* CUDA 12.0; optional */
    CUresult (*cuTensorMapEncodeTiled)(void* map, int type, uint32_t rank, void* address,
                                       const uint64_t* sizes, const uint64_t* strides,
                                       const uint32_t* box, const uint32_t* elementStrides,
                                       int interleave, int swizzle, int l2Promotion,
                                       int oobFill); /* CUDA 12.0; optional: TMA kernels only */
    /* Optional: persistent kernels only (the multiprocessors of the launch's device). */
    CUresult (*cuCtxGetDevice)(CUdevice* device);
    CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
};

/* The entry points by the names libcuda.so exports (cuda.h's macros add the _v2). */
static const struct {
    const char* symbol;
    size_t offset;
    int optional;
} kiln_entry_points[] = {
    {"cuInit", offsetof(struct kiln_driver, cuInit), 0},
    {"cuGetErrorName", offsetof(struct kiln_driver, cuGetErrorName), 0},
    {"cuGetErrorString", offsetof(struct kiln_driver, cuGetErrorString), 0},
    {"cuDeviceGet", offsetof(struct kiln_driver, cuDeviceGet), 0},
    {"cuDevicePrimaryCtxRetain", offsetof(struct kiln_driver, cuDevicePrimaryCtxRetain), 0},
    {"cuCtxGetCurrent", offsetof(struct kiln_driver, cuCtxGetCurrent), 0},
    {"cuCtxPushCurrent_v2", offsetof(struct kiln_driver, cuCtxPushCurrent), 0},
    {"cuCtxPopCurrent_v2", offsetof(struct kiln_driver, cuCtxPopCurrent), 0},
    {"cuStreamGetCtx", offsetof(struct kiln_driver, cuStreamGetCtx), 0},
    {"cuModuleLoadData", offsetof(struct kiln_driver, cuModuleLoadData), 0},
    {"cuModuleGetFunction", offsetof(struct kiln_driver, cuModuleGetFunction), 0},
    {"cuFuncSetAttribute", offsetof(struct kiln_driver, cuFuncSetAttribute), 0},
    {"cuLaunchKernel", offsetof(struct kiln_driver, cuLaunchKernel), 0},
    {"cuCtxGetId", offsetof(struct kiln_driver, cuCtxGetId), 1},
    {"cuTensorMapEncodeTiled", offsetof(struct kiln_driver, cuTensorMapEncodeTiled), 1},
    {"cuCtxGetDevice", offsetof(struct kiln_driver, cuCtxGetDevice), 1},
    {"cuDeviceGetAttribute", offsetof(struct kiln_driver, cuDeviceGetAttribute), 1},
};

static struct kiln_driver kiln_cuda;

/* Guards the driver's loading, the loaded kernels and the primary context. */
static pthread_mutex_t kiln_lock = PTHREAD_MUTEX_INITIALIZER;
static int kiln_driver_state; /* 0: not tried yet, 1: loaded, -1: failed as kiln_driver_error says */
static CUresult kiln_driver_code;
static char kiln_driver_error[768];

/* The kernel in each context it was launched in: a module is loaded once per context. */
#define KILN_CONTEXTS 64
static struct {
    CUcontext context;
    unsigned long long id; /* the context's unique id (cuCtxGetId), so that a context made
                              anew at a freed one's address loads the kernel again */
    CUfunction function;
} kiln_loaded[KILN_CONTEXTS];
static int kiln_loaded_count;
static CUcontext kiln_primary; /* device 0's primary context, once a call found none current */

/* Why this thread's last launch failed; empty after one that succeeded. */
static _Thread_local char kiln_message[1024];

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static CUresult
kiln_fail(CUresult code, const char* format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(kiln_message, sizeof kiln_message, format, arguments);
    va_end(arguments);
    return code;
}

/* A driver call's failure: the call, the driver's name and words for the code, the kernel. */
static CUresult kiln_driver_fail(CUresult code, const char* call, const char* detail) {
    const char* name = NULL;
    const char* words = NULL;
    if (kiln_cuda.cuGetErrorName(code, &name) != CUDA_SUCCESS || !name)
        name = "an unknown CUresult";
    if (kiln_cuda.cuGetErrorString(code, &words) != CUDA_SUCCESS || !words)
        words = "no description";
    return kiln_fail(code, "%s failed for %s (%s): %s (%d: %s)%s", call, kiln_entry, kiln_target,
                     name, code, words, detail);
}

/* Loads the driver once (kiln_lock held); a failure is kept and given again at each call. */
static CUresult kiln_load_driver(void) {
    if (kiln_driver_state == 0) {
        const char* path = getenv("KILN_CUDA_DRIVER");
        void* library;
        size_t i;
        CUresult code;
        if (!path || !*path)
            path = "libcuda.so.1";
        kiln_driver_state = -1;
        kiln_driver_code = CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
        library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            const char* why = dlerror();
            snprintf(kiln_driver_error, sizeof kiln_driver_error,
                     "no CUDA driver: cannot load '%s': %s (install the NVIDIA driver, or set "
                     "KILN_CUDA_DRIVER to the path of libcuda.so.1)",
                     path, why ? why : "unknown error");
            return kiln_fail(kiln_driver_code, "%s", kiln_driver_error);
        }
        for (i = 0; i < sizeof kiln_entry_points / sizeof kiln_entry_points[0]; ++i) {
            void* address = dlsym(library, kiln_entry_points[i].symbol);
            if (!address && !kiln_entry_points[i].optional) {
                snprintf(kiln_driver_error, sizeof kiln_driver_error,
                         "no usable CUDA driver: '%s' lacks %s (CUDA 9.2 or later is needed)",
                         path, kiln_entry_points[i].symbol);
                dlclose(library);
                return kiln_fail(kiln_driver_code, "%s", kiln_driver_error);
            }
            memcpy((char*)&kiln_cuda + kiln_entry_points[i].offset, &address, sizeof address);
        }
        code = kiln_cuda.cuInit(0);
        if (code != CUDA_SUCCESS) {
            kiln_driver_code = code;
            kiln_driver_fail(code, "cuInit", "");
            snprintf(kiln_driver_error, sizeof kiln_driver_error, "%.*s",
                     (int)sizeof kiln_driver_error - 1, kiln_message);
            return code;
        }
        kiln_driver_state = 1;
    }
    if (kiln_driver_state < 0)
        return kiln_fail(kiln_driver_code, "%s", kiln_driver_error);
    return CUDA_SUCCESS;
}

/* The kernel in `context`, which is current (kiln_lock held): loaded there at its first use. */
static CUresult kiln_function(CUcontext context, CUfunction* function) {
    unsigned long long id = 0;
    CUmodule module;
    CUresult code;
    int slot = kiln_loaded_count;
    int i;
    if (kiln_cuda.cuCtxGetId && (code = kiln_cuda.cuCtxGetId(context, &id)) != CUDA_SUCCESS)
        return kiln_driver_fail(code, "cuCtxGetId", "");
    for (i = 0; i < kiln_loaded_count; ++i) {
        if (kiln_loaded[i].context != context)
            continue;
        if (kiln_loaded[i].id == id) {
            *function = kiln_loaded[i].function;
            return CUDA_SUCCESS;
        }
        slot = i; /* a context gone since; this one takes its place */
    }
    if (slot == KILN_CONTEXTS)
        return kiln_fail(CUDA_ERROR_OUT_OF_MEMORY,
                         "%s is loaded in %d CUDA contexts already, the most this launcher keeps",
                         kiln_entry, KILN_CONTEXTS);
    if ((code = kiln_cuda.cuModuleLoadData(&module, kiln_code)) != CUDA_SUCCESS)
        return kiln_driver_fail(code, "cuModuleLoadData", "");
    if ((code = kiln_cuda.cuModuleGetFunction(function, module, kiln_entry)) != CUDA_SUCCESS)
        return kiln_driver_fail(code, "cuModuleGetFunction", "");
    /* More than 48 KB of dynamic shared memory is allowed only when asked for. */
    if (kiln_shared_bytes > 0 &&
        (code = kiln_cuda.cuFuncSetAttribute(*function,
                                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             (int)kiln_shared_bytes)) != CUDA_SUCCESS)
        return kiln_driver_fail(code, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", "");
    kiln_loaded[slot].context = context;
    kiln_loaded[slot].id = id;
    kiln_loaded[slot].function = *function;
    if (slot == kiln_loaded_count)
        ++kiln_loaded_count;
    return CUDA_SUCCESS;
}

/* The context a launch on `stream` runs in (kiln_lock held): the stream's; for NULL,
 * CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2), the current one, else device 0's primary
 * context (the CUDA runtime's). */
static CUresult kiln_context(void* stream, CUcontext current, CUcontext* context) {
    CUresult code;
    CUdevice device;
    if ((uintptr_t)stream > 2) {
        if ((code = kiln_cuda.cuStreamGetCtx((CUstream)stream, context)) != CUDA_SUCCESS)
            return kiln_driver_fail(code, "cuStreamGetCtx", " (is the stream a CUstream?)");
        return CUDA_SUCCESS;
    }
    if (current) {
        *context = current;
        return CUDA_SUCCESS;
    }
    if (!kiln_primary) {
        if ((code = kiln_cuda.cuDeviceGet(&device, 0)) != CUDA_SUCCESS)
            return kiln_driver_fail(code, "cuDeviceGet(0)", "");
        if ((code = kiln_cuda.cuDevicePrimaryCtxRetain(&kiln_primary, device)) != CUDA_SUCCESS)
            return kiln_driver_fail(code, "cuDevicePrimaryCtxRetain", "");
    }
    *context = kiln_primary;
    return CUDA_SUCCESS;
}

/* A persistent kernel's grid (its workgroups loop over the tiles `grid` counts): as many
 * workgroups along x as the current context's device holds at once, `per_multiprocessor` on each
 * multiprocessor, and no more than the tiles. */
static CUresult kiln_persistent_grid(unsigned per_multiprocessor, int64_t grid[3]) {
    CUdevice device;
    int multiprocessors = 0;
    CUresult code;
    int64_t const tiles = grid[0] * grid[1] * grid[2];
    if (!kiln_cuda.cuCtxGetDevice || !kiln_cuda.cuDeviceGetAttribute)
        return kiln_fail(CUDA_ERROR_INVALID_VALUE,
                         "%s loops over its tiles on as many workgroups as the device holds; the "
                         "CUDA driver lacks cuCtxGetDevice or cuDeviceGetAttribute to say how many",
                         kiln_entry);
    if ((code = kiln_cuda.cuCtxGetDevice(&device)) != CUDA_SUCCESS)
        return kiln_driver_fail(code, "cuCtxGetDevice", "");
    if ((code = kiln_cuda.cuDeviceGetAttribute(&multiprocessors,
                                               CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)) !=
        CUDA_SUCCESS)
        return kiln_driver_fail(code, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", "");
    grid[0] = (int64_t)multiprocessors * per_multiprocessor;
    if (grid[0] > tiles || grid[0] <= 0)
        grid[0] = tiles;
    grid[1] = grid[2] = 1;
    return CUDA_SUCCESS;
}

/* Enqueues the kernel on `stream` with the kernel's arguments and `tiles` workgroups, or, for a
 * persistent kernel (`persistent` workgroups per multiprocessor, 0 for none), the persistent
 * grid of them. */
static CUresult kiln_launch(void* stream, const int64_t tiles[3], unsigned persistent,
                            void** arguments) {
    CUcontext current = NULL;
    CUcontext context = NULL;
    CUfunction function = NULL;
    CUresult code;
    int pushed = 0;
    char detail[160];
    int axis;
    int64_t grid[3];
    for (axis = 0; axis < 3; ++axis)
        grid[axis] = tiles[axis];
    for (axis = 0; axis < 3; ++axis)
        if (grid[axis] > 0xffffffffLL || grid[axis] < 0)
            return kiln_fail(CUDA_ERROR_INVALID_VALUE,
                             "%s: the grid of %lld x %lld x %lld workgroups is not a CUDA grid",
                             kiln_entry, (long long)grid[0], (long long)grid[1],
                             (long long)grid[2]);
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
        return CUDA_SUCCESS; /* no workgroup: nothing to compute */
    pthread_mutex_lock(&kiln_lock);
    code = kiln_load_driver();
    if (code == CUDA_SUCCESS && (code = kiln_cuda.cuCtxGetCurrent(&current)) != CUDA_SUCCESS)
        kiln_driver_fail(code, "cuCtxGetCurrent", "");
    if (code == CUDA_SUCCESS)
        code = kiln_context(stream, current, &context);
    if (code == CUDA_SUCCESS && context != current) {
        if ((code = kiln_cuda.cuCtxPushCurrent(context)) != CUDA_SUCCESS)
            kiln_driver_fail(code, "cuCtxPushCurrent", "");
        pushed = code == CUDA_SUCCESS;
    }
    if (code == CUDA_SUCCESS)
        code = kiln_function(context, &function);
    pthread_mutex_unlock(&kiln_lock);
    if (code == CUDA_SUCCESS && persistent > 0)
        code = kiln_persistent_grid(persistent, grid);
    if (code == CUDA_SUCCESS &&
        (code = kiln_cuda.cuLaunchKernel(function, (unsigned)grid[0], (unsigned)grid[1],
                                         (unsigned)grid[2], kiln_block[0], kiln_block[1],
                                         kiln_block[2], kiln_shared_bytes, (CUstream)stream,
                                         arguments, NULL)) != CUDA_SUCCESS) {
        snprintf(detail, sizeof detail,
                 ", a grid of %lld x %lld x %lld workgroups of %u x %u x %u workitems and %u "
                 "bytes of shared memory",
                 (long long)grid[0], (long long)grid[1], (long long)grid[2], kiln_block[0],
                 kiln_block[1], kiln_block[2], kiln_shared_bytes);
        kiln_driver_fail(code, "cuLaunchKernel", detail);
    }
    if (pushed)
        kiln_cuda.cuCtxPopCurrent(&context);
    return code;
}

/* ---- The kernel's launch function. ---- */
)launcher";

// A TMA kernel's tensor maps: the function that encodes one (after the launcher, whose driver
// it calls), and the launch function's lines that encode each into kiln_NAME.
struct TensorMapSource {
    std::string encoder, encodes, declarations;
};

TensorMapSource tensorMapSource(lowering::EmittedKernel const& kernel, std::string const& name) {
    std::vector<ExportedTensorMap> const maps = tensorMaps(kernel);
    TensorMapSource source;
    if (maps.empty())
        return source;
    source.encoder = fmt::format(R"encoder(
/* ---- The tensor maps: how the copy engine sees the tensors it loads. ---- */

/* A tensor map: the driver's 128 bytes, 64-byte aligned. */
typedef struct {{
    _Alignas(64) unsigned char bytes[128];
}} kiln_tensor_map;

/* The tensor map of a row-major matrix of `outer` rows of `inner` elements of `type` (a
 * CUtensorMapDataType), `row_bytes` apart at `address`, copied in boxes of box_outer x box_inner
 * into the 128-byte swizzle; elements outside the matrix read as zeros. */
static CUresult kiln_encode_tensor_map(kiln_tensor_map* map, const char* what, int type,
                                       const void* address, int64_t inner, int64_t outer,
                                       int64_t row_bytes, uint32_t box_inner, uint32_t box_outer) {{
    const uint64_t sizes[2] = {{(uint64_t)inner, (uint64_t)outer}};
    const uint64_t strides[1] = {{(uint64_t)row_bytes}};
    const uint32_t box[2] = {{box_inner, box_outer}};
    const uint32_t element_strides[2] = {{1u, 1u}};
    char detail[256];
    CUresult code;
    pthread_mutex_lock(&kiln_lock);
    code = kiln_load_driver();
    pthread_mutex_unlock(&kiln_lock);
    if (code != CUDA_SUCCESS)
        return code;
    if (!kiln_cuda.cuTensorMapEncodeTiled)
        return kiln_fail(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
                         "{name}_launch: the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12.0 "
                         "or later is needed for the tensor maps of %s)",
                         kiln_entry);
    if ((uintptr_t)address % 16 != 0 || row_bytes % 16 != 0)
        return kiln_fail(CUDA_ERROR_INVALID_VALUE,
                         "{name}_launch: %s at %p has rows %lld bytes apart; the copy engine "
                         "needs the address and the rows' distance to be multiples of 16 bytes",
                         what, address, (long long)row_bytes);
    code = kiln_cuda.cuTensorMapEncodeTiled(map, type, 2, (void*)(uintptr_t)address, sizes,
                                            strides, box, element_strides, 0 /* no interleave */,
                                            3 /* 128-byte swizzle */, 2 /* L2 128-byte */,
                                            0 /* zeros outside */);
    if (code != CUDA_SUCCESS) {{
        snprintf(detail, sizeof detail, " for %s (%lld x %lld elements, box %u x %u)", what,
                 (long long)outer, (long long)inner, box_outer, box_inner);
        return kiln_driver_fail(code, "cuTensorMapEncodeTiled", detail);
    }}
    return CUDA_SUCCESS;
}}
)encoder",
                                 fmt::arg("name", name));
    // Each map encoded where the grid has workgroups (kiln_launch enqueues nothing otherwise).
    source.declarations = "        CUresult kiln_encoded;\n";
    for (ExportedTensorMap const& m : maps) {
        source.declarations +=
            fmt::format("        kiln_tensor_map kiln_{} = {{{{0}}}};\n", m.parameter);
        source.encodes += fmt::format(
            "        if (kiln_grid[0] > 0 && kiln_grid[1] > 0 && kiln_grid[2] > 0 &&\n"
            "            (kiln_encoded = kiln_encode_tensor_map(&kiln_{0}, \"the tensor {1}\", "
            "{2}, "
            "{1}, {3},\n"
            "                                                   {4}, {5}, {6}u, {7}u)) != "
            "CUDA_SUCCESS)\n"
            "            return kiln_encoded;\n",
            m.parameter, m.tensor, m.type == "f16" ? 6 : 9, m.inner, m.outer, m.rowBytes,
            m.boxInner, m.boxOuter);
    }
    return source;
}

// Thread-block clusters (CLUSTER_M, CLUSTER_N): the launcher of a cluster kernel launches with
// cuLaunchKernelEx and the manifest's cluster, and sizes a persistent grid in whole clusters. The
// same launcher text otherwise, so that a kernel without clusters is exported as before.
std::string clusteredLauncher(std::array<std::int64_t, 3> const& cluster) {
    std::string launcher = kLauncher;
    auto replace = [&](std::string const& anchor, std::string const& with) {
        std::size_t const at = launcher.find(anchor);
        KILN_ASSERT(at != std::string::npos && launcher.find(anchor, at + 1) == std::string::npos,
                    "the launcher has no single '{}'", anchor);
        launcher.replace(at, anchor.size(), with);
    };
    replace("#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16\n",
            fmt::format(R"(#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4

/* cuda.h's CUlaunchAttribute (its cluster dimensions) and CUlaunchConfig, for cuLaunchKernelEx. */
typedef struct {{
    int id;
    char pad[4];
    union {{
        char pad[64];
        void* align;
        struct {{
            unsigned x, y, z;
        }} clusterDim;
    }} value;
}} kiln_launch_attribute;
typedef struct {{
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    kiln_launch_attribute* attrs;
    unsigned numAttrs;
}} kiln_launch_config;

/* The thread-block cluster every launch of the kernel gives (CLUSTER_M, CLUSTER_N). */
static const unsigned kiln_cluster[3] = {{{}u, {}u, {}u}};
)",
                        cluster[0], cluster[1], cluster[2]));
    replace(
        "                               void** extra);\n",
        "                               void** extra);\n"
        "    CUresult (*cuLaunchKernelEx)(const kiln_launch_config* config, CUfunction function,\n"
        "                                 void** arguments, void** extra); /* CUDA 11.8 */\n");
    replace("    {\"cuLaunchKernel\", offsetof(struct kiln_driver, cuLaunchKernel), 0},\n",
            "    {\"cuLaunchKernel\", offsetof(struct kiln_driver, cuLaunchKernel), 0},\n"
            "    {\"cuLaunchKernelEx\", offsetof(struct kiln_driver, cuLaunchKernelEx), 0},\n");
    // A persistent grid of whole clusters, at least one (PersistentGrid.h).
    replace("    grid[0] = (int64_t)multiprocessors * per_multiprocessor;\n"
            "    if (grid[0] > tiles || grid[0] <= 0)\n"
            "        grid[0] = tiles;\n",
            "    int64_t const cluster = (int64_t)kiln_cluster[0] * kiln_cluster[1] * "
            "kiln_cluster[2];\n"
            "    grid[0] = (int64_t)multiprocessors * per_multiprocessor / cluster * cluster;\n"
            "    if (grid[0] < cluster)\n"
            "        grid[0] = cluster;\n"
            "    if (grid[0] > (tiles + cluster - 1) / cluster * cluster)\n"
            "        grid[0] = (tiles + cluster - 1) / cluster * cluster;\n");
    replace(
        "        (code = kiln_cuda.cuLaunchKernel(function, (unsigned)grid[0], (unsigned)grid[1],\n"
        "                                         (unsigned)grid[2], kiln_block[0], "
        "kiln_block[1],\n"
        "                                         kiln_block[2], kiln_shared_bytes, "
        "(CUstream)stream,\n"
        "                                         arguments, NULL)) != CUDA_SUCCESS) {\n",
        "        (code = kiln_launch_in_clusters(function, grid, (CUstream)stream, arguments)) !=\n"
        "            CUDA_SUCCESS) {\n");
    replace("        kiln_driver_fail(code, \"cuLaunchKernel\", detail);\n",
            "        kiln_driver_fail(code, \"cuLaunchKernelEx\", detail);\n");
    replace("/* Enqueues the kernel on `stream` with the kernel's arguments and `tiles` "
            "workgroups, or, for a\n",
            R"(/* Enqueues `function` on `stream` with a grid of whole clusters of kiln_cluster. */
static CUresult kiln_launch_in_clusters(CUfunction function, const int64_t grid[3],
                                        CUstream stream, void** arguments) {
    kiln_launch_attribute cluster;
    kiln_launch_config config;
    memset(&cluster, 0, sizeof cluster);
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = kiln_cluster[0];
    cluster.value.clusterDim.y = kiln_cluster[1];
    cluster.value.clusterDim.z = kiln_cluster[2];
    config.gridDimX = (unsigned)grid[0];
    config.gridDimY = (unsigned)grid[1];
    config.gridDimZ = (unsigned)grid[2];
    config.blockDimX = kiln_block[0];
    config.blockDimY = kiln_block[1];
    config.blockDimZ = kiln_block[2];
    config.sharedMemBytes = kiln_shared_bytes;
    config.hStream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    return kiln_cuda.cuLaunchKernelEx(&config, function, arguments, NULL);
}

/* Enqueues the kernel on `stream` with the kernel's arguments and `tiles` workgroups, or, for a
)");
    return launcher;
}

} // namespace

CapiDriver cudaCapiDriver(lowering::EmittedKernel const& kernel, CapiOptions const& options) {
    TensorMapSource maps = tensorMapSource(kernel, options.name);
    std::vector<std::string> mapped;
    for (ExportedTensorMap const& m : tensorMaps(kernel))
        mapped.push_back(m.tensor);
    std::string const& code = options.cubin ? *options.cubin : kernel.code;
    return {
        .needs = " * It needs neither Kiln nor the CUDA toolkit: the CUDA driver (libcuda.so.1, or "
                 "the library\n * $KILN_CUDA_DRIVER names) is loaded by the first launch.\n",
        .where = "on `stream`, a CUstream, in the stream's context (for NULL, the legacy\n * "
                 "default stream, and CU_STREAM_PER_THREAD: the current context, or device 0's "
                 "primary context\n * when none is current),",
        .failures = fmt::format(
            "a CUresult, and {}_error() says why: CUDA_ERROR_INVALID_VALUE (1)\n * for a negative "
            "size, CUDA_ERROR_SHARED_OBJECT_INIT_FAILED (303) when the CUDA driver cannot be\n * "
            "loaded, or the driver's code.",
            options.name),
        .loaded = "the kernel is loaded once into each context it runs in, and stays.",
        .argumentsNote =
            mapped.empty()
                ? ""
                : fmt::format(" *\n * The kernel loads the tiles of {} with the copy engine (TMA): "
                              "each launch makes their\n * tensor maps from the pointers and "
                              "sizes, which needs their addresses and the distance\n * between "
                              "two of their rows to be multiples of 16 bytes (else "
                              "CUDA_ERROR_INVALID_VALUE).\n",
                              fmt::join(mapped, " and ")),
        .through = "the CUDA driver",
        .invalidValue = "CUDA_ERROR_INVALID_VALUE",
        .devicePointer = "CUdeviceptr",
        .code = code,
        .codeNote = options.cubin
                        ? fmt::format("The cubin ptxas made for {} ({} bytes; the PTX is beside "
                                      "this file)",
                                      kernel.target, code.size())
                        : fmt::format("The PTX ({} bytes), which the driver compiles for the "
                                      "device when the kernel is first loaded",
                                      code.size()),
        .kernelFacts = "",
        .launcher = kernel.cluster[0] * kernel.cluster[1] * kernel.cluster[2] > 1
                        ? clusteredLauncher(kernel.cluster)
                        : std::string(kLauncher),
        .helpers = std::move(maps.encoder),
        .declarations = std::move(maps.declarations),
        .preparations = std::move(maps.encodes),
    };
}

} // namespace kiln::cli
