// ArchDatabaseFileTest.cpp: the generated database matches its schema, KILN_ARCH_FILE replaces
// it, and a malformed replacement is a clear error that points into the file.
#include "JsonSchemaCheck.h"
#include "kiln/arch-db/ArchError.h"
#include "kiln/arch-db/ArchJson.h"
#include "kiln/arch-db/ArchLibrary.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

namespace kiln::arch {
namespace {

using Json = nlohmann::json;

Json readJsonFile(std::string const& path) {
    std::ifstream file(path);
    EXPECT_TRUE(file) << path;
    std::stringstream text;
    text << file.rdbuf();
    return Json::parse(text.str());
}

Json schema() {
    return readJsonFile(KILN_ARCH_DB_SCHEMA);
}

Json embedded() {
    return Json::parse(ArchLibrary::embeddedJson());
}

/// A file under the test's temporary folder that is removed afterwards.
class TemporaryFile {
public:
    explicit TemporaryFile(std::string const& text) {
        path_ =
            (std::filesystem::temp_directory_path() / ("kiln-arch-" + std::to_string(::getpid()) +
                                                       "-" + std::to_string(counter_++) + ".json"))
                .string();
        std::ofstream(path_) << text;
    }
    ~TemporaryFile() { std::filesystem::remove(path_); }
    TemporaryFile(TemporaryFile const&) = delete;
    TemporaryFile& operator=(TemporaryFile const&) = delete;
    std::string const& path() const { return path_; }

private:
    static inline int counter_ = 0;
    std::string path_;
};

/// Sets KILN_ARCH_FILE for the lifetime of the object.
class ArchFileVariable {
public:
    explicit ArchFileVariable(std::string const& value) {
        ::setenv(kArchFileVariable, value.c_str(), 1);
    }
    ~ArchFileVariable() { ::unsetenv(kArchFileVariable); }
    ArchFileVariable(ArchFileVariable const&) = delete;
    ArchFileVariable& operator=(ArchFileVariable const&) = delete;
};

TEST(ArchDatabaseFile, GeneratedFileIsWhatIsEmbedded) {
    EXPECT_EQ(readJsonFile(KILN_ARCH_DB_JSON), embedded());
}

TEST(ArchDatabaseFile, GeneratedDatabaseMatchesTheSchema) {
    auto errors = test::checkAgainstSchema(schema(), embedded());
    EXPECT_TRUE(errors.empty()) << errors.front();
}

TEST(ArchDatabaseFile, SchemaAgreesWithTheLibrary) {
    Json s = schema();
    std::vector<std::string> capabilities = s["$defs"]["capability"]["enum"];
    std::vector<std::string> expected;
    for (auto const& info : kCapabilityTable) {
        expected.emplace_back(info.name);
    }
    EXPECT_EQ(capabilities, expected);
    std::vector<std::string> required = s["$defs"]["target"]["properties"]["facts"]["required"];
    EXPECT_EQ(required, std::vector<std::string>(kRequiredFacts.begin(), kRequiredFacts.end()));
    std::vector<std::string> queues = s["$defs"]["instruction"]["properties"]["wait_queue"]["enum"];
    EXPECT_EQ(queues, std::vector<std::string>(kWaitQueueNames.begin(), kWaitQueueNames.end()));
    EXPECT_EQ(s["properties"]["schema_version"]["enum"][0], kSchemaVersion);
}

/// One way to break the database, what the reader must say, and whether the schema sees it.
struct Breakage {
    char const* name;
    std::function<void(Json&)> edit;
    char const* expectedInMessage;
    bool schemaRejects;
};

std::vector<Breakage> breakages() {
    auto sm90a = [](Json& db) -> Json& {
        for (auto& target : db["targets"]) {
            if (target["name"] == "sm_90a") {
                return target;
            }
        }
        throw std::runtime_error("no sm_90a");
    };
    return {
        {"missing latency",
         [=](Json& db) { sm90a(db)["instructions"]["ld.global.v4.f32"].erase("latency"); },
         "/instructions/ld.global.v4.f32: missing required key \"latency\"", true},
        {"latency of the wrong type",
         [=](Json& db) { sm90a(db)["instructions"]["ld.global.v4.f32"]["latency"] = "fast"; },
         "/instructions/ld.global.v4.f32/latency: expected an integer", true},
        {"negative issue cycles",
         [=](Json& db) { sm90a(db)["instructions"]["fma.rn.f32"]["issue_cycles"] = -1; },
         "issue_cycles: must be at least 0", true},
        {"misspelt key", [=](Json& db) { sm90a(db)["instructions"]["fma.rn.f32"]["latncy"] = 4; },
         "unknown key \"latncy\"", true},
        {"unknown capability",
         [=](Json& db) { sm90a(db)["capabilities"].push_back("HasWarpSpeed"); },
         "unknown capability \"HasWarpSpeed\"", true},
        {"unknown wait queue",
         [=](Json& db) { sm90a(db)["instructions"]["fma.rn.f32"]["wait_queue"] = "vmcount"; },
         "unknown wait queue \"vmcount\"", true},
        {"missing required fact", [=](Json& db) { sm90a(db)["facts"].erase("wave_size"); },
         "missing required fact \"wave_size\"", true},
        {"fact without source", [=](Json& db) { sm90a(db)["facts"]["l2_bytes"].erase("source"); },
         "/facts/l2_bytes: missing required key \"source\"", true},
        {"empty latency source",
         [=](Json& db) { sm90a(db)["instructions"]["fma.rn.f32"]["latency_source"] = ""; },
         "every figure needs a source", true},
        {"matrix instruction without shape",
         [=](Json& db) {
             sm90a(db)["instructions"]["wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"].erase(
                 "matrix");
         },
         "\"matrix\" is required for, and only allowed on, kind \"matrix\"", false},
        {"unknown vendor", [=](Json& db) { sm90a(db)["vendor"] = "intel"; },
         "expected \"nvidia\" or \"amd\"", true},
        {"wrong schema version", [](Json& db) { db["schema_version"] = 2; },
         "this Kiln reads version 1, the file is 2", true},
        {"no targets", [](Json& db) { db["targets"] = Json::array(); },
         "expected a non-empty array of targets", true},
        {"default target the file does not have",
         [](Json& db) {
             db["default_targets"] = Json::array({"sm_90a", "sm_99"});
         },
         "/default_targets/1: 'sm_99' is not a target of this database", false},
        {"default target that is not a name",
         [](Json& db) { db["default_targets"] = Json::array({7}); },
         "/default_targets/0: expected a string", true},
        {"duplicate target", [=](Json& db) { db["targets"].push_back(sm90a(db)); },
         "target 'sm_90a' is defined twice", false},
        {"alias that collides with a name",
         [=](Json& db) {
             sm90a(db)["instructions"]["fma.rn.f32"]["aliases"] = Json::array({"add.f32"});
         },
         "'add.f32' is defined twice", false},
    };
}

TEST(ArchDatabaseFile, MalformedDatabasesAreClearErrors) {
    for (auto const& breakage : breakages()) {
        Json db = embedded();
        breakage.edit(db);
        try {
            ArchLibrary::fromJson(db.dump(), "broken.json");
            ADD_FAILURE() << breakage.name << ": accepted";
        } catch (ArchError const& error) {
            std::string message = error.what();
            EXPECT_EQ(error.kind(), ArchError::Kind::MalformedDatabase) << breakage.name;
            EXPECT_EQ(message.rfind("broken.json: ", 0), 0u) << message;
            EXPECT_NE(message.find(breakage.expectedInMessage), std::string::npos)
                << breakage.name << ": " << message;
        }
        auto schemaErrors = test::checkAgainstSchema(schema(), db);
        EXPECT_EQ(!schemaErrors.empty(), breakage.schemaRejects) << breakage.name;
    }
}

TEST(ArchDatabaseFile, NotJsonAtAll) {
    try {
        ArchLibrary::fromJson("{\"schema_version\": 1, \"targets\": [", "truncated.json");
        ADD_FAILURE() << "accepted";
    } catch (ArchError const& error) {
        EXPECT_NE(std::string(error.what()).find("truncated.json: not valid JSON"),
                  std::string::npos)
            << error.what();
    }
}

TEST(ArchDatabaseFile, KilnArchFileReplacesTheDatabase) {
    // A replacement with one corrected figure and one new target.
    Json db = embedded();
    for (auto& target : db["targets"]) {
        if (target["name"] == "sm_90a") {
            target["facts"]["multiprocessor_count"]["value"] = 114;
            target["facts"]["multiprocessor_count"]["source"] = "H100 PCIe datasheet";
            target["reference_part"] = "NVIDIA H100 PCIe";
            Json copy = target;
            copy["name"] = "sm_90x";
            db["targets"].push_back(copy);
            break;
        }
    }
    TemporaryFile file(db.dump(2));
    ArchFileVariable variable(file.path());
    ArchLibrary library = ArchLibrary::loadFromEnvironment();
    EXPECT_EQ(library.origin(), file.path());
    EXPECT_EQ(library.target("sm_90a").fact("multiprocessor_count"), 114);
    EXPECT_EQ(library.target("sm_90a").referencePart(), "NVIDIA H100 PCIe");
    EXPECT_NE(library.find("sm_90x"), nullptr);
    EXPECT_EQ(library.targets().size(), ArchLibrary::embedded().targets().size() + 1);
    // The unknown-target message names the replacement file.
    try {
        library.target("sm_100");
        ADD_FAILURE() << "accepted";
    } catch (ArchError const& error) {
        EXPECT_NE(std::string(error.what()).find(" in " + file.path()), std::string::npos);
    }
}

TEST(ArchDatabaseFile, DefaultTargetsComeFromTheDatabase) {
    // What kiln emit, export and tune compile for when no target is named and no GPU decides.
    ArchLibrary const embeddedLibrary = ArchLibrary::embedded();
    EXPECT_EQ(embeddedLibrary.defaultTargets(), (std::vector<std::string>{"sm_90a", "gfx942"}));
    EXPECT_EQ(embeddedLibrary.defaultTarget(), "sm_90a");
    // A replacement chooses its own, in its order.
    Json db = embedded();
    db["default_targets"] = Json::array({"gfx90a", "sm_80"});
    EXPECT_EQ(ArchLibrary::fromJson(db.dump(), "mine.json").defaultTarget(), "gfx90a");
    // A replacement may name none; a command that needs one then says so.
    db.erase("default_targets");
    ArchLibrary const none = ArchLibrary::fromJson(db.dump(), "mine.json");
    EXPECT_TRUE(none.defaultTargets().empty());
    try {
        (void)none.defaultTarget();
        ADD_FAILURE() << "a default target from a database that names none";
    } catch (ArchError const& error) {
        EXPECT_EQ(error.kind(), ArchError::Kind::UnknownTarget);
        EXPECT_EQ(std::string(error.what())
                      .rfind("mine.json names no default target "
                             "(\"default_targets\"); name one of its "
                             "targets: gfx1100, gfx90a, ",
                             0),
                  0u)
            << error.what();
    }
}

TEST(ArchDatabaseFile, EmptyVariableMeansEmbedded) {
    ArchFileVariable variable("");
    EXPECT_EQ(ArchLibrary::loadFromEnvironment().origin(), "embedded arch database");
}

TEST(ArchDatabaseFile, MalformedReplacementIsAClearError) {
    TemporaryFile file(R"({"schema_version": 1, "targets": [{"name": "sm_90a"}]})");
    ArchFileVariable variable(file.path());
    try {
        ArchLibrary::loadFromEnvironment();
        ADD_FAILURE() << "accepted";
    } catch (ArchError const& error) {
        std::string message = error.what();
        EXPECT_EQ(message.rfind(file.path() + ": /targets/0: missing required key", 0), 0u)
            << message;
    }
}

TEST(ArchDatabaseFile, MissingReplacementIsAClearError) {
    ArchFileVariable variable("/nonexistent/kiln-arch.json");
    try {
        ArchLibrary::loadFromEnvironment();
        ADD_FAILURE() << "accepted";
    } catch (ArchError const& error) {
        EXPECT_STREQ(error.what(),
                     "KILN_ARCH_FILE=/nonexistent/kiln-arch.json: cannot open the file");
    }
}

TEST(ArchDatabaseFile, SchemaCheckerRejectsWhatItShould) {
    // The checker itself must be able to fail, keyword by keyword.
    Json s = {{"type", "object"},
              {"required", {"a"}},
              {"additionalProperties", false},
              {"properties",
               {{"a", {{"type", "integer"}, {"minimum", 1}}},
                {"b", {{"type", "string"}, {"pattern", "^x+$"}, {"minLength", 2}}},
                {"c", {{"type", "array"}, {"minItems", 1}, {"items", {{"enum", {1, 2}}}}}}}}};
    EXPECT_TRUE(test::checkAgainstSchema(s, {{"a", 1}, {"b", "xx"}, {"c", {1}}}).empty());
    EXPECT_EQ(test::checkAgainstSchema(s, Json::object()).size(), 1u);
    EXPECT_EQ(test::checkAgainstSchema(s, {{"a", 0}}).size(), 1u);
    EXPECT_EQ(test::checkAgainstSchema(s, {{"a", "1"}}).size(), 1u);
    EXPECT_EQ(test::checkAgainstSchema(s, {{"a", 1}, {"b", "xy"}}).size(), 1u);
    EXPECT_EQ(test::checkAgainstSchema(s, {{"a", 1}, {"b", "x"}}).size(), 1u);
    EXPECT_EQ(test::checkAgainstSchema(s, {{"a", 1}, {"c", Json::array()}}).size(), 1u);
    EXPECT_EQ(test::checkAgainstSchema(s, {{"a", 1}, {"c", {3}}}).size(), 1u);
    EXPECT_EQ(test::checkAgainstSchema(s, {{"a", 1}, {"d", 1}}).size(), 1u);
    EXPECT_EQ(test::checkAgainstSchema({{"not", Json::object()}}, 1).size(), 1u);
}

} // namespace
} // namespace kiln::arch
