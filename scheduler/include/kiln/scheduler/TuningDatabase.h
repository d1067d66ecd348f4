// TuningDatabase.h: every candidate a sweep evaluates, in an append-only JSON Lines file.
//
// One line per candidate, written with a single write() and flushed as soon as the candidate is
// evaluated, so a sweep killed at any moment loses at most the candidate in flight, and a sweep
// that starts again over the same file skips what is done. A record is reused only under the
// same key: the problem (operations, shapes, dtypes, strides, alignment), the target, the GPU
// model, the driver version, the Kiln version, the hash of the rules pipeline (its files'
// bytes) and the evaluator; the whole key is compared, not only its hash. A line that does not
// parse (a torn last line from a killed writer, a damaged one) is reported with its line number
// and skipped.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::scheduler {

/// What a tuning result is valid for.
struct TuningKey {
    std::string problem;   ///< Problem::canonical()
    std::string summary;   ///< Problem::summary(), for listings only (not compared)
    std::string target;    ///< "sm_90a"
    std::string gpu;       ///< the device's name, or "none" for the cost model
    std::string driver;    ///< the driver's version, or "none"
    std::string kiln;      ///< Kiln's version
    std::string pipeline;  ///< pipelineHash() of the lowering pipeline
    std::string evaluator; ///< "model", "measured:cuda", "measured:interpreter"...

    /// A short stable hash of every compared field (16 hex digits).
    std::string hash() const;
    bool operator==(TuningKey const& o) const;
};

/// How a candidate came out.
enum class RecordStatus : std::uint8_t { Ok, Failed };

/// One evaluated candidate.
struct TuningRecord {
    TuningKey key;
    std::map<std::string, std::int64_t> point;
    RecordStatus status = RecordStatus::Ok;
    double microseconds = 0;   ///< median (or estimate) when Ok
    double spread = 0;         ///< (p90 - p10) / median of the repetitions; 0 for the model
    int samples = 0;           ///< repetitions timed
    std::string stage;         ///< on failure: compile, timeout, crash, hang, check, run
    std::string error;         ///< on failure: what happened
    double compileSeconds = 0; ///< time spent compiling it
    std::map<std::string, double> extra; ///< registers, shared_bytes, predicted_us...
    std::string at;                      ///< when it was recorded (UTC, ISO 8601)

    /// The JSON line (without the newline).
    std::string toJson() const;
};

/// A line of the file that could not be read.
struct DatabaseProblem {
    std::int64_t line = 0;
    std::string message;
};

/// An FNV-1a 64-bit hash of `text` as 16 hex digits.
std::string hashText(std::string const& text);

/// The hash of a pipeline: of its file and of every rule set file it names, in order.
std::string pipelineHash(std::string const& pipelineFile);

class TuningDatabase {
public:
    /// How a database is opened: to append to (created, with its folder, when missing), or
    /// only to read (`kiln db list`, `best`, ...), which never writes to the file.
    enum class Access : std::uint8_t { Append, Read };
    /// Opens (and reads) the database at `path`.
    explicit TuningDatabase(std::string path, Access access = Access::Append);
    ~TuningDatabase();
    TuningDatabase(TuningDatabase const&) = delete;
    TuningDatabase& operator=(TuningDatabase const&) = delete;

    /// Every record read or appended, in file order.
    std::vector<TuningRecord> const& records() const { return records_; }
    /// Lines that could not be read, with their numbers.
    std::vector<DatabaseProblem> const& problems() const { return problems_; }
    std::string const& path() const { return path_; }

    /// Appends `record` as one line and flushes it to the file before returning.
    void append(TuningRecord const& record);

    /// The record of `point` under `key`, if any (the last one written).
    TuningRecord const* find(TuningKey const& key,
                             std::map<std::string, std::int64_t> const& point) const;
    /// The fastest Ok record under `key`, each point's latest record standing for it (a sweep's
    /// finalists measured again supersede their first measurement); near-ties broken as bestOf()
    /// does.
    std::optional<TuningRecord> best(TuningKey const& key) const;
    /// Keys in order of first appearance.
    std::vector<TuningKey> keys() const;

    /// Parses one line; a message on failure.
    static std::optional<TuningRecord> parseLine(std::string const& line, std::string* error);

private:
    std::string path_;
    bool readOnly_ = false;
    int fd_ = -1;
    std::vector<TuningRecord> records_;
    std::vector<DatabaseProblem> problems_;
    std::map<std::string, std::size_t> index_; ///< key fields and point -> record
};

/// The extra of a record that a sweep measured again at the end, as one of its finalists.
inline constexpr char const kRetimedExtra[] = "retimed";

/// Whether `r` is a sweep's finalist, measured again at the end (kRetimedExtra).
bool isFinalist(TuningRecord const& r);

/// The winner among Ok records (among the finalists alone, where some records are finalists:
/// see isFinalist()): the fastest median; a record whose median is within the noise
/// of the fastest (twice the standard error of the two medians' difference, from their spreads
/// and counts of samples, at most the smaller spread times the fastest median) ties with it, and
/// ties go to the smallest point (compared as NAME -> value maps, names in alphabetical order),
/// so two sweeps over the same results, in any order, pick the same winner.
std::optional<TuningRecord> bestOf(std::vector<TuningRecord> const& records);

} // namespace kiln::scheduler
