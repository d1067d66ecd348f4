// RuleTemplate.h: rule templates, so that a family of near-identical rules is written once.
//
// A rule with a "for_each" table is a template: it stands for one rule per instance of the
// table, in the table's order, written where the template is. Each axis of the table lists
// rows of placeholder values ({"ROLE": "lhs", "TENSOR": "A"}, or plain values that bind the
// axis's own name); the instances are every combination of one row per axis, the first axis
// outermost. In the rule, "{ROLE}" inside a string or a key becomes the row's text, a string
// that is exactly "{ORDER}" becomes the row's value whatever its type, and a member or element
// whose value is a placeholder bound to null is left out. In the strategy, the template's name
// as written ("stage-{ROLE}") stands for its instances' names.
//
// Expansion is data to data, before the rule reader runs, so that the matcher, the rewriter
// and the engine never see a template; `kiln rules expand` prints its result. It is bounded
// (kMaxTemplateInstances, kMaxExpandedSize) and not recursive: a value from a table is written
// as it is. Every mistake is located in the text the user wrote, and an error the rule reader
// finds in an instance is moved back to the template's text and names the instance
// ("in instance ROLE=rhs of rule 'stage-{ROLE}'"). docs/rules.md, "Templates", shows one.
#pragma once

#include "kiln/graph/SourceJson.h"

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::rules {

/// The most instances one template may have (the product of its axes' rows).
inline constexpr std::size_t kMaxTemplateInstances = 256;
/// The most a rule set's expansion may write: JSON values plus bytes of strings and keys.
inline constexpr std::size_t kMaxExpandedSize = std::size_t{1} << 20;

/// A rule set with its templates expanded, and the way back from each expanded value to the
/// text the user wrote.
class ExpandedRuleSet {
public:
    /// Where one expanded value came from.
    struct Origin {
        std::string pointer; ///< its JSON pointer in the file the user wrote
        int instance = -1;   ///< index into instances(), or -1 outside any instance
    };
    /// A string that placeholders changed: how its offsets map back to the written string.
    struct Substitution {
        struct Piece {
            std::size_t expandedBegin, expandedEnd; ///< the value written, in the expansion
            std::size_t writtenBegin, writtenEnd;   ///< the placeholder, in the written string
        };
        std::vector<Piece> pieces; ///< one per placeholder, in order
        SourcePosition written;    ///< the written string's opening quote
        std::size_t literal = 0;   ///< where the expanded text lies in the document's text
    };

    ExpandedRuleSet(JsonValue written, std::optional<JsonValue> expanded,
                    std::map<std::string, Origin> origins,
                    std::map<std::string, Substitution> substitutions,
                    std::vector<std::string> instances);

    /// Whether the file has templates; without, root() is the file as written.
    bool hasTemplates() const { return expanded_.has_value(); }
    /// The rule set to read: every value carries the line and column of the text it came from.
    JsonValue const& root() const { return expanded_ ? *expanded_ : written_; }
    /// "ROLE=rhs of rule 'stage-{ROLE}'" for each instance, in expansion order.
    std::vector<std::string> const& instances() const { return instances_; }

    /// `at` (a location in root()) as a location in the written file: the pointer of the text
    /// the value came from, and for a column inside a changed string, the column of that text.
    SourceLocation source(SourceLocation const& at) const;
    /// `error` (found in root()) located in the written file, naming the instance it is in.
    UserError relocate(UserError const& error) const;

private:
    Origin const* originOf(std::string const& pointer, std::string& rest) const;

    JsonValue written_;
    std::optional<JsonValue> expanded_;
    std::map<std::string, Origin> origins_;
    std::map<std::string, Substitution> substitutions_;
    std::vector<std::string> instances_;
};

/// Expands the templates of the rule set `written` (a file's root). Throws a UserError located
/// in `written` for a bad table, an unknown or unused placeholder, a value that cannot stand
/// where it is put, two rules of the same name made by templates, or an expansion past its
/// bounds. A root that is no rule set is returned as it is, for the reader to reject.
ExpandedRuleSet expandRuleTemplates(JsonValue const& written);

} // namespace kiln::rules
