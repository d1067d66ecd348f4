/* fake-libcuda.c: a CUDA driver that prints what it is asked, for export-capi.sh to check what
 * the exported C ABI of a GEMM (A, B, D, M, K, N) does without a GPU: the context it
 * chooses, that it loads the kernel once per context with the manifest's shared memory, and the
 * grid, block and arguments of each launch, and a device of 132 multiprocessors to a persistent
 * kernel's launcher. It refuses a grid wider than 1000 workgroups, as a real driver refuses one
 * past the device's limits. Loaded through KILN_CUDA_DRIVER. */
#include <stdint.h>
#include <stdio.h>

typedef int CUresult;
static char primary, streams; /* two contexts: device 0's primary one, and the streams' */
static char module, function;
static void* current;

static const char* contextName(const void* context) {
    return context == &primary ? "primary" : context == &streams ? "the stream's" : "none";
}

CUresult cuInit(unsigned flags) {
    printf("  cuInit(%u)\n", flags);
    return 0;
}
CUresult cuGetErrorName(CUresult error, const char** name) {
    *name = error == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_UNKNOWN";
    return 0;
}
CUresult cuGetErrorString(CUresult error, const char** words) {
    *words = error == 1 ? "invalid argument" : "unknown error";
    return 0;
}
CUresult cuDeviceGet(int* device, int ordinal) {
    printf("  cuDeviceGet(%d)\n", ordinal);
    *device = ordinal;
    return 0;
}
CUresult cuDevicePrimaryCtxRetain(void** context, int device) {
    printf("  cuDevicePrimaryCtxRetain(%d)\n", device);
    *context = &primary;
    return 0;
}
CUresult cuCtxGetCurrent(void** context) {
    *context = current;
    return 0;
}
CUresult cuCtxPushCurrent_v2(void* context) {
    printf("  cuCtxPushCurrent(%s)\n", contextName(context));
    current = context;
    return 0;
}
CUresult cuCtxPopCurrent_v2(void** context) {
    printf("  cuCtxPopCurrent\n");
    *context = current;
    current = NULL;
    return 0;
}
CUresult cuStreamGetCtx(void* stream, void** context) {
    printf("  cuStreamGetCtx(0x%llx)\n", (unsigned long long)(uintptr_t)stream);
    *context = &streams;
    return 0;
}
CUresult cuModuleLoadData(void** loaded, const void* image) {
    const char* bytes = image;
    printf("  cuModuleLoadData(%s) in %s\n",
           bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F' ? "a cubin"
                                                                                     : "PTX",
           contextName(current));
    *loaded = &module;
    return 0;
}
CUresult cuModuleGetFunction(void** loaded, void* from, const char* name) {
    printf("  cuModuleGetFunction(%s)\n", from == &module ? name : "a module never loaded");
    *loaded = &function;
    return 0;
}
CUresult cuFuncSetAttribute(void* of, int attribute, int value) {
    printf("  cuFuncSetAttribute(%s, %d, %d)\n", of == &function ? "kernel" : "?", attribute,
           value);
    return 0;
}
/* The device of 132 multiprocessors a persistent kernel's launcher asks for. */
CUresult cuCtxGetDevice(int* device) {
    printf("  cuCtxGetDevice in %s\n", contextName(current));
    *device = 0;
    return 0;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, int device) {
    printf("  cuDeviceGetAttribute(%d, device %d)\n", attribute, device);
    *value = attribute == 16 ? 132 : 0;
    return 0;
}
CUresult cuLaunchKernel(void* of, unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX,
                        unsigned blockY, unsigned blockZ, unsigned shared, void* stream,
                        void** arguments, void** extra) {
    printf("  cuLaunchKernel(%s in %s, grid %u x %u x %u, block %u x %u x %u, %u bytes, stream "
           "0x%llx, A 0x%llx, B 0x%llx, D 0x%llx, M %lld, K %lld, N %lld%s)\n",
           of == &function ? "kernel" : "?", contextName(current), gridX, gridY, gridZ, blockX,
           blockY, blockZ, shared, (unsigned long long)(uintptr_t)stream,
           *(unsigned long long*)arguments[0], *(unsigned long long*)arguments[1],
           *(unsigned long long*)arguments[2], *(long long*)arguments[3], *(long long*)arguments[4],
           *(long long*)arguments[5], extra ? ", extra" : "");
    return gridX > 1000 ? 1 : 0;
}
