// ArgumentLoader.h: kernel arguments, their kernarg layout, and loading each once.
//
// Arguments sit in the kernarg segment at offsets aligned to their size (pointers 8 bytes);
// the hardware puts the segment's address in s[0:1]. The loader emits the scalar loads of an
// argument the first time it is asked for and hands out the same SGPRs afterwards; loadAll
// loads every argument up front (one stream, so their waits overlap).
#pragma once

#include "kiln/amdgcn/Builder.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::amdgcn {

/// One kernel argument and where it lies in the kernarg segment.
struct KernelArgument {
    std::string name;
    DataType type = DataType::F32; ///< the value's type, or the pointed-to element type
    bool pointer = false;
    int size = 0;   ///< bytes in the segment (8 for a pointer)
    int offset = 0; ///< byte offset in the segment
};

/// Lays out arguments in order, each at an offset aligned to its size.
std::vector<KernelArgument> layoutArguments(std::vector<KernelArgument> arguments);
/// Bytes of the kernarg segment (end of the last argument).
int kernargBytes(std::vector<KernelArgument> const& arguments);

class ArgumentLoader {
public:
    /// Arguments of the kernel whose kernarg address is `segment` (s[0:1]).
    ArgumentLoader(Context& context, Value segment, std::vector<KernelArgument> arguments);

    /// The argument's registers, loading it into `out` the first time: a pointer or i64/f64 in
    /// an SGPR pair, i32/f32 in one SGPR, f16/bf16 widened to f32 (in a VGPR). A UserError for
    /// an unknown name.
    Value load(std::string const& name, Stream& out);
    /// Loads every argument not loaded yet.
    void loadAll(Stream& out);
    /// The argument of this name.
    KernelArgument const& argument(std::string const& name) const;
    std::vector<KernelArgument> const& arguments() const { return arguments_; }

private:
    Context& context_;
    Value segment_;
    std::vector<KernelArgument> arguments_;
    std::map<std::string, Value> loaded_;
};

} // namespace kiln::amdgcn
