#include "kiln/rules/Trace.h"

#include <nlohmann/json.hpp>

namespace kiln::rules {

std::string toJson(Application const& a) {
    nlohmann::ordered_json j;
    j["step"] = a.number;
    j["ruleset"] = a.ruleset;
    j["rule"] = a.rule;
    nlohmann::ordered_json bindings = nlohmann::ordered_json::object();
    for (auto const& [variable, id] : a.match.elements)
        if (!variable.starts_with('$'))
            bindings[variable] = id;
    for (auto const& [variable, ids] : a.match.lists)
        bindings["..." + variable] = ids;
    j["bindings"] = bindings;
    j["guard"] = a.guard;
    j["removed"] = a.removed;
    j["added"] = a.added;
    return j.dump();
}

Trace::Trace(std::string const& path)
    : out_(path, std::ios::binary) {
    if (!out_)
        fail("cannot write the trace to '{}'", path);
    out_ << "[\n";
}

Trace::~Trace() {
    out_ << (entries_ ? "\n]\n" : "]\n");
}

void Trace::record(Application const& application) {
    out_ << (entries_++ ? ",\n" : "") << toJson(application);
}

} // namespace kiln::rules
