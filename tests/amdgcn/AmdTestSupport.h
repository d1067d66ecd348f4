// AmdTestSupport.h: assembling, disassembling and reading the notes of AMDGCN code in tests.
#pragma once

#include "kiln/amdgcn/Context.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::amdgcn::test {

/// The AMD targets every kernel is checked on.
inline std::vector<std::string> const kTargets = {"gfx90a", "gfx942", "gfx1100"};

/// The code object for `source`, or a message saying why there is none (in `why`).
std::string assemble(std::string const& source, std::string const& target, std::string& why);
/// The instructions of the text section of a code object, as llvm-objdump-16 prints them,
/// normalized (see normalize); empty with `why` set when llvm-objdump-16 is missing.
std::vector<std::string> disassemble(std::string const& codeObject, std::string const& target,
                                     std::string& why);
/// The same instructions, each with its byte address in the text section (from
/// llvm-objdump-16's encoding comments); empty with `why` set when llvm-objdump-16 is missing.
std::vector<std::pair<std::uint64_t, std::string>>
disassembleWithAddresses(std::string const& codeObject, std::string const& target,
                         std::string& why);
/// The instructions of assembly text (labels, directives, comments and blank lines dropped),
/// normalized.
std::vector<std::string> instructionsOf(std::string const& assembly);
/// One instruction in a comparable form: _e32/_e64 suffixes dropped, spaces collapsed,
/// hexadecimal immediates as decimal.
std::string normalize(std::string line);
/// Fails naming the first instruction where the disassembly differs from the source.
void expectSameInstructions(std::vector<std::string> const& disassembled,
                            std::vector<std::string> const& source);
/// Assembles `assembly` for `target`, disassembles it and checks that it reads back as the
/// source (operands naming labels aside) and that every long branch (s_getpc_b64 / s_add_u32 /
/// s_addc_u32 / s_setpc_b64) lands on the instruction after its label; returns how many long
/// branches it followed, or -1 with `why` set where no assembler or disassembler is installed.
int checkLongBranches(std::string const& assembly, std::string const& target, std::string& why);
/// The AMDGPU metadata note as llvm-readelf-16 prints it.
std::string metadataNote(std::string const& codeObject, std::string& why);
/// A golden file under tests/amdgcn/golden: compared, or written with KILN_UPDATE_GOLDEN=1.
void expectGolden(std::string const& name, std::string const& text);

/// A context for `target` with the kernel name "test", for hand-built streams (reads of
/// registers nothing wrote are allowed).
Context makeContext(std::string const& target);

} // namespace kiln::amdgcn::test

#include "kiln/amdgcn/Scheduler.h"
#include "kiln/graph/Expression.h"

#include <functional>

namespace kiln::amdgcn::test {

/// A test kernel and what it was made of.
struct TestKernel {
    std::string assembly;
    std::string manifest;
    int vgprs = 0, sgprs = 0;
};

/// out[i] = body(a[i], b[i]) over `count` elements per workitem (each its own stream, scheduled
/// by `scheduler`), 64 workitems per workgroup, elements of `type`; `a` and `b` are the
/// Arguments "a" and "b" of `type`.
TestKernel elementwiseKernel(std::string const& target, std::string const& name, DataType type,
                             std::function<ExprPtr(ExprPtr, ExprPtr)> const& body, int count = 1,
                             SchedulerKind scheduler = SchedulerKind::Sequential,
                             std::uint64_t seed = 0);

} // namespace kiln::amdgcn::test
