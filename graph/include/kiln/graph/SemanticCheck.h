// SemanticCheck.h: does a KernelGraph still mean what its Command says?
//
// The direct semantics of the Command give the expected outputs on random inputs once; each
// measure() runs the reference interpreter on a graph (translated, or lowered any number of
// steps) with the same inputs and compares every stored tensor. It does so at the problem given
// and at a ragged one, every size a different small prime (23, 19, 17, ...) that no tile or
// vector width divides: a rule that divides with floor where it needs ceildiv passes at
// N = 1024 and fails there. The rule engine checks after every rule application and names the
// first that changes the result; `kiln interp --check` and `kiln demo` check translated and
// lowered graphs.
//
// An element is compared relative to max(|expected|, 1e-2 of the tensor's largest |expected|);
// where it depends on a sum (a Multiply's, or a sum or mean Reduce's) also relative to what a
// correct kernel that adds in another order may miss it by: for a sum of K terms rounded to a
// type of unit roundoff u, gamma_K = K u / (1 - K u) times the sum of the terms' magnitudes
// (Higham's bound, which holds for every order). The magnitudes come from the direct semantics
// run once more on the inputs' magnitudes (|A| x |B| for a GEMM), carried through the rest of
// the chain; the bound weighs them by gamma_K / tolerance, so the reported error stays relative
// and the tolerance stays 1e-5 / 1e-2. Tensors that depend on no sum are held to |expected|.
#pragma once

#include "kiln/graph/Bindings.h"
#include "kiln/graph/Command.h"
#include "kiln/graph/KernelGraph.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln {

class SemanticCheck {
public:
    SemanticCheck(Command const& command, std::map<std::string, double> const& problem,
                  std::uint64_t seed);

    /// Runs `graph` and returns the largest relative error over the stored tensors.
    double measure(KernelGraph const& graph) const;

    /// measure(), then a UserError naming `what` (e.g. a rule application) when the error is
    /// over the tolerance.
    void check(KernelGraph const& graph, std::string const& what) const;

    /// The largest relative error of each stored tensor in the last measure().
    std::map<std::string, double> const& errors() const { return errors_; }
    /// The largest of errors().
    double lastError() const { return lastError_; }
    /// 1e-2 when the Command stores 16-bit floats or computes them (Execute, Multiply, Reduce),
    /// else 1e-5.
    double tolerance() const { return tolerance_; }

    /// The problems checked: the one given, then the ragged one (where it differs).
    std::vector<std::map<std::string, double>> problems() const;

private:
    struct Case {
        std::map<std::string, double> problem;
        Bindings inputs, expected;
        /// The direct semantics on the inputs' magnitudes (its stored tensors only).
        Bindings magnitudes;
        /// gamma_K of the longest sum, over the tolerance: the weight of a magnitude (0: the
        /// Command sums nothing).
        double sumWeight = 0;
    };
    double measure(KernelGraph const& graph, Case const& c) const;

    Command const& command_;
    std::vector<Case> cases_;
    double tolerance_ = 1e-5;
    /// The stored tensors whose values depend on a sum.
    std::set<std::string> summed_;
    mutable std::map<std::string, double> errors_;
    mutable double lastError_ = 0;
};

} // namespace kiln
