#include "kiln/rules/Engine.h"

#include "kiln/graph/GraphText.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fmt/format.h>
#include <functional>
#include <set>

namespace kiln::rules {

std::string_view name(Strategy::Kind kind) {
    static constexpr std::string_view names[] = {"once", "fixpoint", "first",
                                                 "seq",  "repeat",   "try"};
    return names[static_cast<int>(kind)];
}

std::string_view name(StopReason reason) {
    static constexpr std::string_view names[] = {"saturated", "done", "recovered"};
    return names[static_cast<int>(reason)];
}

namespace {

// The graph's text with ids renumbered by rank, so that a graph rebuilt with new ids (a rule
// removing what another added) hashes as the graph it equals.
std::size_t canonicalHash(KernelGraph const& graph) {
    std::string const text = toText(graph);
    std::vector<Id> ids = graph.coordinates.elements();
    auto const ops = graph.control.elements();
    ids.insert(ids.end(), ops.begin(), ops.end());
    std::sort(ids.begin(), ids.end());
    std::string canonical;
    canonical.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        canonical += text[i];
        if (text[i] != '#' || i + 1 >= text.size() ||
            !std::isdigit(static_cast<unsigned char>(text[i + 1])))
            continue;
        std::size_t j = i + 1;
        Id id = 0;
        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
            id = id * 10 + (text[j++] - '0');
        auto rank = std::lower_bound(ids.begin(), ids.end(), id);
        canonical += std::to_string(rank != ids.end() && *rank == id ? rank - ids.begin() : -1);
        i = j - 1;
    }
    return std::hash<std::string>{}(canonical);
}

RuleContext contextFor(KernelGraph const& graph, Match const& match, RuleContext const& base) {
    RuleContext c = base;
    c.graph = &graph;
    c.nodes = &match.elements;
    c.lists = &match.lists;
    return c;
}

// Whether the node guards and the rule guard hold at `match`; `reason` says which failed.
bool guardsHold(Rule const& rule, KernelGraph const& graph, Match const& match,
                RuleContext const& base, std::string* reason, std::string* guardText) {
    RuleContext const c = contextFor(graph, match, base);
    auto check = [&](RuleExpression const& e, std::string const& what) {
        GuardValue g;
        try {
            g = evaluateGuard(e, c);
        } catch (UserError const& error) {
            throw UserError(fmt::format("rule '{}': {}", rule.name, error.message()), rule.at);
        }
        if (guardText)
            *guardText = g.value;
        if (g.holds && g.decided)
            return true;
        if (reason)
            *reason = g.decided ? fmt::format("{} '{}' is false ({})", what, e.text, g.value)
                                : fmt::format("{} '{}' cannot be decided before launch ({})", what,
                                              e.text, g.value);
        return false;
    };
    for (auto const& n : rule.match.nodes)
        if (n.where && !check(*n.where, fmt::format("the guard of '{}'", n.variable)))
            return false;
    return !rule.where || check(*rule.where, "the guard");
}

// The first acceptable match of `rule`, with a matcher already indexed for `graph`.
std::optional<Match> firstMatch(Rule const& rule, Matcher& matcher, KernelGraph const& graph,
                                RuleContext const& context) {
    std::optional<Match> found;
    matcher.forEach(rule.match, [&](Match const& m) {
        if (!guardsHold(rule, graph, m, context, nullptr, nullptr))
            return false;
        for (auto const& negative : rule.match.negatives)
            if (matcher.exists(negative, m))
                return false;
        found = m;
        return true;
    });
    return found;
}

class Driver {
public:
    Driver(RuleSet const& rules, KernelGraph& graph, EngineOptions const& options)
        : rules_(rules)
        , graph_(graph)
        , options_(options)
        , limits_(options.limits)
        , spent_(options.spent) {
        if (!spent_.start)
            spent_.start = std::chrono::steady_clock::now();
        deadline_ = deadline(*spent_.start, limits_);
        parameters_ = parameterValues(rules, options.parameters);
        base_.parameters = &parameters_;
        base_.arch = options.arch;
    }

    ApplyResult run() {
        ApplyResult result;
        result.reason = execute(rules_.strategy);
        result.applications = applications_;
        dropMatcher();
        result.spent = spent_;
        return result;
    }

private:
    std::vector<Rule const*> select(Strategy const& s) const {
        std::vector<Rule const*> chosen;
        if (s.rules.empty())
            for (auto const& r : rules_.rules)
                chosen.push_back(&r);
        else
            for (auto const& n : s.rules)
                chosen.push_back(rules_.find(n));
        // Highest priority first; file order among equals.
        std::stable_sort(chosen.begin(), chosen.end(),
                         [](Rule const* a, Rule const* b) { return a->priority > b->priority; });
        return chosen;
    }

    // The limit `limit` reached while `s` ran, applying `rule` if there is one.
    [[noreturn]] void overLimit(Limit limit, Strategy const& s, Rule const* rule) const {
        std::string const where = rule ? fmt::format("while its {} strategy was applying rule '{}'",
                                                     name(s.kind), rule->name)
                                       : fmt::format("while running its {} strategy", name(s.kind));
        throw LimitError(limit,
                         fmt::format("rule set '{}' reached the lowering's limit of {} {}",
                                     rules_.name, describe(limit, limits_), where),
                         s.at);
    }

    // One more strategy step (`s` running, or `rule` tried under it), within the limits.
    void step(Strategy const& s, Rule const* rule) {
        if (++spent_.steps > limits_.steps)
            overLimit(Limit::Steps, s, rule);
        if (std::chrono::steady_clock::now() > deadline_)
            overLimit(Limit::Time, s, rule);
    }

    // Forgets the matcher's index of the graph, counting the candidates it tried.
    void dropMatcher() {
        if (matcher_)
            spent_.candidates += matcher_->candidatesTried();
        matcher_.reset();
    }

    // Applies the first match of `rule`, if any; returns whether it did.
    bool applyOnce(Strategy const& s, Rule const& rule) {
        step(s, &rule);
        // One index of the graph serves every rule tried until the graph changes.
        if (!matcher_) {
            matcher_.emplace(graph_);
            matcher_->setBudget(limits_.candidates - spent_.candidates, deadline_);
        }
        std::optional<Match> match;
        try {
            match = firstMatch(rule, *matcher_, graph_, base_);
        } catch (Matcher::OverBudget const& over) {
            overLimit(over.limit, s, &rule);
        }
        if (!match)
            return false;
        dropMatcher();
        if (spent_.applications >= limits_.applications)
            overLimit(Limit::Applications, s, &rule);
        std::string guard;
        guardsHold(rule, graph_, *match, base_, nullptr, &guard);
        Application application = applyRewrite(rule, *match, graph_, base_, ++applications_);
        ++spent_.applications;
        application.ruleset = rules_.name;
        application.guard = guard;
        if (options_.observe) {
            auto const before = std::chrono::steady_clock::now();
            options_.observe(application, graph_);
            excuse(std::chrono::steady_clock::now() - before);
        }
        return true;
    }

    // Time the lowering's observers took is the caller's, not the rule set's (the semantic
    // check runs the interpreter after every application, for as long as the problem it was
    // given takes): the wall-time limit moves past it.
    void excuse(std::chrono::steady_clock::duration taken) {
        *spent_.start += taken;
        deadline_ = deadline(*spent_.start, limits_);
    }

    StopReason execute(Strategy const& s) {
        switch (s.kind) {
        case Strategy::Kind::Once:
            for (Rule const* r : select(s))
                applyOnce(s, *r);
            return StopReason::Done;
        case Strategy::Kind::First:
            for (Rule const* r : select(s))
                if (applyOnce(s, *r))
                    break;
            return StopReason::Done;
        case Strategy::Kind::Fixpoint:
            return fixpoint(s);
        case Strategy::Kind::Seq:
            step(s, nullptr);
            for (auto const& child : s.children)
                execute(child);
            return StopReason::Done;
        case Strategy::Kind::Repeat:
            for (std::int64_t i = 0; i < s.times; ++i) {
                step(s, nullptr);
                for (auto const& child : s.children)
                    execute(child);
            }
            return StopReason::Done;
        case Strategy::Kind::Try: {
            step(s, nullptr);
            KernelGraph const saved = graph_;
            std::int64_t const savedApplications = applications_;
            try {
                for (auto const& child : s.children)
                    execute(child);
                return StopReason::Done;
            } catch (LimitError const&) {
                throw; // the lowering's limits bound the failed attempt too
            } catch (UserError const&) {
                dropMatcher();
                graph_ = saved;
                applications_ = savedApplications;
                return StopReason::Recovered;
            }
        }
        }
        return StopReason::Done;
    }

    StopReason fixpoint(Strategy const& s) {
        auto const rules = select(s);
        std::set<std::size_t> seen{canonicalHash(graph_)};
        std::map<std::string, std::int64_t> firedHere;
        for (std::int64_t count = 0;; ++count) {
            Rule const* applied = nullptr;
            for (Rule const* r : rules)
                if (applyOnce(s, *r)) {
                    applied = r;
                    break;
                }
            if (!applied)
                return StopReason::Saturated;
            ++firedHere[applied->name];
            if (count + 1 >= s.budget)
                throw UserError(
                    fmt::format("rule set '{}' did not reach a fixpoint within its budget of {} "
                                "applications; rules that kept firing: {}",
                                rules_.name, s.budget, describeFiring(firedHere)),
                    s.at);
            if (!seen.insert(canonicalHash(graph_)).second)
                throw UserError(
                    fmt::format("rule set '{}' came back to a graph it had already produced after "
                                "{} applications, so its fixpoint would never end; rules that "
                                "kept firing: {}",
                                rules_.name, count + 1, describeFiring(firedHere)),
                    s.at);
        }
    }

    static std::string describeFiring(std::map<std::string, std::int64_t> const& fired) {
        std::vector<std::pair<std::int64_t, std::string>> order;
        for (auto const& [rule, n] : fired)
            order.emplace_back(-n, rule);
        std::sort(order.begin(), order.end());
        std::string out;
        for (auto const& [n, rule] : order)
            out += fmt::format("{}{} ({}x)", out.empty() ? "" : ", ", rule, -n);
        return out;
    }

    RuleSet const& rules_;
    KernelGraph& graph_;
    EngineOptions const& options_;
    Limits const limits_;
    Usage spent_;
    std::chrono::steady_clock::time_point deadline_;
    std::map<std::string, std::int64_t> parameters_;
    RuleContext base_;
    std::int64_t applications_ = 0;
    std::optional<Matcher> matcher_; ///< indexes graph_ as it is now; reset when it changes
};

} // namespace

std::map<std::string, std::int64_t>
parameterValues(RuleSet const& rules, std::map<std::string, std::int64_t> const& given) {
    std::map<std::string, std::int64_t> values;
    for (auto const& p : rules.parameters) {
        if (auto it = given.find(p.name); it != given.end())
            values[p.name] = it->second;
        else if (p.fallback)
            values[p.name] = *p.fallback;
        else
            fail("rule set '{}' needs parameter ${} (give it with --params {}=...)", rules.name,
                 p.name, p.name);
    }
    // Before anything is applied: a value the rules cannot use is the user's error, at the
    // condition it breaks, not a graph that the next step cannot lower.
    RuleContext const context{.parameters = &values};
    for (auto const& p : rules.parameters) {
        if (!p.valid)
            continue;
        GuardValue const g = evaluateGuard(*p.valid, context);
        if (!g.decided || !g.holds)
            throw UserError(fmt::format("rule set '{}': {} = {} is not valid: it needs {}{}",
                                        rules.name, p.name, values.at(p.name), p.valid->text,
                                        p.doc.empty() ? "" : " (" + p.doc + ")"),
                            p.validAt);
    }
    return values;
}

std::optional<Match> findMatch(Rule const& rule, KernelGraph const& graph,
                               RuleContext const& context, std::int64_t* candidates) {
    Matcher matcher(graph);
    std::optional<Match> found = firstMatch(rule, matcher, graph, context);
    if (candidates)
        *candidates += matcher.candidatesTried();
    return found;
}

std::string whyNot(Rule const& rule, KernelGraph const& graph, std::string const& variable, Id at,
                   RuleContext const& context) {
    Matcher matcher(graph);
    std::string structural = matcher.explain(rule.match, variable, at);
    if (!structural.empty())
        return structural;
    // It matches structurally: find which guard or negative pattern rejects every match there.
    std::string reason;
    Match seed;
    seed.elements[variable] = at;
    bool accepted = matcher.forEach(
        rule.match,
        [&](Match const& m) {
            if (!guardsHold(rule, graph, m, context, &reason, nullptr))
                return false;
            for (std::size_t k = 0; k < rule.match.negatives.size(); ++k)
                if (matcher.exists(rule.match.negatives[k], m)) {
                    reason = fmt::format("negative pattern {} ('not' entry {}) exists", k, k);
                    return false;
                }
            return true;
        },
        seed);
    return accepted ? "" : reason;
}

ApplyResult apply(RuleSet const& rules, KernelGraph& graph, EngineOptions const& options) {
    // The rules run on a copy, so that an error (a limit reached half way) leaves no
    // half-lowered graph behind.
    KernelGraph work = graph;
    ApplyResult const result = Driver(rules, work, options).run();
    graph = std::move(work);
    return result;
}

Rule const* RuleSet::find(std::string_view rule) const {
    for (auto const& r : rules)
        if (r.name == rule)
            return &r;
    return nullptr;
}

} // namespace kiln::rules
