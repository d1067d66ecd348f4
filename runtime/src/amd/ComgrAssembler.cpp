// ComgrAssembler.cpp: AMDGCN assembly through AMD Comgr, entirely in memory.
//
// One data set holds the source; ASSEMBLE_SOURCE_TO_RELOCATABLE and
// LINK_RELOCATABLE_TO_EXECUTABLE produce the code object. Logging is on, so a failure carries
// the log Comgr's LLVM wrote. libamd_comgr (and the libLLVM it brings) is dlopen'ed when a
// Comgr assembler is first made, not linked: loading it costs a process ~20 ms at start, which
// only AMD targets should pay. amd_comgr.h is needed at build time only, for the functions' types.
#include "AmdAssemblers.h"

#include <algorithm>
#include <amd_comgr.h>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

namespace kiln::runtime::amd {
namespace {

/// The Comgr functions Kiln calls: each is a member of Comgr of the type amd_comgr.h declares,
/// resolved by its name.
#define KILN_COMGR_FUNCTIONS(X)                                                                    \
    X(amd_comgr_get_version)                                                                       \
    X(amd_comgr_get_isa_count)                                                                     \
    X(amd_comgr_get_isa_name)                                                                      \
    X(amd_comgr_status_string)                                                                     \
    X(amd_comgr_create_data_set)                                                                   \
    X(amd_comgr_destroy_data_set)                                                                  \
    X(amd_comgr_data_set_add)                                                                      \
    X(amd_comgr_create_data)                                                                       \
    X(amd_comgr_release_data)                                                                      \
    X(amd_comgr_set_data)                                                                          \
    X(amd_comgr_set_data_name)                                                                     \
    X(amd_comgr_get_data)                                                                          \
    X(amd_comgr_create_action_info)                                                                \
    X(amd_comgr_destroy_action_info)                                                               \
    X(amd_comgr_action_info_set_isa_name)                                                          \
    X(amd_comgr_action_info_set_logging)                                                           \
    X(amd_comgr_do_action)                                                                         \
    X(amd_comgr_action_data_count)                                                                 \
    X(amd_comgr_action_data_get_data)

/// libamd_comgr's entry points. Its handle is never dlclose'd, so they stay valid.
struct Comgr {
#define KILN_COMGR_MEMBER(function) decltype(&::function) function = nullptr;
    KILN_COMGR_FUNCTIONS(KILN_COMGR_MEMBER)
#undef KILN_COMGR_MEMBER
};

/// A function pointer from a symbol address (memcpy: ISO C++ has no cast between the two).
template <class F>
void assign(F& out, void* address) {
    static_assert(sizeof(F) == sizeof(void*));
    std::memcpy(&out, &address, sizeof(void*));
}

/// libamd_comgr.so.2, else libamd_comgr.so (or what kComgrLibraryVariable names), loaded.
Expected<Comgr> loadComgr() {
    std::vector<std::string> candidates = {"libamd_comgr.so.2", "libamd_comgr.so"};
    if (char const* variable = std::getenv(kComgrLibraryVariable); variable && *variable)
        candidates = {variable};
    void* handle = nullptr;
    std::string library, reasons;
    for (std::string const& candidate : candidates) {
        handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            library = candidate;
            break;
        }
        char const* reason = dlerror();
        reasons += (reasons.empty() ? "" : "; ") + std::string(reason ? reason : candidate);
    }
    if (!handle)
        return Error(ErrorCode::NoDriver, "no AMD Comgr: " + reasons +
                                              " (install libamd-comgr2, or set " +
                                              kComgrLibraryVariable + " to its path)");
    Comgr comgr;
    std::string missing;
#define KILN_COMGR_RESOLVE(function)                                                               \
    assign(comgr.function, dlsym(handle, #function));                                              \
    if (!comgr.function)                                                                           \
        missing += std::string(missing.empty() ? "" : ", ") + #function;
    KILN_COMGR_FUNCTIONS(KILN_COMGR_RESOLVE)
#undef KILN_COMGR_RESOLVE
    if (!missing.empty())
        return Error(ErrorCode::NoDriver,
                     "no usable AMD Comgr: '" + library + "' lacks " + missing);
    return comgr;
}

std::string statusText(Comgr const& comgr, amd_comgr_status_t status) {
    char const* text = nullptr;
    if (comgr.amd_comgr_status_string(status, &text) == AMD_COMGR_STATUS_SUCCESS && text)
        return text;
    return "status " + std::to_string(static_cast<int>(status));
}

/// Releases Comgr handles at the end of a scope.
struct Handles {
    Comgr const& comgr;
    std::vector<amd_comgr_data_set_t> sets;
    std::vector<amd_comgr_data_t> data;
    std::vector<amd_comgr_action_info_t> actions;
    ~Handles() {
        for (auto& d : data)
            comgr.amd_comgr_release_data(d);
        for (auto& s : sets)
            comgr.amd_comgr_destroy_data_set(s);
        for (auto& a : actions)
            comgr.amd_comgr_destroy_action_info(a);
    }
};

std::string bytesOf(Comgr const& comgr, amd_comgr_data_t data) {
    std::size_t size = 0;
    if (comgr.amd_comgr_get_data(data, &size, nullptr) != AMD_COMGR_STATUS_SUCCESS)
        return {};
    std::string out(size, '\0');
    if (comgr.amd_comgr_get_data(data, &size, out.data()) != AMD_COMGR_STATUS_SUCCESS)
        return {};
    return out;
}

std::string logsOf(Comgr const& comgr, amd_comgr_data_set_t set) {
    std::size_t count = 0;
    if (comgr.amd_comgr_action_data_count(set, AMD_COMGR_DATA_KIND_LOG, &count) !=
        AMD_COMGR_STATUS_SUCCESS)
        return {};
    std::string log;
    for (std::size_t k = 0; k < count; ++k) {
        amd_comgr_data_t data;
        if (comgr.amd_comgr_action_data_get_data(set, AMD_COMGR_DATA_KIND_LOG, k, &data) !=
            AMD_COMGR_STATUS_SUCCESS)
            continue;
        log += bytesOf(comgr, data);
        comgr.amd_comgr_release_data(data);
    }
    return log;
}

class ComgrAssembler final : public Assembler {
public:
    ComgrAssembler(Comgr comgr, std::vector<std::string> isas, std::string version)
        : comgr_(comgr)
        , isas_(std::move(isas))
        , version_(std::move(version)) {}

    std::string_view name() const override { return "comgr"; }
    std::string version() const override { return version_; }

    bool supports(std::string_view target) const override {
        std::string const isa = "amdgcn-amd-amdhsa--" + std::string(target);
        return std::find(isas_.begin(), isas_.end(), isa) != isas_.end();
    }

    Expected<std::string> assemble(std::string_view source, std::string_view target,
                                   std::string_view origin) const override {
        std::string const where = std::string(origin) + " for " + std::string(target);
        if (!supports(target))
            return Error(ErrorCode::Unsupported,
                         version_ + " does not know the target " + std::string(target));
        Handles h{comgr_, {}, {}, {}};
        std::string const isa = "amdgcn-amd-amdhsa--" + std::string(target);
        auto check = [&](amd_comgr_status_t status, char const* call) -> Status {
            if (status == AMD_COMGR_STATUS_SUCCESS)
                return {};
            return Error(ErrorCode::DriverError, std::string(call) +
                                                     " failed: " + statusText(comgr_, status) +
                                                     " (" + where + ")");
        };
        amd_comgr_data_set_t input, relocatable, executable;
        KILN_RETURN_IF_ERROR(
            check(comgr_.amd_comgr_create_data_set(&input), "amd_comgr_create_data_set"));
        h.sets.push_back(input);
        KILN_RETURN_IF_ERROR(
            check(comgr_.amd_comgr_create_data_set(&relocatable), "amd_comgr_create_data_set"));
        h.sets.push_back(relocatable);
        KILN_RETURN_IF_ERROR(
            check(comgr_.amd_comgr_create_data_set(&executable), "amd_comgr_create_data_set"));
        h.sets.push_back(executable);

        amd_comgr_data_t data;
        KILN_RETURN_IF_ERROR(check(comgr_.amd_comgr_create_data(AMD_COMGR_DATA_KIND_SOURCE, &data),
                                   "amd_comgr_create_data"));
        h.data.push_back(data);
        KILN_RETURN_IF_ERROR(check(comgr_.amd_comgr_set_data(data, source.size(), source.data()),
                                   "amd_comgr_set_data"));
        std::string const fileName(origin);
        KILN_RETURN_IF_ERROR(check(comgr_.amd_comgr_set_data_name(data, fileName.c_str()),
                                   "amd_comgr_set_data_name"));
        KILN_RETURN_IF_ERROR(
            check(comgr_.amd_comgr_data_set_add(input, data), "amd_comgr_data_set_add"));

        amd_comgr_action_info_t action;
        KILN_RETURN_IF_ERROR(
            check(comgr_.amd_comgr_create_action_info(&action), "amd_comgr_create_action_info"));
        h.actions.push_back(action);
        KILN_RETURN_IF_ERROR(check(comgr_.amd_comgr_action_info_set_isa_name(action, isa.c_str()),
                                   "amd_comgr_action_info_set_isa_name"));
        KILN_RETURN_IF_ERROR(check(comgr_.amd_comgr_action_info_set_logging(action, true),
                                   "amd_comgr_action_info_set_logging"));

        amd_comgr_status_t status = comgr_.amd_comgr_do_action(
            AMD_COMGR_ACTION_ASSEMBLE_SOURCE_TO_RELOCATABLE, action, input, relocatable);
        if (status != AMD_COMGR_STATUS_SUCCESS)
            return Error(ErrorCode::JitFailed, "assembling " + where + " with " + version_ +
                                                   " failed (" + statusText(comgr_, status) +
                                                   "); assembler log:\n" +
                                                   logsOf(comgr_, relocatable));
        status = comgr_.amd_comgr_do_action(AMD_COMGR_ACTION_LINK_RELOCATABLE_TO_EXECUTABLE, action,
                                            relocatable, executable);
        if (status != AMD_COMGR_STATUS_SUCCESS)
            return Error(ErrorCode::JitFailed, "linking " + where + " with " + version_ +
                                                   " failed (" + statusText(comgr_, status) +
                                                   "); linker log:\n" + logsOf(comgr_, executable));
        amd_comgr_data_t code;
        KILN_RETURN_IF_ERROR(check(comgr_.amd_comgr_action_data_get_data(
                                       executable, AMD_COMGR_DATA_KIND_EXECUTABLE, 0, &code),
                                   "amd_comgr_action_data_get_data"));
        h.data.push_back(code);
        return bytesOf(comgr_, code);
    }

private:
    Comgr comgr_;
    std::vector<std::string> isas_;
    std::string version_;
};

} // namespace

Expected<std::unique_ptr<Assembler>> makeComgrAssembler() {
    KILN_ASSIGN_OR_RETURN(Comgr const comgr, loadComgr());
    std::size_t major = 0, minor = 0;
    comgr.amd_comgr_get_version(&major, &minor);
    std::size_t count = 0;
    if (amd_comgr_status_t s = comgr.amd_comgr_get_isa_count(&count); s != AMD_COMGR_STATUS_SUCCESS)
        return Error(ErrorCode::NoDriver,
                     "AMD Comgr does not answer: amd_comgr_get_isa_count: " + statusText(comgr, s));
    std::vector<std::string> isas;
    for (std::size_t k = 0; k < count; ++k) {
        char const* isa = nullptr;
        if (comgr.amd_comgr_get_isa_name(k, &isa) == AMD_COMGR_STATUS_SUCCESS && isa)
            isas.emplace_back(isa);
    }
    return std::unique_ptr<Assembler>(std::make_unique<ComgrAssembler>(
        comgr, std::move(isas),
        "AMD Comgr " + std::to_string(major) + "." + std::to_string(minor)));
}

} // namespace kiln::runtime::amd
