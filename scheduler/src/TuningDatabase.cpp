#include "kiln/scheduler/TuningDatabase.h"

#include "kiln/graph/Error.h"
#include "kiln/graph/SourceJson.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace kiln::scheduler {

namespace {

std::string nowUtc() {
    std::time_t const t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// The index's name for a record: every compared field of its key and its point, each string
// prefixed with its length, so that no two different (key, point) pairs share a name (a hash
// of the key could collide, and "a=1;b" = 2 would read as a = 1, b = 2 without the lengths).
std::string indexKey(TuningKey const& k, std::map<std::string, std::int64_t> const& point) {
    std::string out;
    for (std::string const* field :
         {&k.problem, &k.target, &k.gpu, &k.driver, &k.kiln, &k.pipeline, &k.evaluator})
        out += fmt::format("{}:{}", field->size(), *field);
    for (auto const& [name, value] : point)
        out += fmt::format("{}:{}={};", name.size(), name, value);
    return out;
}

// A JSON number (not true or false, which nlohmann would read as 1 and 0).
bool isNumber(nlohmann::json const& v) {
    return v.is_number();
}

// Whether `v` is a JSON integer from `lowest` to `highest` (not 1.5, which would be read as 1;
// not 2^64 - 1, which would be read as -1; not 1e300, undefined behaviour to convert).
bool integerIn(nlohmann::json const& v, std::int64_t lowest, std::int64_t highest) {
    if (v.is_number_unsigned())
        return highest >= 0 && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(highest);
    return v.is_number_integer() && v.get<std::int64_t>() >= lowest &&
           v.get<std::int64_t>() <= highest;
}

nlohmann::json keyJson(TuningKey const& k) {
    return {{"problem", k.problem},   {"summary", k.summary},    {"target", k.target},
            {"gpu", k.gpu},           {"driver", k.driver},      {"kiln", k.kiln},
            {"pipeline", k.pipeline}, {"evaluator", k.evaluator}};
}

} // namespace

std::string hashText(std::string const& text) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return fmt::format("{:016x}", h);
}

std::string TuningKey::hash() const {
    // Fields joined with a separator that cannot occur in any of them unescaped.
    return hashText(fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", problem, target, gpu,
                                driver, kiln, pipeline, evaluator));
}

bool TuningKey::operator==(TuningKey const& o) const {
    return problem == o.problem && target == o.target && gpu == o.gpu && driver == o.driver &&
           kiln == o.kiln && pipeline == o.pipeline && evaluator == o.evaluator;
}

std::string pipelineHash(std::string const& pipelineFile) {
    std::string const text = readTextFile(pipelineFile);
    std::string all = text;
    auto const json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_object() && json.contains("steps") && json["steps"].is_array())
        for (auto const& step : json["steps"])
            if (step.is_object() && step.contains("ruleset") && step["ruleset"].is_string())
                all += "\x1e" + readTextFile((std::filesystem::path(pipelineFile).parent_path() /
                                              step["ruleset"].get<std::string>())
                                                 .string());
    return hashText(all);
}

std::string TuningRecord::toJson() const {
    nlohmann::json j;
    j["key"] = key.hash();
    j["key_fields"] = keyJson(key);
    j["point"] = point;
    j["status"] = status == RecordStatus::Ok ? "ok" : "failed";
    if (status == RecordStatus::Ok) {
        j["us"] = microseconds;
        j["spread"] = spread;
        j["samples"] = samples;
    } else {
        j["stage"] = stage;
        j["error"] = error;
    }
    j["compile_s"] = compileSeconds;
    if (!extra.empty())
        j["extra"] = extra;
    j["at"] = at.empty() ? nowUtc() : at;
    return j.dump();
}

std::optional<TuningRecord> TuningDatabase::parseLine(std::string const& line, std::string* error) {
    auto const j = nlohmann::json::parse(line, nullptr, false);
    auto const bad = [&](std::string const& message) -> std::optional<TuningRecord> {
        if (error)
            *error = message;
        return std::nullopt;
    };
    if (j.is_discarded())
        return bad("not a JSON value (a torn or damaged line)");
    if (!j.is_object())
        return bad("not a JSON object");
    try {
        TuningRecord r;
        auto const& k = j.at("key_fields");
        r.key = {k.at("problem").get<std::string>(),  k.value("summary", ""),
                 k.at("target").get<std::string>(),   k.at("gpu").get<std::string>(),
                 k.at("driver").get<std::string>(),   k.at("kiln").get<std::string>(),
                 k.at("pipeline").get<std::string>(), k.at("evaluator").get<std::string>()};
        if (j.at("key").get<std::string>() != r.key.hash())
            return bad("its \"key\" does not match its \"key_fields\"");
        // Parameters are 64-bit integers.
        for (auto const& [name, value] : j.at("point").items())
            if (!integerIn(value, std::numeric_limits<std::int64_t>::min(),
                           std::numeric_limits<std::int64_t>::max()))
                return bad(
                    fmt::format("parameter '{}' is {}, not a 64-bit integer", name, value.dump()));
        r.point = j.at("point").get<std::map<std::string, std::int64_t>>();
        // Numbers are numbers (true is no time), and a count of repetitions a whole number.
        for (char const* field : {"us", "spread", "compile_s"})
            if (j.contains(field) && !isNumber(j.at(field)))
                return bad(fmt::format("\"{}\" is {}, not a number", field, j.at(field).dump()));
        if (j.contains("samples") &&
            !integerIn(j.at("samples"), 0, std::numeric_limits<int>::max()))
            return bad(fmt::format("\"samples\" is {}, not a count of repetitions",
                                   j.at("samples").dump()));
        std::string const status = j.at("status").get<std::string>();
        if (status == "ok") {
            r.status = RecordStatus::Ok;
            r.microseconds = j.at("us").get<double>();
            r.spread = j.value("spread", 0.0);
            r.samples = j.value("samples", 0);
            // A time is a positive, finite number; a spread is not negative.
            if (!(std::isfinite(r.microseconds) && r.microseconds > 0))
                return bad(fmt::format("\"us\" is {}, not a positive time", j.at("us").dump()));
            if (!(std::isfinite(r.spread) && r.spread >= 0))
                return bad("\"spread\" is negative or not finite");
        } else if (status == "failed") {
            r.status = RecordStatus::Failed;
            r.stage = j.value("stage", "");
            r.error = j.value("error", "");
        } else {
            return bad(fmt::format("unknown status '{}'", status));
        }
        r.compileSeconds = j.value("compile_s", 0.0);
        if (j.contains("extra")) {
            for (auto const& [name, value] : j.at("extra").items())
                if (!isNumber(value))
                    return bad(
                        fmt::format("\"extra\" '{}' is {}, not a number", name, value.dump()));
            r.extra = j.at("extra").get<std::map<std::string, double>>();
        }
        r.at = j.value("at", "");
        return r;
    } catch (nlohmann::json::exception const& e) {
        return bad(fmt::format("not a tuning record: {}", e.what()));
    }
}

TuningDatabase::TuningDatabase(std::string path, Access access)
    : path_(std::move(path))
    , readOnly_(access == Access::Read) {
    auto const folder = std::filesystem::path(path_).parent_path();
    std::error_code ec;
    if (!folder.empty() && access == Access::Append)
        std::filesystem::create_directories(folder, ec);
    fd_ = access == Access::Append
              ? ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
              : ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
        fail("cannot open the tuning database '{}': {}", path_, std::strerror(errno));
    std::string const text = readTextFile(path_);
    std::int64_t number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        bool const torn = end == std::string::npos;
        if (torn)
            end = text.size();
        ++number;
        std::string const line = text.substr(start, end - start);
        start = end + 1;
        if (line.empty())
            continue;
        std::string error;
        auto record = parseLine(line, &error);
        if (!record) {
            problems_.push_back(
                {number, torn ? "a torn last line (its writer was killed): " + error : error});
            continue;
        }
        index_[indexKey(record->key, record->point)] = records_.size();
        records_.push_back(std::move(*record));
    }
    // A torn last line has no newline: start the next record on a line of its own.
    if (access == Access::Append && !text.empty() && text.back() != '\n' &&
        ::write(fd_, "\n", 1) != 1)
        fail("cannot write to the tuning database '{}': {}", path_, std::strerror(errno));
}

TuningDatabase::~TuningDatabase() {
    if (fd_ >= 0)
        ::close(fd_);
}

void TuningDatabase::append(TuningRecord const& record) {
    KILN_ASSERT(readOnly_ == false, "appending to a tuning database opened only to read");
    TuningRecord r = record;
    if (r.at.empty())
        r.at = nowUtc();
    std::string const line = r.toJson() + "\n";
    // One write() of the whole line on an O_APPEND descriptor: the kernel has it once this
    // returns, so a SIGKILL later cannot lose it; other writers' lines do not interleave with it.
    std::size_t done = 0;
    while (done < line.size()) {
        ssize_t const n = ::write(fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail("cannot write to the tuning database '{}': {}", path_, std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
    index_[indexKey(r.key, r.point)] = records_.size();
    records_.push_back(std::move(r));
}

TuningRecord const* TuningDatabase::find(TuningKey const& key,
                                         std::map<std::string, std::int64_t> const& point) const {
    auto it = index_.find(indexKey(key, point));
    return it == index_.end() ? nullptr : &records_[it->second];
}

std::optional<TuningRecord> TuningDatabase::best(TuningKey const& key) const {
    // Each point's latest record: a finalist measured again supersedes its first measurement.
    std::vector<TuningRecord> same;
    for (auto const& [indexed, i] : index_)
        if (records_[i].key == key)
            same.push_back(records_[i]);
    return bestOf(same);
}

std::vector<TuningKey> TuningDatabase::keys() const {
    std::vector<TuningKey> out;
    for (auto const& r : records_)
        if (std::find(out.begin(), out.end(), r.key) == out.end())
            out.push_back(r.key);
    return out;
}

namespace {

// The gap below which two medians tie: twice the standard error of their difference. A median
// of n samples is uncertain by about 1.25 sigma / sqrt(n), and sigma is about (p90 - p10) / 2.56
// for normal samples; the spread itself (the samples' width, not the median's uncertainty) took
// a layer norm at 88.80 us for a tie with one at 87.94 (100 samples each, spreads 1.6%), which
// kiln run then measured 1.0 us apart, round after round. Never more than the smaller of the
// two spreads, though: a slow point's few samples with an outlier among them (a layer norm at
// 137.5 us, its (p90 - p10) as wide as its median) are an uncertain median, not a tie with one
// at 87.8. Records without a count of samples (written before it was kept) tie within the
// smaller spread alone, as before.
double tieGap(TuningRecord const& a, TuningRecord const& b) {
    double const spread = std::min(a.spread, b.spread) * a.microseconds;
    if (a.samples < 2 || b.samples < 2)
        return spread;
    auto error = [](TuningRecord const& r) {
        return 1.2533 / 2.5631 * r.spread * r.microseconds / std::sqrt(double(r.samples));
    };
    return std::min(spread, 2 * std::hypot(error(a), error(b)));
}

} // namespace

bool isFinalist(TuningRecord const& r) {
    return r.extra.contains(kRetimedExtra);
}

std::optional<TuningRecord> bestOf(std::vector<TuningRecord> const& records) {
    // Where a sweep measured its finalists again, they alone compete: they were measured side
    // by side at the end, the others once each in batches, and a point measured once must not
    // win over them by a tie (a layer norm sweep's first pass took a LANES=128 point at 88.35
    // us, 14th by time, for a tie with the 87.68 us finalist).
    bool const anyFinalist = std::ranges::any_of(
        records, [](auto const& r) { return r.status == RecordStatus::Ok && isFinalist(r); });
    auto competes = [&](TuningRecord const& r) {
        return r.status == RecordStatus::Ok && (!anyFinalist || isFinalist(r));
    };
    // The fastest by (time, point): a total order, so the winner does not depend on the order
    // of the records in the file.
    TuningRecord const* fastest = nullptr;
    for (auto const& r : records)
        if (competes(r) && (!fastest || r.microseconds < fastest->microseconds ||
                            (r.microseconds == fastest->microseconds && r.point < fastest->point)))
            fastest = &r;
    if (!fastest)
        return std::nullopt;
    TuningRecord const* chosen = fastest;
    for (auto const& r : records) {
        if (!competes(r))
            continue;
        bool const tie = r.microseconds - fastest->microseconds <= tieGap(*fastest, r);
        if (tie && r.point < chosen->point)
            chosen = &r;
    }
    return *chosen;
}

} // namespace kiln::scheduler
