// LaunchConfig.cpp: launch extents as text.
#include "kiln/runtime/LaunchConfig.h"

namespace kiln::runtime {

std::string Dim3::toString() const {
    return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}

} // namespace kiln::runtime
