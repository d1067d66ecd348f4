#include "kiln/scheduler/Report.h"

#include "kiln/scheduler/CheckProvenance.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace kiln::scheduler {

namespace {

std::string duration(double seconds) {
    auto const s = static_cast<long long>(std::llround(seconds));
    if (s >= 3600)
        return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
    if (s >= 60)
        return fmt::format("{}m{:02}s", s / 60, s % 60);
    return fmt::format("{}s", s);
}

// Candidates per second with two significant digits where it is slow (0.42, 2.9, 31).
std::string rate(double perSecond) {
    if (perSecond >= 10)
        return fmt::format("{:.0f}", perSecond);
    return perSecond >= 1 ? fmt::format("{:.1f}", perSecond) : fmt::format("{:.2f}", perSecond);
}

std::string escapeXml(std::string const& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

} // namespace

std::string ProgressPrinter::line(SweepProgress const& p, bool bar) {
    std::string out;
    if (bar) {
        constexpr int kWidth = 24;
        int const filled =
            p.total
                ? static_cast<int>(kWidth * std::min<double>(1.0, double(p.done) / double(p.total)))
                : 0;
        out = "[" + std::string(std::size_t(filled), '#') +
              std::string(std::size_t(kWidth - filled), '.') + "] ";
    }
    out += fmt::format("{}/{} done, {} failed", p.done, p.total, p.failures);
    if (p.reused)
        out += fmt::format(", {} reused", p.reused);
    out += p.best ? fmt::format(", best {:.2f} us ({})", *p.best, p.bestPoint) : ", best -";
    // Throughput counts what was evaluated (a reused record costs nothing); compiles run in
    // parallel, so their seconds are busy seconds, and measuring is a share of the wall time.
    if (p.done > p.reused && p.elapsed > 0)
        out += fmt::format(", {} cand/s", rate(double(p.done - p.reused) / p.elapsed));
    if (p.compileSeconds > 0)
        out += fmt::format(", compile {:.1f} s busy", p.compileSeconds);
    if (p.measureSeconds > 0 && p.elapsed > 0)
        out += fmt::format(", measure {:.0f}% of wall", 100 * p.measureSeconds / p.elapsed);
    if (p.done > p.reused && p.total > p.done)
        out += fmt::format(
            ", ETA {}", duration(p.elapsed / double(p.done - p.reused) * double(p.total - p.done)));
    return out;
}

void ProgressPrinter::operator()(SweepProgress const& p) {
    if (terminal_) {
        std::fprintf(out_, "\r\033[K%s", line(p, true).c_str());
        drawn_ = true;
    } else {
        bool const news = p.failures != lastFailures_ || p.best != lastBest_ || p.done == p.total ||
                          lastLine_ < 0 || p.elapsed - lastLine_ >= 1.0;
        if (!news)
            return;
        std::fprintf(out_, "%s\n", line(p, false).c_str());
        lastLine_ = p.elapsed;
        lastFailures_ = p.failures;
        lastBest_ = p.best;
    }
    std::fflush(out_);
}

void ProgressPrinter::finish() {
    if (terminal_ && drawn_)
        std::fprintf(out_, "\n");
    drawn_ = false;
}

std::string reportTable(SweepResult const& result, Solver const& solver, std::size_t top) {
    std::vector<SweepEntry const*> ok, failed;
    for (auto const& e : result.entries)
        (e.evaluation.ok ? ok : failed).push_back(&e);
    // The finalists first, measured again, among whom the winner is (bestOf()); then by time,
    // equal times in the order of their points, as the winner's ties go (TuningDatabase.cpp):
    // the order the candidates arrived in differs between runs (MPI ranks, parallel compiles).
    auto const again = [](SweepEntry const* e) {
        return e->evaluation.extra.contains(kRetimedExtra);
    };
    std::stable_sort(ok.begin(), ok.end(), [&](auto* a, auto* b) {
        if (again(a) != again(b))
            return again(a);
        if (a->evaluation.microseconds != b->evaluation.microseconds)
            return a->evaluation.microseconds < b->evaluation.microseconds;
        return a->params < b->params;
    });
    std::string out =
        fmt::format("{} candidates in {:.1f} s ({} reused from the database, {} failed)\n",
                    result.entries.size(), result.seconds, result.reused, result.failures);
    std::size_t const evaluated = result.entries.size() - result.reused;
    out += fmt::format("{} evaluated", evaluated);
    if (evaluated > 0 && result.seconds > 0)
        out += fmt::format(" at {} candidates/s", rate(double(evaluated) / result.seconds));
    // The cost model without compiles neither compiles nor measures: no zeros for it.
    if (result.compileSeconds > 0)
        out += fmt::format("; compiling {:.1f} s busy (summed over parallel jobs)",
                           result.compileSeconds);
    if (result.measureSeconds > 0 && result.seconds > 0)
        out += fmt::format("; measuring {:.1f} s ({:.0f}% of the wall time)", result.measureSeconds,
                           100 * result.measureSeconds / result.seconds);
    if (result.retimed > 0)
        out += fmt::format("; the {} fastest measured again at the end", result.retimed);
    out += "\n\n";
    // How each candidate was checked (CheckProvenance.h): reused records of an older sweep may
    // say less than new ones.
    std::size_t const shown = std::min(ok.size(), top);
    std::vector<std::string> checked;
    std::size_t checkedWidth = 7; // the heading's
    for (std::size_t i = 0; i < shown; ++i) {
        checked.push_back(checkedBy(result.evaluator, ok[i]->evaluation.extra));
        checkedWidth = std::max(checkedWidth, checked.back().size());
    }
    out += fmt::format("{:>4}  {:>12}  {:>7}  {:>4}  {:<{}}  {}\n", "rank", "time (us)", "spread",
                       "regs", "checked", checkedWidth, "point");
    for (std::size_t i = 0; i < shown; ++i) {
        auto const& e = *ok[i];
        auto const regs = e.evaluation.extra.find("registers");
        out += fmt::format("{:>4}  {:>12.3f}  {:>6.1f}%  {:>4}  {:<{}}  {}{}\n", i + 1,
                           e.evaluation.microseconds, 100 * e.evaluation.spread,
                           regs == e.evaluation.extra.end() ? std::string("-")
                                                            : fmt::format("{:.0f}", regs->second),
                           checked[i], checkedWidth, solver.text(e.point),
                           again(&e)  ? "  (measured again)"
                           : e.reused ? "  (reused)"
                                      : "");
    }
    if (result.best)
        out += fmt::format(
            "\nwinner: {:.3f} us at {}, checked: {}{}\n", result.best->microseconds,
            [&] {
                std::string s;
                for (auto const& [k, v] : result.best->point)
                    s += fmt::format("{}{}={}", s.empty() ? "" : ",", k, v);
                return s;
            }(),
            checkedBy(result.evaluator, result.best->extra),
            ok.empty() || ok.front()->params == result.best->point
                ? ""
                : " (tied with the fastest within the measured noise; ties go to the "
                  "smaller point)");
    if (!failed.empty()) {
        out += fmt::format("\nfailures ({}):\n", failed.size());
        for (auto const* e : failed) {
            // A multi-line message (a compiler's log) is indented under its candidate.
            std::string error = e->evaluation.error;
            while (!error.empty() && error.back() == '\n')
                error.pop_back();
            for (std::size_t at = error.find('\n'); at != std::string::npos;
                 at = error.find('\n', at + 1))
                error.insert(at + 1, "           ");
            out +=
                fmt::format("  {:<8} {}: {}\n", e->evaluation.stage, solver.text(e->point), error);
        }
    }
    return out;
}

std::string reportSvg(SweepResult const& result, std::string const& title) {
    constexpr double kWidth = 800, kHeight = 400, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;
    double const plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
    double lo = INFINITY, hi = 0;
    for (auto const& e : result.entries)
        if (e.evaluation.ok && e.evaluation.microseconds > 0 &&
            std::isfinite(e.evaluation.microseconds)) {
            lo = std::min(lo, e.evaluation.microseconds);
            hi = std::max(hi, e.evaluation.microseconds);
        }
    if (!(lo <= hi)) {
        lo = 1;
        hi = 10;
    }
    double const logLo = std::floor(std::log10(lo)),
                 logHi = std::max(logLo + 1, std::ceil(std::log10(hi)));
    std::size_t const n = std::max<std::size_t>(result.entries.size(), 1);
    auto const x = [&](std::size_t i) { return kLeft + plotW * (double(i) + 0.5) / double(n); };
    auto const y = [&](double us) {
        return kTop + plotH * (1 - (std::log10(us) - logLo) / (logHi - logLo));
    };
    std::string svg =
        fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                    "font-family=\"sans-serif\" font-size=\"12\">\n"
                    "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                    "<text x=\"{}\" y=\"20\" font-size=\"14\">{}</text>\n",
                    kWidth, kHeight, kLeft, escapeXml(title));
    // Axes and decades.
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n"
                       "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n",
                       kLeft, kTop, kTop + plotH, kLeft + plotW);
    for (double d = logLo; d <= logHi; ++d)
        svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" "
                           "stroke=\"#ddd\"/>\n<text x=\"{3}\" y=\"{4:.1f}\" "
                           "text-anchor=\"end\">{5:g} us</text>\n",
                           kLeft, y(std::pow(10, d)), kLeft + plotW, kLeft - 5,
                           y(std::pow(10, d)) + 4, std::pow(10, d));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">candidate (in the order "
                       "evaluated); red x: failed; line: best so far</text>\n",
                       kLeft + plotW / 2, kHeight - 15);
    // Candidates, failures and the best-so-far curve.
    std::string curve;
    double best = INFINITY;
    for (std::size_t i = 0; i < result.entries.size(); ++i) {
        auto const& e = result.entries[i].evaluation;
        if (e.ok && e.microseconds > 0 && std::isfinite(e.microseconds)) {
            // A tooltip per candidate: its point, its time and how it was checked.
            std::string point;
            for (auto const& [k, v] : result.entries[i].params)
                point += fmt::format("{}{}={}", point.empty() ? "" : ",", k, v);
            svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" "
                               "fill=\"#1f77b4\"><title>{}: {:.3f} us, checked: {}</title>"
                               "</circle>\n",
                               x(i), y(e.microseconds), escapeXml(point), e.microseconds,
                               escapeXml(checkedBy(result.evaluator, e.extra)));
            best = std::min(best, e.microseconds);
        } else if (!e.ok) {
            svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#d62728\" "
                               "text-anchor=\"middle\">x</text>\n",
                               x(i), kTop + 10);
        }
        if (std::isfinite(best))
            curve += fmt::format("{}{:.1f},{:.1f}", curve.empty() ? "" : " ", x(i), y(best));
    }
    if (!curve.empty())
        svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#ff7f0e\" "
                           "stroke-width=\"2\"/>\n",
                           curve);
    svg += "</svg>\n";
    return svg;
}

} // namespace kiln::scheduler
