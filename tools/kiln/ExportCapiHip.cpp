// The HIP runtime's part of an exported C ABI (ExportCapiDriver.h).
#include "ExportCapiDriver.h"
#include "kiln/graph/Error.h"

namespace kiln::cli {

CapiDriver hipCapiDriver(lowering::EmittedKernel const& kernel, CapiOptions const&) {
    fail("kiln export writes a C ABI for CUDA targets only; {} has none yet", kernel.target);
}

} // namespace kiln::cli
