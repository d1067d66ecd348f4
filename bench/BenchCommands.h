// BenchCommands.h: the Commands the benchmarks run: the examples, and a chain of element-wise
// operations long enough to make a large graph.
#pragma once

#include "kiln/graph/Command.h"
#include "kiln/graph/CommandJson.h"

#include <string>

namespace kiln::bench {

/// examples/NAME.json.
inline Command example(std::string const& name) {
    return loadCommand(std::string(KILN_SOURCE_DIR) + "/examples/" + name + ".json");
}

/// A chain of `links` element-wise operations over Linear values: two graph nodes per link.
inline Command chain(int links) {
    Command c("chain");
    auto n = c.size("N");
    c.tensor("X", DataType::F32, {n}).tensor("Y", DataType::F32, {n});
    std::string const x = c.loadLinear("X");
    std::string last = x;
    for (int i = 0; i < links; ++i)
        last = c.execute(last + " * 0.5 + " + x);
    c.storeLinear("Y", last);
    return c;
}

} // namespace kiln::bench
