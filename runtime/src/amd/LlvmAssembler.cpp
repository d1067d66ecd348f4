// LlvmAssembler.cpp: AMDGCN assembly through LLVM 16's MC layer, linked by lld; the whole of
// the plugin module kiln_llvm_assembler, which kiln::runtime loads at run time through the C ABI
// of LlvmAssemblerPlugin.h (so that no other Kiln program links libLLVM).
//
// The MC layer assembles in memory into a relocatable object (the same path as llvm-mc
// -filetype=obj); lld links it into the shared object the HSA loader wants. lld's library entry
// reads and writes files, so the link goes through a private temporary directory.
#include "LlvmAssemblerPlugin.h"
#include "kiln/runtime/Status.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <lld/Common/CommonLinkerContext.h>
#include <lld/Common/Driver.h>
#include <llvm/MC/MCAsmBackend.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCCodeEmitter.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCObjectFileInfo.h>
#include <llvm/MC/MCObjectWriter.h>
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCTargetAsmParser.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <mutex>
#include <sstream>
#include <unistd.h>

extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTargetMC();
extern "C" void LLVMInitializeAMDGPUAsmParser();

namespace kiln::runtime::amd {
namespace {

constexpr char const* kTriple = "amdgcn-amd-amdhsa";

llvm::Target const* amdgpuTarget(std::string& error) {
    static std::once_flag once;
    std::call_once(once, [] {
        LLVMInitializeAMDGPUTargetInfo();
        LLVMInitializeAMDGPUTargetMC();
        LLVMInitializeAMDGPUAsmParser();
    });
    return llvm::TargetRegistry::lookupTarget(kTriple, error);
}

/// A temporary directory removed when it goes out of scope.
class TemporaryDirectory {
public:
    TemporaryDirectory() {
        std::string pattern = (std::filesystem::temp_directory_path() / "kiln-lld-XXXXXX").string();
        if (char* made = mkdtemp(pattern.data()))
            path_ = made;
    }
    ~TemporaryDirectory() {
        std::error_code ignored;
        if (!path_.empty())
            std::filesystem::remove_all(path_, ignored);
    }
    std::filesystem::path const& path() const { return path_; }

private:
    std::filesystem::path path_;
};

constexpr char const* kVersion = "LLVM " LLVM_VERSION_STRING " MC + lld";

void replaceAll(std::string& text, std::string const& from, std::string const& to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
}

/// A gfx940 code object marked as gfx942.
Expected<std::string> retarget(std::string code, std::string const& where) {
    constexpr std::size_t kFlags = 48;        // e_flags in an ELF64 header
    constexpr std::uint32_t kMachMask = 0xff; // EF_AMDGPU_MACH
    constexpr std::uint32_t kGfx940 = 0x40;   // EF_AMDGPU_MACH_AMDGCN_GFX940
    constexpr std::uint32_t kGfx942 = 0x4c;   // EF_AMDGPU_MACH_AMDGCN_GFX942
    if (code.size() < kFlags + 4)
        return Error(ErrorCode::JitFailed, "the code object for " + where + " is truncated");
    std::uint32_t flags = 0;
    std::memcpy(&flags, code.data() + kFlags, 4);
    if ((flags & kMachMask) != kGfx940)
        return Error(ErrorCode::JitFailed,
                     "the code object for " + where + " is not for gfx940 as expected");
    flags = (flags & ~kMachMask) | kGfx942;
    std::memcpy(code.data() + kFlags, &flags, 4);
    replaceAll(code, "amdgcn-amd-amdhsa--gfx940", "amdgcn-amd-amdhsa--gfx942");
    return code;
}

/// Whether this LLVM knows the processor `target` by that name.
bool knows(std::string_view target) {
    std::string error;
    llvm::Target const* t = amdgpuTarget(error);
    if (!t)
        return false;
    llvm::Triple const triple(kTriple);
    // Asked of a generic subtarget, so that an unknown name is not warned about.
    std::unique_ptr<llvm::MCSubtargetInfo> sti(t->createMCSubtargetInfo(triple.str(), "", ""));
    return sti && sti->isCPUStringValid(std::string(target));
}

bool supports(std::string_view target) {
    return knows(target) || (target == "gfx942" && knows("gfx940"));
}

Expected<std::string> assembleObject(std::string_view source, std::string_view target,
                                     std::string_view origin, std::string const& where) {
    std::string error;
    llvm::Target const* t = amdgpuTarget(error);
    if (!t)
        return Error(ErrorCode::Unsupported, "LLVM has no AMDGPU target: " + error);
    if (!knows(target))
        return Error(ErrorCode::Unsupported,
                     std::string(kVersion) + " does not know the target " + std::string(target));
    llvm::Triple const triple(kTriple);
    llvm::MCTargetOptions options;
    std::unique_ptr<llvm::MCRegisterInfo> mri(t->createMCRegInfo(triple.str()));
    std::unique_ptr<llvm::MCAsmInfo> mai(t->createMCAsmInfo(*mri, triple.str(), options));
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        t->createMCSubtargetInfo(triple.str(), std::string(target), ""));
    std::unique_ptr<llvm::MCInstrInfo> mii(t->createMCInstrInfo());

    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(source.data(), source.size()),
                                             std::string(origin)),
        llvm::SMLoc());
    std::string log;
    llvm::raw_string_ostream logStream(log);
    sources.setDiagHandler(
        [](llvm::SMDiagnostic const& d, void* context) {
            d.print(nullptr, *static_cast<llvm::raw_string_ostream*>(context), false);
        },
        &logStream);

    llvm::MCContext context(triple, mai.get(), mri.get(), sti.get(), &sources, &options);
    // Errors found once the code is laid out (a branch beyond its 16-bit offset) are
    // reported through the context, whose default handler prints them on stderr.
    context.setDiagnosticHandler(
        [&logStream](llvm::SMDiagnostic const& d, bool, llvm::SourceMgr const&,
                     std::vector<llvm::MDNode const*>&) { d.print(nullptr, logStream, false); });
    std::unique_ptr<llvm::MCObjectFileInfo> objectInfo(
        t->createMCObjectFileInfo(context, /*PIC=*/true));
    context.setObjectFileInfo(objectInfo.get());

    llvm::SmallVector<char, 0> bytes;
    auto stream = std::make_unique<llvm::raw_svector_ostream>(bytes);
    std::unique_ptr<llvm::MCCodeEmitter> emitter(t->createMCCodeEmitter(*mii, context));
    std::unique_ptr<llvm::MCAsmBackend> backend(t->createMCAsmBackend(*sti, *mri, options));
    std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(*stream);
    std::unique_ptr<llvm::MCStreamer> streamer(t->createMCObjectStreamer(
        triple, context, std::move(backend), std::move(writer), std::move(emitter), *sti,
        /*RelaxAll=*/false, /*IncrementalLinkerCompatible=*/false,
        /*DWARFMustBeAtTheEnd=*/false));
    std::unique_ptr<llvm::MCAsmParser> parser(
        llvm::createMCAsmParser(sources, context, *streamer, *mai));
    std::unique_ptr<llvm::MCTargetAsmParser> targetParser(
        t->createMCAsmParser(*sti, *parser, *mii, options));
    if (!targetParser)
        return Error(ErrorCode::Unsupported, "LLVM has no AMDGPU assembly parser");
    parser->setTargetParser(*targetParser);
    bool const failed = parser->Run(/*NoInitialTextSection=*/false);
    // The parsers refer to the streamer: destroying it first corrupts the object's first
    // bytes now and then.
    targetParser.reset();
    parser.reset();
    streamer.reset();
    logStream.flush();
    if (failed || context.hadError()) {
        return Error(ErrorCode::JitFailed, "assembling " + where + " with " + kVersion +
                                               " failed; assembler log:\n" + log);
    }
    return std::string(bytes.data(), bytes.size());
}

Expected<std::string> link(std::string const& object, std::string const& where) {
    // lld keeps global state: one link at a time.
    static std::mutex linkMutex;
    std::lock_guard<std::mutex> lock(linkMutex);
    TemporaryDirectory directory;
    if (directory.path().empty())
        return Error(ErrorCode::InvalidArgument,
                     "cannot create a temporary directory to link " + where);
    std::string const input = (directory.path() / "kernel.o").string();
    std::string const output = (directory.path() / "kernel.co").string();
    {
        std::ofstream file(input, std::ios::binary);
        file.write(object.data(), static_cast<std::streamsize>(object.size()));
        if (!file)
            return Error(ErrorCode::InvalidArgument, "cannot write " + input);
    }
    std::string out, err;
    llvm::raw_string_ostream outStream(out), errStream(err);
    char const* args[] = {"ld.lld",      "-shared", "--no-undefined",
                          input.c_str(), "-o",      output.c_str()};
    bool const ok = lld::elf::link(args, outStream, errStream, /*exitEarly=*/false,
                                   /*disableOutput=*/false);
    lld::CommonLinkerContext::destroy();
    outStream.flush();
    errStream.flush();
    if (!ok)
        return Error(ErrorCode::JitFailed,
                     "linking " + where + " with lld failed; linker log:\n" + err + out);
    std::ifstream file(output, std::ios::binary);
    std::ostringstream image;
    image << file.rdbuf();
    if (!file)
        return Error(ErrorCode::JitFailed, "lld wrote no code object for " + where);
    return image.str();
}

Expected<std::string> assemble(std::string_view source, std::string_view target,
                               std::string_view origin) {
    std::string const where = std::string(origin) + " for " + std::string(target);
    if (target == "gfx942" && !knows("gfx942") && knows("gfx940")) {
        // LLVM 16 predates the gfx942 name but has gfx940, the same CDNA 3 ISA and encodings:
        // assemble for gfx940, then mark the code object as gfx942 (the ELF machine in e_flags
        // and the target id in the metadata note, of the same length).
        std::string text(source);
        replaceAll(text, "amdgcn-amd-amdhsa--gfx942", "amdgcn-amd-amdhsa--gfx940");
        Expected<std::string> object = assembleObject(text, "gfx940", origin, where);
        if (!object.ok())
            return object;
        Expected<std::string> code = link(*object, where);
        if (!code.ok())
            return code;
        return retarget(*code, where);
    }
    Expected<std::string> object = assembleObject(source, target, origin, where);
    if (!object.ok())
        return object;
    return link(*object, where);
}

/// `text` in a malloc'ed buffer for the caller of the C ABI.
int handOver(int status, std::string const& text, char** output, std::size_t* outputSize) {
    *output = static_cast<char*>(std::malloc(text.empty() ? 1 : text.size()));
    if (!*output) {
        *outputSize = 0;
        return kKilnLlvmAssemblerInternal;
    }
    std::memcpy(*output, text.data(), text.size());
    *outputSize = text.size();
    return status;
}

int statusOf(ErrorCode code) {
    switch (code) {
    case ErrorCode::Unsupported:
        return kKilnLlvmAssemblerUnsupported;
    case ErrorCode::JitFailed:
        return kKilnLlvmAssemblerFailed;
    case ErrorCode::InvalidArgument:
        return kKilnLlvmAssemblerNoTemporary;
    default:
        return kKilnLlvmAssemblerInternal;
    }
}

} // namespace
} // namespace kiln::runtime::amd

// The C ABI of LlvmAssemblerPlugin.h; nothing escapes it but status codes and text.
extern "C" {

static char const* kilnLlvmAssemblerVersion() {
    return kiln::runtime::amd::kVersion;
}

static int kilnLlvmAssemblerSupports(char const* target) {
    try {
        return kiln::runtime::amd::supports(target) ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

static int kilnLlvmAssemblerAssemble(char const* source, std::size_t sourceSize, char const* target,
                                     char const* origin, char** output, std::size_t* outputSize) {
    using namespace kiln::runtime::amd;
    try {
        kiln::runtime::Expected<std::string> code =
            assemble(std::string_view(source, sourceSize), target, origin);
        if (code.ok())
            return handOver(kKilnLlvmAssemblerOk, *code, output, outputSize);
        return handOver(statusOf(code.error().code()), code.error().message(), output, outputSize);
    } catch (std::exception const& e) {
        return handOver(kKilnLlvmAssemblerInternal,
                        std::string("the LLVM MC assembler plugin failed: ") + e.what(), output,
                        outputSize);
    } catch (...) {
        return handOver(kKilnLlvmAssemblerInternal,
                        "the LLVM MC assembler plugin failed with an unknown exception", output,
                        outputSize);
    }
}

static void kilnLlvmAssemblerRelease(char* buffer) {
    std::free(buffer);
}

/// The plugin's one exported symbol.
__attribute__((visibility("default"))) KilnLlvmAssembler const* kiln_llvm_assembler_entry() {
    static constexpr KilnLlvmAssembler plugin = {
        kKilnLlvmAssemblerAbiVersion, kilnLlvmAssemblerVersion, kilnLlvmAssemblerSupports,
        kilnLlvmAssemblerAssemble, kilnLlvmAssemblerRelease};
    return &plugin;
}

} // extern "C"
