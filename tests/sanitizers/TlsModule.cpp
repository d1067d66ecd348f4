// TlsModule.cpp: a module with 24 bytes of thread-local storage, for LsanDynamicTls.cpp. Loaded
// with dlopen and read through the general-dynamic model, as Comgr and the LLVM assembler plugin
// are: glibc allocates each thread's block with malloc on the thread's first read.
extern "C" {
__attribute__((visibility("default"))) thread_local char threadBlock[24];

__attribute__((visibility("default"))) char* kilnThreadBlock() {
    return threadBlock;
}
}
