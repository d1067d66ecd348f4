// Trace.h: a record of every rule application, written as it happens.
//
// Each entry says which rule set and rule applied, with which bindings and guard value, and which
// elements it removed and added; with those and the provenance the graph keeps, any element of a
// lowered graph can be traced back to the rules that made it. Entries are streamed to the file
// (a JSON array), so tracing costs time linear in the number of applications.
#pragma once

#include "kiln/rules/Rewrite.h"

#include <fstream>
#include <string>

namespace kiln::rules {

class Trace {
public:
    /// Starts a trace at `path`; a UserError when it cannot be written.
    explicit Trace(std::string const& path);
    ~Trace();
    Trace(Trace const&) = delete;
    Trace& operator=(Trace const&) = delete;

    void record(Application const& application);
    std::int64_t entries() const { return entries_; }

private:
    std::ofstream out_;
    std::int64_t entries_ = 0;
};

/// One application as a JSON object (one line).
std::string toJson(Application const& application);

} // namespace kiln::rules
