// PropertyTest.cpp: random Commands through every shipped pipeline, at random valid schedules.
//
// Each case is one seed: a Command drawn from it (element-wise chains over loads of one to three
// axes, row reductions, GEMMs with epilogues; every element type, transposed and padded layouts,
// odd sizes), lowered by the pipeline in rules/ written for its kind for one NVIDIA target
// (sm_90a for even seeds, sm_80 for odd ones) and for gfx942, and now and then by the other
// pipelines, which must refuse it cleanly; each at a point drawn from the pipeline's search
// spaces in examples/ for that target (now and then one parameter off the space), with the
// reference interpreter checking the meaning after every rule application; then verified,
// emitted (half the time for the problem's sizes) and assembled: PTX by ptxas, several kernels
// per call in the background, AMDGCN by the build's assembler. A Kiln UserError, in lowering or
// code generation, is a pipeline refusing the case; anything else is a finding: an InternalError or
// other exception, a graph the verifier rejects after lowering succeeded, a changed result, a
// kernel the assembler rejects. Each finding prints its seed, the Command as JSON, the pipeline,
// target and parameters, and the kiln command that reproduces it.
//     KILN_PROPERTY_CASES=N   cases to run (default 300: 25 to 40 s on two shared cores)
//     KILN_PROPERTY_SEED=S    the first seed (default 1); seeds S, S+1, ... S+N-1
//     KILN_PROPERTY_VERBOSE=1 print every case's outcome
// Over 800 lines on purpose: the Command generator, the schedule drawing and the checks of one
// property test belong together.
#include "LoweringTestSupport.h"
#include "kiln/graph/SemanticCheck.h"
#include "kiln/graph/Verify.h"
#include "kiln/lowering/Codegen.h"
#include "kiln/runtime/Assembler.h"
#include "kiln/runtime/Ptxas.h"
#include "kiln/scheduler/Solver.h"

#include <chrono>
#include <deque>
#include <fmt/format.h>
#include <future>
#include <gtest/gtest.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>

namespace kiln::test {
namespace {

using Json = nlohmann::ordered_json;
using Rng = std::mt19937_64;
using Params = std::map<std::string, std::int64_t>;

std::int64_t environment(char const* name, std::int64_t fallback) {
    char const* text = std::getenv(name);
    return text && *text ? std::stoll(text) : fallback;
}

// ---- Drawing Commands ---------------------------------------------------------------------

int uniform(Rng& rng, int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
}
bool chance(Rng& rng, double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}
template <class T>
T const& pick(Rng& rng, std::vector<T> const& from) {
    return from[static_cast<std::size_t>(uniform(rng, 0, int(from.size()) - 1))];
}

bool isFloatName(std::string const& dtype) {
    return dtype != "i32";
}

std::string floatType(Rng& rng) {
    return pick(rng, std::vector<std::string>{"f32", "f16", "bf16", "f64"});
}

// A random element-wise expression over `tags` and `scalars` (all float, or all integer);
// `usedTag` is set when a tag appears in it.
std::string expressionOver(Rng& rng, std::vector<std::string> const& tags,
                           std::vector<std::string> const& scalars, bool floating, int depth,
                           bool& usedTag) {
    if (depth == 0 || chance(rng, 0.3)) {
        int const leaf = uniform(rng, 0, 9);
        if (leaf < 7 || (scalars.empty() && leaf < 9)) {
            usedTag = true;
            return pick(rng, tags);
        }
        if (leaf < 9)
            return pick(rng, scalars);
        return floating ? pick(rng, std::vector<std::string>{"0.5", "2.0", "-1.25", "3"})
                        : pick(rng, std::vector<std::string>{"1", "-3", "7"});
    }
    auto sub = [&] { return expressionOver(rng, tags, scalars, floating, depth - 1, usedTag); };
    int const form = uniform(rng, 0, floating ? 12 : 8);
    switch (form) {
    case 0:
        return fmt::format("({} + {})", sub(), sub());
    case 1:
        return fmt::format("({} - {})", sub(), sub());
    case 2:
        return fmt::format("({} * {})", sub(), sub());
    case 3:
        return fmt::format("min({}, {})", sub(), sub());
    case 4:
        return fmt::format("max({}, {})", sub(), sub());
    case 5:
        return fmt::format("abs({})", sub());
    case 6:
        return fmt::format("select({} > {}, {}, {})", sub(), sub(), sub(), sub());
    case 7:
        return fmt::format("(-{})", sub());
    case 8:
        return fmt::format("({} * 3 + 1)", sub());
    case 9:
        return fmt::format("tanh({})", sub());
    case 10:
        return fmt::format("exp(0.25 * {})", sub());
    case 11:
        return fmt::format("sqrt(abs({}) + 0.5)", sub());
    default:
        return fmt::format("({} / (1.5 + abs({})))", sub(), sub());
    }
}

// The same, with at least one tag (an Execute needs one).
std::string expression(Rng& rng, std::vector<std::string> const& tags,
                       std::vector<std::string> const& scalars, bool floating, int depth) {
    bool usedTag = false;
    std::string text = expressionOver(rng, tags, scalars, floating, depth, usedTag);
    return usedTag ? text : fmt::format("({} + {})", text, pick(rng, tags));
}

struct Drawn {
    Json command;
    std::map<std::string, double> problem;
    std::string family;
    std::set<std::string> traits; ///< what a known bug needs ("16-bit Multiply dtype")
};

// Strides for a tensor of `dims` axes: row-major (none), column-major, or rows padded.
Json strides(Rng& rng, std::vector<std::string> const& dims) {
    int const form = uniform(rng, 0, 9);
    if (form < 6)
        return nullptr;
    if (dims.size() == 1)
        return Json::array({"2"});
    if (form < 8) { // column-major
        Json s = Json::array();
        std::string running = "1";
        for (auto const& d : dims) {
            s.push_back(running);
            running = running == "1" ? d : running + " * " + d;
        }
        return s;
    }
    // Rows padded by 3 elements.
    Json s = Json::array();
    std::string inner = dims.back() + " + 3";
    std::vector<std::string> rev{"1", inner};
    for (std::size_t k = dims.size() - 1; k-- > 1;)
        rev.push_back("(" + rev.back() + ") * " + dims[k]);
    for (auto it = rev.rbegin(); it != rev.rend(); ++it)
        s.push_back(*it);
    return s;
}

Json tensor(std::string const& dtype, std::vector<std::string> const& dims, Json const& strides) {
    Json t{{"tensor", dtype}, {"shape", dims}};
    if (!strides.is_null())
        t["strides"] = strides;
    return t;
}

Drawn elementwise(Rng& rng) {
    Drawn d{.command = Json::object(), .problem = {}, .family = "elementwise", .traits = {}};
    int const rank = uniform(rng, 0, 9) < 5 ? 1 : (uniform(rng, 0, 4) < 4 ? 2 : 3);
    std::vector<std::string> dims = rank == 1   ? std::vector<std::string>{"N"}
                                    : rank == 2 ? std::vector<std::string>{"M", "N"}
                                                : std::vector<std::string>{"B", "M", "N"};
    for (auto const& n : dims)
        d.problem[n] = rank == 1 ? uniform(rng, 1, 1500) : uniform(rng, 1, rank == 2 ? 40 : 9);
    std::string const main =
        pick(rng, std::vector<std::string>{"f32", "f32", "f16", "bf16", "f64", "i32"});
    bool const floating = isFloatName(main);
    bool const linear = chance(rng, 0.5);
    int const inputs = uniform(rng, 1, 3);
    Json args = Json::object(), ops = Json::array();
    std::vector<std::string> tags, scalars;
    for (int k = 0; k < inputs; ++k) {
        std::string const name = fmt::format("X{}", k);
        std::string const type = floating && chance(rng, 0.2) ? floatType(rng) : main;
        args[name] = tensor(type, dims, strides(rng, dims));
        std::string const tag = fmt::format("x{}", k);
        ops.push_back(
            {{"op", linear ? "LoadLinear" : "LoadTiled"}, {"tag", tag}, {"tensor", name}});
        tags.push_back(tag);
    }
    for (int k = 0, n = uniform(rng, 0, 2); k < n; ++k) {
        std::string const name = k == 0 ? "alpha" : "beta";
        args[name] = {{"scalar", floating && chance(rng, 0.7) ? std::string("f32") : main}};
        scalars.push_back(name);
    }
    std::vector<std::string> results;
    for (int k = 0, n = uniform(rng, 1, 4); k < n; ++k) {
        std::string const tag = fmt::format("e{}", k);
        Json op{
            {"op", "Execute"}, {"tag", tag}, {"expr", expression(rng, tags, scalars, floating, 3)}};
        if (chance(rng, 0.15))
            op["dtype"] = floating ? floatType(rng) : std::string("i32");
        ops.push_back(op);
        tags.push_back(tag);
        results.push_back(tag);
    }
    auto const store = [&](std::string const& tensorName, std::string const& value) {
        ops.push_back({{"op", linear ? "StoreLinear" : "StoreTiled"},
                       {"tensor", tensorName},
                       {"value", value}});
    };
    if (chance(rng, 0.15)) { // in place, as axpy stores into Y
        store("X0", results.back());
    } else {
        std::string const type = floating && chance(rng, 0.25) ? floatType(rng) : main;
        args["Y0"] = tensor(type, dims, strides(rng, dims));
        store("Y0", results.back());
    }
    if (results.size() > 1 && chance(rng, 0.3)) {
        args["Y1"] = tensor(main, dims, strides(rng, dims));
        store("Y1", results.front());
    }
    d.command["arguments"] = args;
    d.command["operations"] = ops;
    return d;
}

Drawn reduction(Rng& rng) {
    Drawn d{.command = Json::object(), .problem = {}, .family = "reduction", .traits = {}};
    bool const three = chance(rng, 0.08);
    std::vector<std::string> dims =
        three ? std::vector<std::string>{"B", "M", "N"} : std::vector<std::string>{"M", "N"};
    std::vector<std::string> const out(dims.begin(), dims.end() - 1);
    d.problem["M"] = uniform(rng, 1, 300);
    d.problem["N"] = uniform(rng, 1, 40);
    if (three)
        d.problem["B"] = uniform(rng, 1, 5);
    std::string const type = pick(rng, std::vector<std::string>{"f32", "f32", "f64", "f16", "i32"});
    bool const floating = isFloatName(type);
    Json args = Json::object(), ops = Json::array();
    args["X"] = tensor(type, dims, strides(rng, dims));
    std::vector<std::string> scalars;
    if (chance(rng, 0.4)) {
        args["alpha"] = {{"scalar", type}};
        scalars.push_back("alpha");
    }
    ops.push_back({{"op", "LoadTiled"}, {"tag", "x"}, {"tensor", "X"}});
    std::string value = "x";
    if (chance(rng, 0.4)) {
        ops.push_back({{"op", "Execute"},
                       {"tag", "p"},
                       {"expr", expression(rng, {"x"}, scalars, floating, 2)}});
        value = "p";
    }
    std::string const combine = pick(rng, std::vector<std::string>{"sum", "sum", "max", "min"});
    ops.push_back({{"op", "Reduce"}, {"tag", "r"}, {"value", value}, {"combine", combine}});
    std::string result = "r";
    if (chance(rng, 0.3)) {
        ops.push_back({{"op", "Execute"},
                       {"tag", "q"},
                       {"expr", expression(rng, {"r"}, scalars, floating, 2)}});
        result = "q";
    }
    args["S"] =
        tensor(floating && chance(rng, 0.2) ? floatType(rng) : type, out, strides(rng, out));
    ops.push_back({{"op", "StoreTiled"}, {"tensor", "S"}, {"value", result}});
    d.command["arguments"] = args;
    d.command["operations"] = ops;
    return d;
}

Drawn gemm(Rng& rng) {
    Drawn d{.command = Json::object(), .problem = {}, .family = "gemm", .traits = {}};
    d.problem["M"] = uniform(rng, 1, 72);
    d.problem["N"] = uniform(rng, 1, 72);
    d.problem["K"] = uniform(rng, 1, 40);
    std::string const type =
        pick(rng, std::vector<std::string>{"f32", "f32", "f16", "f16", "bf16", "bf16", "f64"});
    bool const half = type == "f16" || type == "bf16";
    bool const transA = chance(rng, 0.3), transB = chance(rng, 0.5);
    std::vector<std::string> const a =
        transA ? std::vector<std::string>{"K", "M"} : std::vector<std::string>{"M", "K"};
    std::vector<std::string> const b =
        transB ? std::vector<std::string>{"N", "K"} : std::vector<std::string>{"K", "N"};
    std::vector<std::string> const mn{"M", "N"};
    Json args = Json::object(), ops = Json::array();
    args["A"] = tensor(type, a, chance(rng, 0.8) ? Json() : strides(rng, a));
    args["B"] = tensor(type, b, chance(rng, 0.8) ? Json() : strides(rng, b));
    std::string const result = half ? "f32" : type;
    int const epilogue = uniform(rng, 0, 4);
    if (epilogue == 2 || epilogue == 4)
        args["C"] = tensor(chance(rng, 0.5) ? type : result, mn, Json());
    std::string const out = half && chance(rng, 0.6) ? type : result;
    args["D"] = tensor(out, mn, chance(rng, 0.9) ? Json() : strides(rng, mn));
    if (epilogue == 1 || epilogue == 2 || epilogue == 4) {
        args["alpha"] = {{"scalar", "f32"}};
        args["beta"] = {{"scalar", "f32"}};
    }
    ops.push_back({{"op", "LoadTiled"}, {"tag", "a"}, {"tensor", "A"}});
    ops.push_back({{"op", "LoadTiled"}, {"tag", "b"}, {"tensor", "B"}});
    if (args.contains("C"))
        ops.push_back({{"op", "LoadTiled"}, {"tag", "c"}, {"tensor", "C"}});
    Json mul{{"op", "Multiply"}, {"tag", "ab"}, {"lhs", "a"}, {"rhs", "b"}};
    if (transA || chance(rng, 0.2))
        mul["transA"] = transA;
    if (transB || chance(rng, 0.2))
        mul["transB"] = transB;
    if (half && chance(rng, 0.1)) {
        mul["dtype"] = type;
        d.traits.insert("16-bit Multiply dtype");
    }
    ops.push_back(mul);
    std::string value = "ab";
    std::string expr;
    switch (epilogue) {
    case 1:
        expr = "alpha * ab";
        break;
    case 2:
        expr = "alpha * ab + beta * c";
        break;
    case 3:
        expr = "max(ab, 0.0)";
        break;
    case 4:
        expr = expression(rng, {"ab", "c"}, {"alpha", "beta"}, true, 2);
        break;
    default:
        break;
    }
    if (!expr.empty()) {
        Json e{{"op", "Execute"}, {"tag", "d"}, {"expr", expr}};
        if (half && chance(rng, 0.3))
            e["dtype"] = type;
        ops.push_back(e);
        value = "d";
    }
    ops.push_back({{"op", "StoreTiled"}, {"tensor", "D"}, {"value", value}});
    d.command["arguments"] = args;
    d.command["operations"] = ops;
    return d;
}

Drawn draw(std::uint64_t seed) {
    Rng rng(seed);
    int const family = uniform(rng, 0, 9);
    Drawn d = family < 4 ? elementwise(rng) : family < 7 ? reduction(rng) : gemm(rng);
    // Now and then one size is a constant of the Command (shape "17", not "K").
    if (chance(rng, 0.2)) {
        auto it = d.problem.begin();
        std::advance(it, uniform(rng, 0, int(d.problem.size()) - 1));
        std::regex const word("\\b" + it->first + "\\b");
        std::string const value = std::to_string(static_cast<std::int64_t>(it->second));
        for (auto& [name, argument] : d.command["arguments"].items())
            for (auto const* field : {"shape", "strides"})
                if (argument.contains(field))
                    for (auto& entry : argument[field])
                        entry = std::regex_replace(entry.get<std::string>(), word, value);
        d.problem.erase(it);
    }
    Json whole{{"command", fmt::format("prop{}", seed)}, {"version", 1}};
    whole["doc"] = fmt::format("PropertyTest seed {} ({})", seed, d.family);
    whole["arguments"] = d.command["arguments"];
    whole["operations"] = d.command["operations"];
    Json problem = Json::object();
    for (auto const& [name, value] : d.problem)
        problem[name] = static_cast<std::int64_t>(value);
    whole["problem"] = problem;
    d.command = whole;
    return d;
}

// ---- Schedules -----------------------------------------------------------------------------

// The valid points of a pipeline's search spaces for one target.
class Schedules {
public:
    Schedules(std::vector<std::string> const& spaces, std::string const& target) {
        auto const arch = rules::archFacts(target);
        for (auto const& file : spaces) {
            spaces_.push_back(
                std::make_unique<scheduler::SearchSpace>(scheduler::loadSearchSpace(file)));
            scheduler::Solver const solver(*spaces_.back(), arch);
            for (auto const& point : solver.all())
                points_.push_back(solver.named(point));
        }
    }
    bool empty() const { return points_.empty(); }
    /// A point; more often one with a small macro tile (of three, the smallest), whose kernel
    /// ptxas assembles in a fraction of the time a 256 x 128 one takes.
    Params draw(Rng& rng) const {
        Params best = pick(rng, points_);
        if (!best.count("MT_M") || chance(rng, 0.4))
            return best;
        for (int k = 0; k < 2; ++k) {
            Params other = pick(rng, points_);
            if (other["MT_M"] * other["MT_N"] < best["MT_M"] * best["MT_N"])
                best = std::move(other);
        }
        return best;
    }

private:
    std::vector<std::unique_ptr<scheduler::SearchSpace>> spaces_;
    std::vector<Params> points_;
};

struct PipelineUnderTest {
    std::string name;
    rules::Pipeline pipeline;
    std::map<std::string, Schedules> schedules; ///< per target
};

// Now and then one parameter off the space: a value the pipeline must either lower or refuse
// with a UserError, never crash on or emit wrong code for.
void perturb(Rng& rng, Params& params, rules::Pipeline const& pipeline) {
    // UNROLL (in no space) copies the K loop's body: on small tiles, which ptxas assembles fast.
    if (pipeline.name == "gemm" && params["MT_M"] * params["MT_N"] <= 64 * 64 && chance(rng, 0.3))
        params["UNROLL"] = pick(rng, std::vector<std::int64_t>{2, 2, 3, 4});
    if (!chance(rng, 0.1))
        return;
    auto it = params.begin();
    std::advance(it, uniform(rng, 0, int(params.size()) - 1));
    it->second = pick(rng, std::vector<std::int64_t>{0,  1,  2,  3,  5,  6,   7,   8,   12,   16,
                                                     24, 33, 48, 64, 96, 100, 128, 512, 2048, -1});
}

std::string paramText(Params const& params) {
    std::string text;
    for (auto const& [name, value] : params)
        text += fmt::format("{}{}={}", text.empty() ? "" : ",", name, value);
    return text;
}

// ---- Findings and assembling ---------------------------------------------------------------

struct Finding {
    std::uint64_t seed;
    std::string stage, pipeline, target, params, message, command;
    std::set<std::string> traits; ///< of the Command (Drawn::traits)
    bool forProblemSizes = false; ///< code generation was given the problem's sizes
};

// Findings of bugs already reported and out of this test's reach, by name; each is counted and
// printed, not failed.
std::string knownBug(Finding const& f) {
    // A Multiply whose dtype is f16 or bf16 accumulates across K slices in that type:
    // gemm-k-loop's partial tile and accumulator are "like tab" (the product's type), so every
    // slice's sum is rounded to 16 bits where the Command means one rounding of the whole sum.
    if (f.stage == "semantics" && f.message.find("of 'gemm-k-loop'") != std::string::npos &&
        f.traits.count("16-bit Multiply dtype"))
        return "16-bit Multiply dtype accumulates per K slice";
    return "";
}

std::string reproducer(Finding const& f) {
    return fmt::format("seed {} ({} / {}) {}: {}\n  params: {}{}\n  command: {}\n"
                       "  reproduce: save the command as case.json, then\n"
                       "    kiln lower case.json --pipeline rules/{}.pipeline.json --target {} "
                       "--params {} --check -q\n"
                       "    kiln emit case.json --pipeline rules/{}.pipeline.json --target {} "
                       "--params {}\n"
                       "  or: KILN_PROPERTY_SEED={} KILN_PROPERTY_CASES=1 kiln_property_tests\n",
                       f.seed, f.pipeline, f.target, f.stage, f.message, f.params,
                       f.forProblemSizes ? " (code for the problem's sizes)" : "", f.command,
                       f.pipeline, f.target, f.params, f.pipeline, f.target, f.params, f.seed);
}

// PTX kernels assembled by ptxas in the background while cases are lowered, several to a call:
// the bodies of a target's modules joined under one header (each kernel's entry is named after
// its seed, so entries do not clash). When ptxas rejects a batch, each of its kernels is
// assembled alone to name the one it rejects.
class PtxAssembler {
public:
    void add(std::string const& target, std::string const& code, Finding context) {
        std::string header, body;
        std::set<std::string> declarations;
        std::istringstream lines(code);
        bool inBody = false;
        for (std::string line; std::getline(lines, line);) {
            if (!inBody && (line.starts_with(".visible") || line.starts_with(".entry")))
                inBody = true;
            if (inBody)
                body += line + "\n";
            else if (line.starts_with(".version") || line.starts_with(".target") ||
                     line.starts_with(".address_size"))
                header += line + "\n";
            else if (line.starts_with("."))
                declarations.insert(line); // module scope: kiln_shared, the same in every kernel
        }
        Batch& batch = open_[target];
        if (!batch.kernels.empty() && header != batch.header)
            start(target);
        Batch& now = open_[target];
        now.header = header;
        now.declarations.insert(declarations.begin(), declarations.end());
        now.text += body + "\n";
        now.kernels.push_back({code, std::move(context)});
        if (now.kernels.size() >= kKernelsPerCall)
            start(target);
    }

    /// Waits for every call; the kernels ptxas rejects are appended to `findings`.
    void finish(std::vector<Finding>& findings) {
        for (auto const& target : std::vector<std::string>{"sm_80", "sm_90a"})
            if (open_.count(target) && !open_[target].kernels.empty())
                start(target);
        for (auto& call : running_)
            for (auto& f : call.get())
                done_.push_back(std::move(f));
        running_.clear();
        for (auto& f : done_)
            findings.push_back(std::move(f));
        done_.clear();
    }

    std::size_t kernels() const { return kernels_; }
    std::size_t calls() const { return calls_; }

private:
    static constexpr std::size_t kKernelsPerCall = 16;
    static constexpr std::size_t kCallsAtOnce = 2;
    struct Batch {
        std::string header, text;
        std::set<std::string> declarations;
        std::vector<std::pair<std::string, Finding>> kernels;
    };

    void start(std::string const& target) {
        Batch batch = std::move(open_[target]);
        open_[target] = {};
        kernels_ += batch.kernels.size();
        ++calls_;
        // At most kCallsAtOnce ptxas processes: wait for the oldest before starting another.
        if (running_.size() >= kCallsAtOnce) {
            for (auto& f : running_.front().get())
                done_.push_back(std::move(f));
            running_.pop_front();
        }
        running_.push_back(std::async(std::launch::async, [target, batch = std::move(batch)] {
            std::vector<Finding> rejected;
            std::string module = batch.header;
            for (auto const& line : batch.declarations)
                module += line + "\n";
            if (runtime::assemblePtx(module + batch.text, target).ok())
                return rejected;
            for (auto const& [code, context] : batch.kernels) {
                auto const alone = runtime::assemblePtx(code, target);
                if (!alone.ok()) {
                    Finding f = context;
                    f.stage = "ptxas";
                    f.message = alone.error().message() + "\n" + code;
                    rejected.push_back(std::move(f));
                }
            }
            return rejected;
        }));
    }

    std::map<std::string, Batch> open_;
    std::deque<std::future<std::vector<Finding>>> running_;
    std::vector<Finding> done_; ///< of the calls waited for
    std::size_t kernels_ = 0, calls_ = 0;
};

// ---- The property --------------------------------------------------------------------------

struct Tally {
    std::map<std::string, std::int64_t> lowered, emitted, refusedLowering, refusedCodegen;
    std::int64_t cases = 0, rejectedCommands = 0, applicationsChecked = 0, amdAssembled = 0;
    std::map<std::string, double> seconds; ///< per phase
};

// Adds the seconds of its life to `total`.
class Timer {
public:
    explicit Timer(double& total)
        : total_(total) {}
    ~Timer() {
        total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    Timer(Timer const&) = delete;
    Timer& operator=(Timer const&) = delete;

private:
    double& total_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

TEST(Property, RandomCommandsLowerEmitAndAssemble) {
    auto const start = std::chrono::steady_clock::now();
    std::int64_t const cases = environment("KILN_PROPERTY_CASES", 300);
    auto const first = static_cast<std::uint64_t>(environment("KILN_PROPERTY_SEED", 1));
    bool const verbose = environment("KILN_PROPERTY_VERBOSE", 0) != 0;
    bool const havePtxas = runtime::findPtxas().ok();
    auto amdAssembler = runtime::assemblerFor("gfx942");
    std::vector<std::string> const targets{"sm_90a", "sm_80", "gfx942"};

    std::vector<PipelineUnderTest> pipelines;
    auto const add = [&](std::string const& name, std::vector<std::string> const& spaces) {
        PipelineUnderTest p{.name = name,
                            .pipeline =
                                rules::loadPipeline(sourcePath("rules/" + name + ".pipeline.json")),
                            .schedules = {}};
        std::vector<std::string> files;
        for (auto const& s : spaces)
            files.push_back(sourcePath("examples/" + s));
        for (auto const& target : targets)
            p.schedules.emplace(target, Schedules(files, target));
        pipelines.push_back(std::move(p));
    };
    add("elementwise", {"elementwise.space.json"});
    add("reduction", {"reduction.space.json"});
    add("gemm", {"gemm.space.json", "gemm-f32.space.json"});

    std::vector<Finding> findings;
    PtxAssembler ptxas;
    Tally tally;

    for (std::uint64_t seed = first; seed < first + static_cast<std::uint64_t>(cases); ++seed) {
        ++tally.cases;
        Drawn const drawn = draw(seed);
        std::string const commandText = drawn.command.dump();
        if (verbose)
            fmt::print("seed {}: {}\n", seed, commandText);
        std::optional<Command> command;
        try {
            command.emplace(parseCommand(commandText, fmt::format("prop{}.json", seed)));
        } catch (UserError const& e) {
            // The drawing is not perfect (a type mix the language refuses): not Kiln's fault.
            ++tally.rejectedCommands;
            if (verbose)
                fmt::print("seed {}: Command refused: {}\n", seed, e.what());
            continue;
        }
        std::optional<SemanticCheck> checker;
        {
            Timer t(tally.seconds["reference"]);
            checker.emplace(*command, drawn.problem, seed);
        }
        SemanticCheck const& semantics = *checker;
        Rng rng(seed * 7919 + 17);
        Finding context{.seed = seed,
                        .stage = "",
                        .pipeline = "",
                        .target = "",
                        .params = "",
                        .message = "",
                        .command = commandText,
                        .traits = drawn.traits};
        KernelGraph translated;
        try {
            translated = translate(*command);
            double const error = semantics.measure(translated);
            if (!(error <= semantics.tolerance()))
                throw UserError(fmt::format("translation changed the result by {:.3g}", error));
        } catch (std::exception const& e) {
            context.stage = "translate";
            context.message = e.what();
            findings.push_back(context);
            continue;
        }
        // The pipeline written for the family on one NVIDIA target (sm_90a for even seeds,
        // sm_80 for odd ones) and gfx942; now and then the others, which must refuse cleanly.
        std::string const nvidia = seed % 2 == 0 ? "sm_90a" : "sm_80";
        for (auto const& p : pipelines) {
            bool const written = p.name == drawn.family;
            if (!written && !chance(rng, 0.25))
                continue;
            for (auto const& target : targets) {
                if (target != nvidia && (target != "gfx942" || !written))
                    continue;
                auto const& schedules = p.schedules.at(target);
                if (schedules.empty())
                    continue;
                Params params = schedules.draw(rng);
                perturb(rng, params, p.pipeline);
                Finding here = context;
                here.pipeline = p.name;
                here.target = target;
                here.params = paramText(params);
                std::string const key = p.name + "/" + target;
                // Lowering, the meaning checked after every application.
                KernelGraph graph = translated;
                std::string changed;
                rules::EngineOptions options{
                    .parameters = params,
                    .arch = rules::archFacts(target),
                    .observe = [&](rules::Application const& a, KernelGraph const& after) {
                        ++tally.applicationsChecked;
                        Timer t(tally.seconds["checking meaning"]);
                        double const error = semantics.measure(after);
                        if (!(error <= semantics.tolerance()) && changed.empty())
                            changed = fmt::format("rule '{}' of '{}' (application {}) changed "
                                                  "the result by {:.3g}",
                                                  a.rule, a.ruleset, a.number, error);
                    }};
                try {
                    Timer t(tally.seconds["lowering (with checks)"]);
                    rules::lower(p.pipeline, graph, options);
                } catch (UserError const& e) {
                    ++tally.refusedLowering[key];
                    if (verbose)
                        fmt::print("seed {} {}: lowering refused: {}\n", seed, key, e.what());
                    continue;
                } catch (std::exception const& e) {
                    here.stage = "lower";
                    here.message = e.what();
                    findings.push_back(here);
                    continue;
                }
                ++tally.lowered[key];
                if (!changed.empty()) {
                    here.stage = "semantics";
                    here.message = changed;
                    findings.push_back(here);
                    continue;
                }
                if (auto const problems = verify(graph); !problems.empty()) {
                    here.stage = "verify";
                    here.message = describe(graph, problems);
                    findings.push_back(here);
                    continue;
                }
                // Code generation: for any size, or (every other case) for this problem's.
                lowering::CodegenOptions codegen{.target = target, .schedule = p.pipeline.defaults};
                for (auto const& [name, value] : params)
                    codegen.schedule[name] = value;
                if (chance(rng, 0.5)) {
                    here.forProblemSizes = true;
                    for (auto const& [name, value] : drawn.problem)
                        codegen.sizes[name] = static_cast<std::int64_t>(value);
                }
                std::optional<lowering::EmittedKernel> kernel;
                try {
                    Timer t(tally.seconds["emitting"]);
                    kernel = lowering::emitKernel(graph, codegen);
                } catch (UserError const& e) {
                    ++tally.refusedCodegen[key];
                    if (verbose)
                        fmt::print("seed {} {}: code generation refused: {}\n", seed, key,
                                   e.what());
                    continue;
                } catch (std::exception const& e) {
                    here.stage = "emit";
                    here.message = e.what();
                    findings.push_back(here);
                    continue;
                }
                ++tally.emitted[key];
                if (verbose)
                    fmt::print("seed {} {}: emitted ({})\n", seed, key, here.params);
                if (lowering::targetVendor(target) == arch::Vendor::Amd) {
                    if (!amdAssembler.ok())
                        continue;
                    Timer t(tally.seconds["assembling AMDGCN"]);
                    auto const code =
                        (*amdAssembler)->assemble(kernel->code, target, kernel->entry + ".s");
                    ++tally.amdAssembled;
                    if (!code.ok()) {
                        here.stage = "assemble";
                        here.message = code.error().message();
                        findings.push_back(here);
                    }
                } else if (havePtxas) {
                    ptxas.add(target, kernel->code, here);
                }
            }
        }
    }
    {
        Timer t(tally.seconds["waiting for ptxas"]);
        ptxas.finish(findings);
    }
    std::size_t const ptxasKernels = ptxas.kernels(), ptxasCalls = ptxas.calls();

    double const seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} cases (seeds {}..{}), {} Commands the language refused, {:.1f} s; "
               "{} rule applications checked; {} PTX kernels in {} ptxas calls; {} AMDGCN "
               "kernels assembled{}\n",
               tally.cases, first, first + cases - 1, tally.rejectedCommands, seconds,
               tally.applicationsChecked, ptxasKernels, ptxasCalls, tally.amdAssembled,
               havePtxas ? "" : " (no ptxas)");
    for (auto const& [phase, total] : tally.seconds)
        fmt::print("  {:<24} {:6.1f} s\n", phase, total);
    fmt::print("{:<20} {:>8} {:>8} {:>14} {:>14}\n", "pipeline/target", "lowered", "emitted",
               "refused:lower", "refused:emit");
    for (auto const& p : pipelines)
        for (auto const& target : targets) {
            std::string const key = p.name + "/" + target;
            fmt::print("{:<20} {:>8} {:>8} {:>14} {:>14}\n", key, tally.lowered[key],
                       tally.emitted[key], tally.refusedLowering[key], tally.refusedCodegen[key]);
        }
    std::map<std::string, std::int64_t> known;
    for (auto const& f : findings) {
        if (std::string const bug = knownBug(f); !bug.empty()) {
            if (known[bug]++ == 0 || verbose)
                fmt::print("known bug '{}' (not failed):\n{}", bug, reproducer(f));
            continue;
        }
        ADD_FAILURE() << reproducer(f);
    }
    for (auto const& [bug, count] : known)
        fmt::print("known bug '{}': {} findings\n", bug, count);
    // The drawing must exercise Kiln, not mostly the Command checks.
    EXPECT_LE(tally.rejectedCommands * 10, tally.cases);
}

} // namespace
} // namespace kiln::test
