// LlvmAssemblerLoader.cpp: finding and dlopen'ing the LLVM MC + lld assembler plugin
// (LlvmAssemblerPlugin.h), and the Assembler over its C functions.
//
// The plugin is looked for, in order: at the path kLlvmAssemblerVariable names (and only there
// when it is set), where the build put it, where `cmake --install` puts it. The two paths are
// baked in when Kiln is configured (KILN_LLVM_ASSEMBLER_BUILT, KILN_LLVM_ASSEMBLER_INSTALLED;
// both empty when LLVM 16 and lld were not found).
#include "AmdAssemblers.h"
#include "LlvmAssemblerPlugin.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>

namespace kiln::runtime::amd {
namespace {

constexpr char const* kBuiltPlugin = KILN_LLVM_ASSEMBLER_BUILT;
constexpr char const* kInstalledPlugin = KILN_LLVM_ASSEMBLER_INSTALLED;

class PluginAssembler final : public Assembler {
public:
    explicit PluginAssembler(KilnLlvmAssembler const& plugin)
        : plugin_(plugin) {}

    std::string_view name() const override { return "llvm"; }
    std::string version() const override { return plugin_.version(); }

    bool supports(std::string_view target) const override {
        return plugin_.supports(std::string(target).c_str()) != 0;
    }

    Expected<std::string> assemble(std::string_view source, std::string_view target,
                                   std::string_view origin) const override {
        char* output = nullptr;
        std::size_t size = 0;
        int const status =
            plugin_.assemble(source.data(), source.size(), std::string(target).c_str(),
                             std::string(origin).c_str(), &output, &size);
        std::string text = output ? std::string(output, size) : std::string();
        plugin_.release(output);
        switch (status) {
        case kKilnLlvmAssemblerOk:
            return text;
        case kKilnLlvmAssemblerUnsupported:
            return Error(ErrorCode::Unsupported, text);
        case kKilnLlvmAssemblerFailed:
            return Error(ErrorCode::JitFailed, text);
        case kKilnLlvmAssemblerNoTemporary:
            return Error(ErrorCode::InvalidArgument, text);
        case kKilnLlvmAssemblerInternal:
            return Error(ErrorCode::JitFailed, text);
        default:
            return Error(ErrorCode::JitFailed, version() + " returned the unknown status " +
                                                   std::to_string(status) + ": " + text);
        }
    }

private:
    KilnLlvmAssembler const& plugin_;
};

/// The plugin at `path`, loaded and checked. Never dlclose'd: LLVM's and lld's global state
/// lives as long as the process.
Expected<KilnLlvmAssembler const*> openPlugin(std::string const& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        char const* reason = dlerror();
        return Error(ErrorCode::Unsupported, "cannot load the LLVM MC assembler plugin '" + path +
                                                 "': " + (reason ? reason : "dlopen failed"));
    }
    void* address = dlsym(handle, kKilnLlvmAssemblerEntryName);
    if (!address)
        return Error(ErrorCode::Unsupported, "'" + path +
                                                 "' is not Kiln's LLVM MC assembler plugin: it "
                                                 "has no " +
                                                 kKilnLlvmAssemblerEntryName);
    KilnLlvmAssemblerEntry entry = nullptr;
    static_assert(sizeof(entry) == sizeof(address));
    std::memcpy(&entry, &address, sizeof(address));
    KilnLlvmAssembler const* plugin = entry();
    if (!plugin || plugin->abiVersion != kKilnLlvmAssemblerAbiVersion)
        return Error(ErrorCode::Unsupported,
                     "'" + path + "' is an LLVM MC assembler plugin of ABI version " +
                         (plugin ? std::to_string(plugin->abiVersion) : std::string("(none)")) +
                         ", this Kiln needs version " +
                         std::to_string(kKilnLlvmAssemblerAbiVersion) +
                         " (build the plugin from the same Kiln)");
    return plugin;
}

Expected<KilnLlvmAssembler const*> findPlugin() {
    if (char const* variable = std::getenv(kLlvmAssemblerVariable); variable && *variable)
        return openPlugin(variable);
    if (!*kBuiltPlugin)
        return Error(ErrorCode::Unsupported,
                     std::string("the LLVM MC assembler is not in this build: LLVM 16 and lld "
                                 "were not found when it was configured (install llvm-16-dev and "
                                 "liblld-16-dev and configure again, or set ") +
                         kLlvmAssemblerVariable + " to the path of a kiln_llvm_assembler plugin)");
    for (char const* path : {kBuiltPlugin, kInstalledPlugin}) {
        std::error_code ignored;
        if (std::filesystem::exists(path, ignored))
            return openPlugin(path);
    }
    return Error(ErrorCode::NotFound, std::string("no LLVM MC assembler plugin: ") +
                                          kLlvmAssemblerVariable + " is not set, and neither " +
                                          kBuiltPlugin + " (where the build puts it) nor " +
                                          kInstalledPlugin +
                                          " (where `cmake --install` puts it) exists (build the "
                                          "target kiln_llvm_assembler, or set " +
                                          kLlvmAssemblerVariable + " to its path)");
}

} // namespace

Expected<std::unique_ptr<Assembler>> loadLlvmAssembler() {
    KILN_ASSIGN_OR_RETURN(KilnLlvmAssembler const* plugin, findPlugin());
    return std::unique_ptr<Assembler>(std::make_unique<PluginAssembler>(*plugin));
}

} // namespace kiln::runtime::amd
