// FakeHipFixture.cpp: reaching the fake's state, loading the platform over it, assembling the
// test kernel once per process.
#include "FakeHipFixture.h"

#include "kiln/runtime/Assembler.h"

#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kiln::runtime {

test::FakeHipState& test::fakeHip() {
    static test::FakeHipState* state = [] {
        void* library = dlopen(kFakeHipLibrary, RTLD_NOW | RTLD_LOCAL);
        if (!library)
            throw std::runtime_error(std::string("cannot load the fake HIP runtime: ") + dlerror());
        void* symbol = dlsym(library, "kilnFakeHipState");
        decltype(&kilnFakeHipState) get = nullptr;
        std::memcpy(&get, &symbol, sizeof symbol);
        return get();
    }();
    return *state;
}

Expected<std::shared_ptr<Platform>> FakeHip::load() {
    PlatformOptions options;
    options.driverLibrary = kFakeHipLibrary;
    return loadPlatform("hip", options);
}

std::shared_ptr<Device> FakeHip::openDevice(int ordinal) {
    Expected<std::shared_ptr<Platform>> platform = load();
    if (!platform.ok()) {
        ADD_FAILURE() << platform.error().message();
        return nullptr;
    }
    Expected<std::shared_ptr<Device>> device = (*platform)->device(ordinal);
    if (!device.ok()) {
        ADD_FAILURE() << device.error().message();
        return nullptr;
    }
    return *device;
}

std::optional<std::string> FakeHip::axpy() {
    static std::optional<std::string> code;
    static std::string why;
    if (!code && why.empty()) {
        std::ifstream file(std::string(KILN_SOURCE_DIR) +
                           "/tests/golden/amdgcn/axpy_vec1.gfx942.s");
        std::stringstream source;
        source << file.rdbuf();
        Expected<std::unique_ptr<Assembler>> assembler = assemblerFor("gfx942");
        if (!assembler.ok()) {
            why = assembler.error().message();
        } else {
            Expected<std::string> assembled =
                (*assembler)->assemble(source.str(), "gfx942", "axpy_vec1.gfx942.s");
            if (assembled.ok())
                code = *assembled;
            else
                why = assembled.error().message();
        }
    }
    why_ = why;
    return code;
}

KernelManifest FakeHip::manifest() {
    return KernelManifest::fromFile(std::string(KILN_SOURCE_DIR) +
                                    "/tests/runtime/amdgcn/kiln_axpy.json")
        .value();
}

} // namespace kiln::runtime
