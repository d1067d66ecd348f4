// FakeLlvmAssembler.cpp: a module that exports the LLVM MC assembler plugin's entry point with a
// table of another ABI version, as a plugin from another Kiln build would; AssemblerLoadTest
// checks that the runtime refuses it before calling anything in it.
#include "LlvmAssemblerPlugin.h"

extern "C" __attribute__((visibility("default"))) KilnLlvmAssembler const*
kiln_llvm_assembler_entry() {
    static constexpr KilnLlvmAssembler plugin = {kKilnLlvmAssemblerAbiVersion + 1, nullptr, nullptr,
                                                 nullptr, nullptr};
    return &plugin;
}
