#include "Output.h"

#include "kiln/graph/Error.h"

#include <fstream>

namespace kiln::cli {

void writeFile(std::string const& path, std::string const& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out)
        fail("cannot write '{}'", path);
}

} // namespace kiln::cli
