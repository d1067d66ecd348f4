// Arch.cpp: `kiln arch list | show <target> [--json] | diff <a> <b>`: the architecture database
// as tables (or JSON), so that a figure and its source can be checked without reading code.
//
// An unknown target is a kiln::arch::ArchError listing the known targets; Main.cpp prints it
// as `error: ...` and exits non-zero.
#include "Subcommands.h"
#include "kiln/arch-db/ArchDiff.h"
#include "kiln/arch-db/ArchJson.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/Error.h"
#include "kiln/runtime/ArchOverlay.h"
#include "kiln/runtime/Platform.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

namespace {

using arch::Arch;
using arch::ArchLibrary;

/// A text table: left-aligned columns, right-aligned where asked, two spaces apart.
class Table {
public:
    explicit Table(std::vector<std::string> header, std::vector<bool> rightAligned = {})
        : rightAligned_(std::move(rightAligned)) {
        rows_.push_back(std::move(header));
    }
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

    void print(std::string const& indent = "  ") const {
        std::vector<std::size_t> widths;
        for (auto const& row : rows_) {
            widths.resize(std::max(widths.size(), row.size()));
            for (std::size_t i = 0; i < row.size(); ++i) {
                widths[i] = std::max(widths[i], row[i].size());
            }
        }
        for (auto const& row : rows_) {
            std::string line = indent;
            for (std::size_t i = 0; i < row.size(); ++i) {
                bool right = i < rightAligned_.size() && rightAligned_[i];
                bool last = i + 1 == row.size();
                line += right ? fmt::format("{:>{}}", row[i], widths[i])
                              : (last ? row[i] : fmt::format("{:<{}}", row[i], widths[i]));
                line += last ? "" : "  ";
            }
            fmt::print("{}\n", line);
        }
    }

private:
    std::vector<bool> rightAligned_;
    std::vector<std::vector<std::string>> rows_;
};

/// Numbers each distinct source once, so tables can cite [n] and list the texts at the end.
class SourceList {
public:
    std::string cite(std::string const& source) {
        auto [it, inserted] = numbers_.emplace(source, numbers_.size() + 1);
        if (inserted) {
            ordered_.push_back(source);
        }
        return fmt::format("[{}]", it->second);
    }
    void print() const {
        fmt::print("\nSources ([n] above; '~' marks an estimate)\n");
        for (std::size_t i = 0; i < ordered_.size(); ++i) {
            fmt::print("  [{}] {}\n", i + 1, ordered_[i]);
        }
    }

private:
    std::map<std::string, std::size_t> numbers_;
    std::vector<std::string> ordered_;
};

std::string fmtOffset(arch::Instruction const& instruction) {
    if (!instruction.offset) {
        return "-";
    }
    return fmt::format("[{}, {}]", instruction.offset->min, instruction.offset->max);
}

std::string fmtMatrix(arch::Instruction const& instruction) {
    if (!instruction.matrix) {
        return "-";
    }
    auto const& m = *instruction.matrix;
    std::string blocks = m.blocks > 1 ? fmt::format(" x{} blocks", m.blocks) : "";
    return fmt::format("m{}n{}k{}{} {}*{}+{}->{}", m.m, m.n, m.k, blocks, m.a, m.b, m.c, m.d);
}

std::string fmtCycles(int cycles, bool estimate) {
    return (estimate ? "~" : "") + std::to_string(cycles);
}

std::string fmtFactValue(arch::Fact const& fact) {
    if (fact.origin == arch::FactOrigin::Device) {
        return fmt::format("{} (device; database {})", fact.value,
                           fact.databaseValue ? std::to_string(*fact.databaseValue) : "-");
    }
    return std::to_string(fact.value);
}

void list() {
    ArchLibrary const& library = ArchLibrary::instance();
    fmt::print("{} targets from the {}\n", library.targets().size(), library.origin());
    Table table({"target", "vendor", "family", "wave", "SMs/CUs", "shared_bytes", "reference part"},
                {false, false, false, true, true, true, false});
    for (Arch const& arch : library.targets()) {
        auto fact = [&](char const* name) {
            auto value = arch.fact(name);
            return value ? std::to_string(*value) : std::string("-");
        };
        table.add({arch.name(), std::string(name(arch.vendor())), arch.family(), fact("wave_size"),
                   fact("multiprocessor_count"), fact("shared_bytes"), arch.referencePart()});
    }
    table.print();
    // What kiln emit, export and tune compile for when no target is named and no GPU decides.
    auto const& defaults = library.defaultTargets();
    fmt::print("default targets: {}\n",
               defaults.empty() ? "none" : fmt::format("{}", fmt::join(defaults, ", ")));
}

// The database's target, or with --device N, the target of CUDA device N with the device's own
// figures laid over it (the database's value shown beside each).
Arch targetToShow(std::string const& target, std::optional<int> device) {
    if (!device)
        return ArchLibrary::get(target);
    auto platform = runtime::loadPlatform("cuda");
    if (!platform.ok())
        fail("--device {}: {}", *device, platform.error().message());
    auto handle = (*platform)->device(*device);
    if (!handle.ok())
        fail("--device {}: {}", *device, handle.error().message());
    auto live = runtime::liveArch((*handle)->description(), target);
    if (!live.ok())
        fail("--device {}: {}", *device, live.error().message());
    return *live;
}

void show(std::string const& target, std::optional<int> device, bool json) {
    Arch const arch = targetToShow(target, device);
    if (json) {
        fmt::print("{}\n", arch::toJsonText(arch));
        return;
    }
    SourceList sources;
    fmt::print("{}  {} {}  (reference part: {}; database: {})\n", arch.name(), name(arch.vendor()),
               arch.family(), arch.referencePart(), ArchLibrary::instance().origin());

    fmt::print("\nFacts ({})\n", arch.facts().size());
    Table facts({"name", "value", "unit", "source"}, {false, true, false, false});
    for (auto const& fact : arch.facts()) {
        std::string value = (fact.source.starts_with("estimate:") ? "~" : "") + fmtFactValue(fact);
        facts.add({fact.name, value, fact.unit, sources.cite(fact.source)});
    }
    facts.print();

    fmt::print("\nCapabilities ({} of {})\n", arch.capabilities().size(), arch::kCapabilityCount);
    Table capabilities({"name", "has", "meaning"});
    for (auto const& info : arch::kCapabilityTable) {
        capabilities.add({std::string(info.name), arch.has(info.capability) ? "yes" : "no",
                          std::string(info.description)});
    }
    capabilities.print();

    fmt::print("\nInstructions ({})\n", arch.instructions().size());
    Table instructions({"name", "kind", "latency", "issue", "wait", "bytes", "offset", "matrix",
                        "sources", "aliases"},
                       {false, false, true, true, false, true, false, false, false, false});
    for (auto const& instruction : arch.instructions()) {
        std::string aliases;
        for (auto const& alias : instruction.aliases) {
            aliases += (aliases.empty() ? "" : ", ") + alias;
        }
        std::string cited = sources.cite(instruction.latencySource);
        if (instruction.issueSource != instruction.latencySource) {
            cited += sources.cite(instruction.issueSource);
        }
        if (instruction.offset) {
            cited += sources.cite(instruction.offset->source);
        }
        instructions.add({instruction.name, std::string(name(instruction.kind)),
                          fmtCycles(instruction.latency, instruction.latencyIsEstimate()),
                          fmtCycles(instruction.issueCycles, instruction.issueIsEstimate()),
                          std::string(name(instruction.waitQueue)),
                          std::to_string(instruction.bytesPerLane), fmtOffset(instruction),
                          fmtMatrix(instruction), cited, aliases.empty() ? "-" : aliases});
    }
    instructions.print();
    sources.print();
}

std::string describeFields(arch::InstructionDifference const& difference) {
    auto const& a = *difference.left;
    auto const& b = *difference.right;
    std::vector<std::string> parts;
    for (auto const& field : difference.fields) {
        if (field == "name") {
            parts.push_back(fmt::format("name {} -> {}", a.name, b.name));
        } else if (field == "kind") {
            parts.push_back(fmt::format("kind {} -> {}", name(a.kind), name(b.kind)));
        } else if (field == "latency") {
            parts.push_back(fmt::format("latency {} -> {}", a.latency, b.latency));
        } else if (field == "issue_cycles") {
            parts.push_back(fmt::format("issue {} -> {}", a.issueCycles, b.issueCycles));
        } else if (field == "wait_queue") {
            parts.push_back(fmt::format("wait {} -> {}", name(a.waitQueue), name(b.waitQueue)));
        } else if (field == "bytes_per_lane") {
            parts.push_back(fmt::format("bytes {} -> {}", a.bytesPerLane, b.bytesPerLane));
        } else if (field == "offset") {
            parts.push_back(fmt::format("offset {} -> {}", fmtOffset(a), fmtOffset(b)));
        } else if (field == "matrix") {
            parts.push_back(fmt::format("matrix {} -> {}", fmtMatrix(a), fmtMatrix(b)));
        }
    }
    std::string joined;
    for (auto const& part : parts) {
        joined += (joined.empty() ? "" : "; ") + part;
    }
    return joined;
}

void diffTargets(std::string const& leftName, std::string const& rightName) {
    Arch const& left = ArchLibrary::get(leftName);
    Arch const& right = ArchLibrary::get(rightName);
    arch::ArchDiff difference = arch::diff(left, right);
    fmt::print("{} ({}) vs {} ({})\n", left.name(), left.referencePart(), right.name(),
               right.referencePart());
    if (difference.empty()) {
        fmt::print("no differences\n");
        return;
    }
    auto value = [](std::optional<std::int64_t> v) { return v ? std::to_string(*v) : "-"; };
    fmt::print("\nFacts ({} differ)\n", difference.facts.size());
    Table facts({"name", left.name(), right.name(), "unit"}, {false, true, true, false});
    for (auto const& fact : difference.facts) {
        facts.add({fact.name, value(fact.left), value(fact.right), fact.unit});
    }
    facts.print();

    auto names = [](std::vector<arch::Capability> const& list) {
        std::string joined;
        for (auto capability : list) {
            joined += (joined.empty() ? "" : ", ") + std::string(name(capability));
        }
        return joined.empty() ? std::string("-") : joined;
    };
    fmt::print("\nCapabilities\n  only {}: {}\n  only {}: {}\n", left.name(),
               names(difference.onlyLeft), right.name(), names(difference.onlyRight));

    fmt::print("\nInstructions ({} differ)\n", difference.instructions.size());
    Table instructions({"name", "difference"});
    for (auto const& instruction : difference.instructions) {
        std::string what = instruction.right == nullptr  ? "only on " + left.name()
                           : instruction.left == nullptr ? "only on " + right.name()
                                                         : describeFields(instruction);
        instructions.add({instruction.name, what});
    }
    instructions.print();
}

} // namespace

void addArch(CLI::App& app) {
    CLI::App* arch = app.add_subcommand(
        "arch", "Show the architecture database: targets, facts, capabilities, instructions");
    arch->require_subcommand(1);

    arch->add_subcommand("list", "List the known targets")->callback([] { list(); });

    auto showTarget = std::make_shared<std::string>();
    auto showJson = std::make_shared<bool>(false);
    CLI::App* showCommand =
        arch->add_subcommand("show", "Every fact, capability and instruction of one target");
    showCommand->add_option("target", *showTarget, "Target name, e.g. sm_90a or gfx942")
        ->required();
    showCommand->add_flag("--json", *showJson, "Print the target in the database's JSON format");
    auto showDevice = std::make_shared<std::optional<int>>();
    showCommand->add_option(
        "--device", *showDevice,
        "Lay the facts of this CUDA device over the target's (database values beside)");
    showCommand->callback(
        [showTarget, showDevice, showJson] { show(*showTarget, *showDevice, *showJson); });

    auto diffNames = std::make_shared<std::vector<std::string>>();
    CLI::App* diffCommand = arch->add_subcommand("diff", "What differs between two targets");
    diffCommand->add_option("targets", *diffNames, "Two target names, e.g. gfx90a gfx942")
        ->required()
        ->expected(2);
    diffCommand->callback([diffNames] { diffTargets((*diffNames)[0], (*diffNames)[1]); });
}

} // namespace kiln::cli
