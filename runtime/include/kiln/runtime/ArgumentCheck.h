// ArgumentCheck.h: launch arguments checked against a kernel's manifest and against the
// parameter layout the driver reports for the loaded code.
//
// Three sources must agree: the C++ argument types (TypedKernel or KernelArguments), the
// manifest codegen wrote, and the loaded code itself (cuFuncGetParamInfo, CUDA 12.4+; the code
// object's metadata note on HIP). Each mismatch is an ArgumentMismatch naming the parameter by
// index and name, e.g. "parameter 2 'alpha' is f32 (4 bytes) but the launch passes a double (8
// bytes)".
#pragma once

#include "kiln/runtime/KernelArgument.h"
#include "kiln/runtime/KernelAttributes.h"
#include "kiln/runtime/KernelManifest.h"
#include "kiln/runtime/Status.h"

#include <span>
#include <string_view>
#include <vector>

namespace kiln::runtime {

/// The byte offset of each argument in the parameter buffer (each aligned to its alignment).
std::vector<std::size_t> argumentOffsets(std::span<ArgumentDescriptor const> arguments);

/// Checks the arguments against the manifest: count, pointer vs value, type, size and offset.
Status checkArguments(std::string_view kernelName, KernelManifest const& manifest,
                      std::span<ArgumentDescriptor const> arguments);

/// Checks the arguments against the parameter layout of the loaded code: count, size, offset.
Status checkArguments(std::string_view kernelName, std::span<ParameterLayout const> layout,
                      std::span<ArgumentDescriptor const> arguments);

/// Checks the manifest against the parameter layout of the loaded code: count, size, offset.
Status checkManifestLayout(std::string_view kernelName, KernelManifest const& manifest,
                           std::span<ParameterLayout const> layout);

} // namespace kiln::runtime
