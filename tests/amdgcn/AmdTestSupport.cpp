// AmdTestSupport.cpp: assembler, llvm-objdump-16 and llvm-readelf-16 for the tests.
#include "AmdTestSupport.h"

#include "../GoldenFile.h"
#include "kiln/runtime/Assembler.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace kiln::amdgcn::test {

namespace {
std::string run(std::string const& command) {
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe)
        return out;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
        out.append(buffer, n);
    pclose(pipe);
    return out;
}

std::string writeTemporary(std::string const& bytes) {
    std::string path = (std::filesystem::temp_directory_path() / "kiln-amd-XXXXXX").string();
    int fd = mkstemp(path.data());
    if (fd < 0)
        return {};
    close(fd);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}
} // namespace

std::string assemble(std::string const& source, std::string const& target, std::string& why) {
    auto assembler = runtime::assemblerFor(target);
    if (!assembler.ok()) {
        why = assembler.error().message();
        return {};
    }
    auto code = (*assembler)->assemble(source, target, "test.s");
    if (!code.ok()) {
        ADD_FAILURE() << code.error().message();
        why = "assembly failed";
        return {};
    }
    return *code;
}

std::string normalize(std::string line) {
    // Trailing comments (objdump's encodings), then the mnemonic's encoding suffix.
    if (auto c = line.find("//"); c != std::string::npos)
        line.erase(c);
    static std::regex const spaces("\\s+"), ends("^ | $"), suffix("^(\\S+)_e(32|64)\\b"),
        nullOffset("^(s_load_\\S+ .*), null$"), hex("0x([0-9a-fA-F]+)");
    line = std::regex_replace(line, spaces, " ");
    line = std::regex_replace(line, ends, "");
    line = std::regex_replace(line, suffix, "$1");
    // GFX11 prints a zero scalar-load offset as the null register.
    line = std::regex_replace(line, nullOffset, "$1, 0");
    std::smatch m;
    std::string out;
    std::string rest = line;
    while (std::regex_search(rest, m, hex)) {
        out += m.prefix().str() + std::to_string(std::stoull(m[1].str(), nullptr, 16));
        rest = m.suffix().str();
    }
    return out + rest;
}

std::vector<std::string> instructionsOf(std::string const& assembly) {
    std::vector<std::string> out;
    std::istringstream in(assembly);
    std::string line;
    bool inText = false;
    while (std::getline(in, line)) {
        std::string const t = normalize(line);
        if (t == ".text") {
            inText = true;
            continue;
        }
        if (t.starts_with(".rodata") || t.starts_with(".amdhsa_kernel"))
            inText = false;
        if (!inText || t.empty() || t[0] == '.' || t.ends_with(":"))
            continue;
        out.push_back(t);
    }
    return out;
}

std::vector<std::pair<std::uint64_t, std::string>>
disassembleWithAddresses(std::string const& codeObject, std::string const& target,
                         std::string& why) {
    if (std::string(KILN_LLVM_OBJDUMP).empty() ||
        std::string(KILN_LLVM_OBJDUMP).ends_with("NOTFOUND")) {
        why = "llvm-objdump-16 not found (install llvm-16)";
        return {};
    }
    std::string code = codeObject;
    if (target == "gfx942" && code.size() > 52 && static_cast<unsigned char>(code[48]) == 0x4c)
        code[48] = 0x40; // back to gfx940's EF_AMDGPU_MACH, which llvm-objdump-16 knows
    std::string const path = writeTemporary(code);
    // llvm-objdump-16 predates the gfx942 name; gfx940 has the same encodings.
    std::string const mcpu = target == "gfx942" ? "gfx940" : target;
    std::string const text =
        run(std::string(KILN_LLVM_OBJDUMP) + " -d --mcpu=" + mcpu + " " + path);
    std::filesystem::remove(path);
    std::vector<std::pair<std::uint64_t, std::string>> out;
    std::istringstream in(text);
    std::string line;
    std::regex const address("// ([0-9a-fA-F]+):");
    while (std::getline(in, line)) {
        if (line.empty() || line[0] != '\t')
            continue; // instructions are indented by a tab
        std::string const t = normalize(line);
        if (t.empty() || t == "...") // "..." stands for skipped zero padding
            continue;
        std::smatch m;
        std::uint64_t const at =
            std::regex_search(line, m, address) ? std::stoull(m[1].str(), nullptr, 16) : UINT64_MAX;
        out.emplace_back(at, t);
    }
    return out;
}

std::vector<std::string> disassemble(std::string const& codeObject, std::string const& target,
                                     std::string& why) {
    std::vector<std::string> out;
    for (auto const& [at, instruction] : disassembleWithAddresses(codeObject, target, why))
        out.push_back(instruction);
    return out;
}

void expectSameInstructions(std::vector<std::string> const& disassembled,
                            std::vector<std::string> const& source) {
    std::size_t const n = std::min(disassembled.size(), source.size());
    for (std::size_t k = 0; k < n; ++k) {
        if (disassembled[k] != source[k]) {
            ADD_FAILURE() << "instruction " << k << " disassembles as '" << disassembled[k]
                          << "' but the source says '" << source[k] << "'";
            return;
        }
    }
    EXPECT_EQ(disassembled.size(), source.size()) << "instruction counts differ";
}

namespace {
/// For each label of the text section, the index of the instruction after it (in the order of
/// instructionsOf).
std::map<std::string, std::size_t> labelsOf(std::string const& assembly) {
    std::map<std::string, std::size_t> out;
    std::istringstream in(assembly);
    std::string line;
    std::size_t next = 0;
    bool inText = false;
    while (std::getline(in, line)) {
        std::string const t = normalize(line);
        if (t == ".text")
            inText = true;
        else if (t.starts_with(".rodata"))
            inText = false;
        else if (inText && t.ends_with(":"))
            out[t.substr(0, t.size() - 1)] = next;
        else if (inText && !t.empty() && t[0] != '.')
            ++next;
    }
    return out;
}

} // namespace

int checkLongBranches(std::string const& assembly, std::string const& target, std::string& why) {
    std::string const code = assemble(assembly, target, why);
    if (code.empty())
        return -1;
    auto const back = disassembleWithAddresses(code, target, why);
    if (back.empty())
        return -1;
    std::vector<std::string> const source = instructionsOf(assembly);
    EXPECT_EQ(back.size(), source.size());
    if (back.size() != source.size())
        return 0;
    auto mnemonic = [](std::string const& s) { return s.substr(0, s.find(' ')); };
    for (std::size_t k = 0; k < source.size(); ++k) {
        bool const namesLabel = source[k].find(".L") != std::string::npos;
        if (namesLabel ? mnemonic(back[k].second) != mnemonic(source[k])
                       : back[k].second != source[k]) {
            ADD_FAILURE() << "instruction " << k << " disassembles as '" << back[k].second
                          << "' but the source says '" << source[k] << "'";
            return 0;
        }
    }
    std::map<std::string, std::size_t> const labels = labelsOf(assembly);
    int followed = 0;
    for (std::size_t k = 0; k + 3 < source.size(); ++k) {
        if (!source[k].starts_with("s_getpc_b64"))
            continue;
        // s_add_u32 sN, sN, (TARGET-.Lpost)&4294967295 / s_addc_u32 sN+1, sN+1, HIGH
        std::string const add = source[k + 1];
        std::string const label = add.substr(add.find('(') + 1, add.find('-') - add.find('(') - 1);
        EXPECT_TRUE(labels.count(label)) << add;
        EXPECT_TRUE(mnemonic(back[k + 1].second) == "s_add_u32" &&
                    mnemonic(back[k + 2].second) == "s_addc_u32" &&
                    mnemonic(back[k + 3].second) == "s_setpc_b64");
        auto lastNumber = [](std::string const& s) {
            return std::stoll(s.substr(s.rfind(' ') + 1));
        };
        auto const low = static_cast<std::uint32_t>(lastNumber(back[k + 1].second));
        auto const high = static_cast<std::uint32_t>(lastNumber(back[k + 2].second));
        auto const offset =
            static_cast<std::int64_t>((static_cast<std::uint64_t>(high) << 32) | low);
        // s_getpc_b64 gives the address of the instruction after it.
        std::uint64_t const lands = back[k].first + 4 + static_cast<std::uint64_t>(offset);
        EXPECT_EQ(lands, back[labels.at(label)].first) << "the long branch to " << label;
        ++followed;
    }
    return followed;
}

std::string metadataNote(std::string const& codeObject, std::string& why) {
    if (std::string(KILN_LLVM_READELF).empty() ||
        std::string(KILN_LLVM_READELF).ends_with("NOTFOUND")) {
        why = "llvm-readelf-16 not found (install llvm-16)";
        return {};
    }
    std::string const path = writeTemporary(codeObject);
    std::string const text = run(std::string(KILN_LLVM_READELF) + " --notes " + path);
    std::filesystem::remove(path);
    return text;
}

void expectGolden(std::string const& name, std::string const& text) {
    kiln::test::expectGoldenFile("tests/amdgcn/golden/" + name, text);
}

Context makeContext(std::string const& target) {
    return Context(Target::named(target), "test", {.checkReads = false});
}

} // namespace kiln::amdgcn::test

#include "kiln/amdgcn/AssemblyKernel.h"
#include "kiln/amdgcn/ExpressionGenerator.h"
#include "kiln/amdgcn/MemoryInstructions.h"

namespace kiln::amdgcn::test {

TestKernel elementwiseKernel(std::string const& target, std::string const& name, DataType type,
                             std::function<ExprPtr(ExprPtr, ExprPtr)> const& body, int count,
                             SchedulerKind scheduler, std::uint64_t seed) {
    Context context(Target::named(target), name);
    KernelSpec spec;
    spec.arguments = layoutArguments({{"A", type, true}, {"B", type, true}, {"Out", type, true}});
    spec.block = {64, 1, 1};
    spec.grid = {"ceildiv(N, " + std::to_string(64 * count) + ")", "1", "1"};
    AssemblyKernel kernel(context, spec);
    EntryRegisters const entry = kernel.prologue();
    ArgumentLoader arguments(context, entry.kernarg, spec.arguments);

    Stream setup;
    Builder b(context, setup);
    Value const a = arguments.load("A", setup);
    Value const bb = arguments.load("B", setup);
    Value const out = arguments.load("Out", setup);
    // Byte offset of this workitem's first element: (wg * 64 * count + tid) * size.
    int const size = sizeInBytes(type);
    Value const base = b.newScalar(DataType::I32, "the workgroup's first element");
    b.op("s_mul_i32", {base}, {*entry.workgroupId[0], Value::literal(64 * count)});
    Value const element = b.newVector(DataType::I32, "the element index");
    b.op("v_add_u32", {element}, {base, entry.workitemIds});
    Value const offset = b.newVector(DataType::I32, "the byte offset");
    int shift = 0;
    while ((1 << shift) < size)
        ++shift;
    b.op("v_lshlrev_b32", {offset}, {Value::literal(shift), element});
    context.schedule(setup);

    std::vector<Stream> streams(static_cast<std::size_t>(count));
    for (int k = 0; k < count; ++k) {
        Stream& s = streams[static_cast<std::size_t>(k)];
        Builder sb(context, s);
        MemoryInstructions memory(sb);
        int const at = k * 64 * size;
        std::map<std::string, Value> values;
        values.emplace("a", memory.loadGlobalValue(offset, a, type, at));
        values.emplace("b", memory.loadGlobalValue(offset, bb, type, at));
        Leaves leaves;
        leaves.argument = [&](expr::Argument const& arg) { return values.at(arg.name); };
        ExpressionGenerator generator(sb, leaves);
        ExprPtr const e = body(argument("a", type), argument("b", type));
        Value const result = generator.convert(generator.generate(e), resultType(*e), type);
        memory.storeGlobalValue(offset, out, result, type, at);
    }
    scheduleStreams(context, std::move(streams), scheduler, seed);
    TestKernel result;
    result.assembly = kernel.assembly();
    result.manifest = kernel.manifestJson();
    result.vgprs = kernel.vgprCount();
    result.sgprs = kernel.sgprCount();
    return result;
}

} // namespace kiln::amdgcn::test
