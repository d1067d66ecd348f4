// CommandFacts.h: what `command.NAME` means in a search space's constraint: a fact of the
// Command being tuned, so that a space shared by several Commands can say which of its
// parameters apply to which (normalization.space.json: ONLINE=1 only where there is a softmax's
// max and sum of exp(x - max), or a mean and variance, to compute in one pass).
//
// The facts are counts read from the Command's translated graph, by what it computes:
//   command.max_exp_sums    the max-then-exp-sum pairs ONLINE=1 computes in one pass
//                           (lowering/OnlineSoftmax.h): 1 for a softmax, 0 for a layer norm.
//   command.mean_variances  the mean-then-variance pairs ONLINE=1 computes in one pass
//                           (lowering/MeanVariance.h): 1 for a layer norm, 0 for a softmax
//                           and an RMS norm.
// The solver resolves them once, as it does arch facts; an unknown name is an error at its
// character in the constraint, and a constraint that reads one needs a Command (kiln tune gives
// it).
#pragma once

#include "kiln/graph/Command.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::scheduler {

/// A fact of one Command by name; nothing where there is no such fact.
using CommandFacts = std::function<std::optional<std::int64_t>(std::string const&)>;

/// The facts of `command`, computed once.
CommandFacts commandFacts(Command const& command);

/// The names `command.NAME` may take, in order, for messages.
std::vector<std::string> commandFactNames();

} // namespace kiln::scheduler
