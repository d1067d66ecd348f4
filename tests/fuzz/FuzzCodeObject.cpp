// libFuzzer target: AMDGPU code objects as the HIP platform reads them (readCodeObject: the ELF
// header and the MessagePack metadata note). Any input must either read or be refused with an
// InvalidArgument naming the code object; a code object that reads is checked against the
// manifest of the seed's kernel, which must answer with a Status, never crash.
#include "kiln/runtime/CodeObject.h"
#include "kiln/runtime/KernelManifest.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

constexpr char kManifest[] = R"({"entry": "kiln_axpy", "target": "gfx942", "block": [256, 1, 1],
  "parameters": [
    {"name": "X", "type": "f32", "kind": "pointer", "size": 8, "offset": 0},
    {"name": "Y", "type": "f32", "kind": "pointer", "size": 8, "offset": 8},
    {"name": "alpha", "type": "f32", "kind": "value", "size": 4, "offset": 16},
    {"name": "N", "type": "i64", "kind": "value", "size": 8, "offset": 24}]})";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    using namespace kiln::runtime;
    static KernelManifest const manifest = *KernelManifest::fromJson(kManifest, "manifest");
    std::string_view const image(reinterpret_cast<char const*>(data), size);
    auto info = readCodeObject(image, "code object 'fuzz.hsaco'");
    if (!info.ok()) {
        std::string const& message = info.error().message();
        if (info.error().code() != ErrorCode::InvalidArgument ||
            message.find("code object 'fuzz.hsaco'") == std::string::npos) {
            std::fprintf(stderr, "an error that is not InvalidArgument naming the input: %s\n",
                         message.c_str());
            std::abort();
        }
        return 0;
    }
    (void)info->kernelNames();
    for (CodeObjectKernel const& kernel : info->kernels)
        (void)checkManifestAgainstCodeObject(manifest, kernel);
    return 0;
}
