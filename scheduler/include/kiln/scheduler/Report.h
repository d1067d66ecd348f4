// Report.h: what a sweep shows while it runs and leaves behind when it ends.
//
// While it runs: a progress bar on a terminal (one line redrawn in place), or one plain line per
// candidate when the output is a file or a pipe (CI logs), each with candidates done, failures,
// the best time so far, the throughput and where the time goes (candidates evaluated per second,
// the compiles' busy seconds, the share of the wall time spent measuring) and the estimated time
// left. At the end: the same totals, a table of the fastest candidates (each with how it was
// checked: CheckProvenance.h) and of the failures, and an SVG plot of the sweep (the time of
// each candidate in the order it was done, with its point and check as a tooltip, failures
// marked, and the best-so-far curve).
#pragma once

#include "kiln/scheduler/Solver.h"
#include "kiln/scheduler/Sweep.h"

#include <cstdio>
#include <optional>
#include <string>

namespace kiln::scheduler {

/// Prints SweepProgress to `out`: a redrawn bar when `terminal`; otherwise a line when the best
/// time or the failures change, at least a second after the previous line, and at the end.
class ProgressPrinter {
public:
    ProgressPrinter(std::FILE* out, bool terminal)
        : out_(out)
        , terminal_(terminal) {}
    void operator()(SweepProgress const& p);
    /// Ends the bar's line (terminal only).
    void finish();

    /// The text of one update, without a newline (what either mode prints).
    static std::string line(SweepProgress const& p, bool bar);

private:
    std::FILE* out_;
    bool terminal_;
    bool drawn_ = false;
    double lastLine_ = -1;
    std::size_t lastFailures_ = 0;
    std::optional<double> lastBest_;
};

/// The end-of-sweep table: the `top` fastest candidates with how each was checked, the winner,
/// then every failure with its reason.
std::string reportTable(SweepResult const& result, Solver const& solver, std::size_t top = 10);

/// An SVG plot of the sweep: time per candidate (log scale) and the best-so-far curve.
std::string reportSvg(SweepResult const& result, std::string const& title);

} // namespace kiln::scheduler
