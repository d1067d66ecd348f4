// libFuzzer target: the tuning database reader. The input is the file's bytes. Opening it to
// read must not fail (a line it cannot read is a problem with its number, not an error); every
// record it keeps must be found again under its key and point, survive toJson() and
// parseLine() unchanged, and the best record of a key must be an Ok one of that key. Opening
// it to append and appending one record must keep every record and problem, and add that one.
// Anything else (a crash, undefined behaviour, a leak, an exception) is a finding.
#include "kiln/scheduler/TuningDatabase.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

[[noreturn]] void finding(std::string const& what) {
    std::fprintf(stderr, "%s\n", what.c_str());
    std::abort();
}

std::string const& databasePath() {
    static std::string const path = [] {
        char const* folder = std::getenv("TMPDIR");
        return std::string(folder && *folder ? folder : "/tmp") + "/kiln-fuzz-tuning-" +
               std::to_string(::getpid()) + ".jsonl";
    }();
    return path;
}

void write(std::string const& path, std::uint8_t const* data, std::size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<char const*>(data), static_cast<std::streamsize>(size));
    if (!out)
        finding("cannot write " + path);
}

void checkRecords(kiln::scheduler::TuningDatabase const& db) {
    using kiln::scheduler::TuningDatabase;
    for (auto const& r : db.records()) {
        auto const* found = db.find(r.key, r.point);
        if (!found || !(found->key == r.key) || found->point != r.point)
            finding("a record is not found under its own key and point");
        std::string const line = r.toJson();
        std::string error;
        auto const again = TuningDatabase::parseLine(line, &error);
        if (!again)
            finding("a record's own line does not parse: " + error + "\n" + line);
        if (again->toJson() != line)
            finding("a record changes through its line:\n" + line + "\n" + again->toJson());
    }
    for (auto const& key : db.keys()) {
        auto const best = db.best(key);
        if (best && (!(best->key == key) || best->status != kiln::scheduler::RecordStatus::Ok))
            finding("the best record of a key is not an Ok record of that key");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    using kiln::scheduler::TuningDatabase;
    std::string const& path = databasePath();
    write(path, data, size);
    std::size_t records = 0, problems = 0;
    {
        TuningDatabase const db(path, TuningDatabase::Access::Read);
        checkRecords(db);
        records = db.records().size();
        problems = db.problems().size();
    }
    kiln::scheduler::TuningRecord added;
    added.key = {.problem = "fuzz",
                 .target = "sm_90a",
                 .gpu = "none",
                 .driver = "none",
                 .kiln = "0",
                 .pipeline = "0",
                 .evaluator = "model"};
    added.point = {{"VEC", 4}};
    added.microseconds = 1.5;
    added.at = "2026-11-25T00:00:00Z";
    {
        TuningDatabase db(path, TuningDatabase::Access::Append);
        db.append(added);
    }
    TuningDatabase const db(path, TuningDatabase::Access::Read);
    if (db.records().size() != records + 1 || db.problems().size() != problems)
        finding("appending one record to a database changed what it reads besides that record");
    if (db.records().back().toJson() != added.toJson())
        finding("the record appended is not the last one read");
    checkRecords(db);
    ::unlink(path.c_str());
    return 0;
}
