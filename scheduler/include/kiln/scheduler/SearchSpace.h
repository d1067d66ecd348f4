// SearchSpace.h: the schedules a sweep may try, read from a search space file.
//
// A search space names schedule parameters of a lowering pipeline ($MT_M, $STAGES...), gives
// each a finite domain (a list, an arithmetic range, or the powers of two between two bounds)
// and constrains them with expressions in the rules' language, which may read the target's
// facts (arch.shared_bytes). docs/tuning.md describes the file; scheduler/schema/ has its JSON
// Schema. Every mistake is a UserError at file:line:col with the JSON pointer of the value, and
// inside a constraint at the exact character.
#pragma once

#include "kiln/graph/SourceJson.h"
#include "kiln/rules/Pipeline.h"
#include "kiln/rules/RuleExpression.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::scheduler {

/// The largest domain one parameter may have; larger ones are a user error (a typo in a range).
inline constexpr std::int64_t kMaxDomainSize = 1 << 20;

/// One tunable parameter and the values it may take, in the order the sweep tries them.
struct Parameter {
    std::string name; ///< without the '$'
    std::string doc;
    std::vector<std::int64_t> values;
    JsonValue at; ///< where it is declared, for messages
};

/// One constraint: a rule expression over parameters and arch facts that a point must satisfy.
struct Constraint {
    rules::RuleExpression expression;
    std::string doc;
    /// For each placeholder of the expression: the index of its parameter, or -1 for an arch
    /// fact.
    std::vector<int> parameterOf;
    /// The largest parameter index the constraint reads (-1 when it reads only arch facts): the
    /// solver checks it as soon as that parameter is bound.
    int lastParameter = -1;
    JsonValue at; ///< the expression string, for messages inside it
};

/// A whole search space.
struct SearchSpace {
    std::string name, doc, file;
    std::string pipeline; ///< the pipeline file it is written for, resolved; may be empty
    std::vector<Parameter> parameters;
    std::vector<Constraint> constraints;

    /// The index of parameter `name`, or -1.
    int indexOf(std::string_view name) const;
    /// The number of points before constraints (saturates at INT64_MAX).
    std::int64_t unconstrainedSize() const;
};

/// Parses a search space from `text` read from `file`; `pipeline` paths in it are relative to
/// `file`'s folder.
SearchSpace parseSearchSpace(std::string_view text, std::string const& file);

/// Reads and parses the search space file at `path`.
SearchSpace loadSearchSpace(std::string const& path);

/// Checks that every parameter of `space` is one `pipeline` reads (its defaults or one of its
/// rule sets' parameters); a UserError at the parameter otherwise, with a did-you-mean.
void checkAgainstPipeline(SearchSpace const& space, rules::Pipeline const& pipeline);

} // namespace kiln::scheduler
