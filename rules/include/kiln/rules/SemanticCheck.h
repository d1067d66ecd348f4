// SemanticCheck.h: does a rewrite keep the meaning of the kernel?
//
// The direct semantics of the Command give the expected outputs on random inputs once; after
// every rule application the reference interpreter runs the rewritten graph on the same inputs,
// and the first application whose result differs (beyond the types' tolerance) is named. This is
// how every shipped rule is checked, and what `kiln lower --check` does.
#pragma once

#include "kiln/graph/Bindings.h"
#include "kiln/graph/Command.h"
#include "kiln/rules/Rewrite.h"

#include <map>
#include <string>

namespace kiln::rules {

class SemanticCheck {
public:
    SemanticCheck(Command const& command, std::map<std::string, double> const& problem,
                  std::uint64_t seed);

    /// Runs `graph` and compares with the expected outputs; a UserError naming `what` (e.g. the
    /// rule application) when they differ.
    void check(KernelGraph const& graph, std::string const& what) const;

    /// The largest relative error of the last check.
    double lastError() const { return lastError_; }
    /// 1e-2 when the Command stores 16-bit floats, else 1e-5.
    double tolerance() const { return tolerance_; }

private:
    Command const& command_;
    Bindings inputs_, expected_;
    double tolerance_ = 1e-5;
    mutable double lastError_ = 0;
};

} // namespace kiln::rules
