// SourceJson: Kiln's JSON parser with positions, and the JsonValue reader.
#include "kiln/graph/SourceJson.h"

#include <array>
#include <gtest/gtest.h>
#include <string>

namespace kiln {
namespace {

/// what() of the UserError that parsing `text` throws, or "no error".
std::string syntaxError(std::string_view text) {
    try {
        parseJson(text, "in.json");
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

/// what() of the UserError that `read` throws on the parsed `text`.
template <class F>
std::string readError(std::string_view text, F read) {
    JsonValue const root = parseJson(text, "in.json");
    try {
        read(root);
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

TEST(SourceJson, RecordsWhereEveryValueAndKeyStarts) {
    JsonValue const root =
        parseJson("{\n  \"a\": [1, {\"b\": true}],\n\t\"c\": \"x\"\n}", "f.json");
    auto const& doc = *root.document();
    EXPECT_EQ(doc.valuePosition("")->line, 1);
    EXPECT_EQ(doc.valuePosition("")->column, 1);
    EXPECT_EQ(doc.keyPosition("/a")->column, 3);
    EXPECT_EQ(doc.valuePosition("/a")->line, 2);
    EXPECT_EQ(doc.valuePosition("/a")->column, 8);
    EXPECT_EQ(doc.valuePosition("/a/0")->column, 9);
    EXPECT_EQ(doc.valuePosition("/a/1")->column, 12);
    EXPECT_EQ(doc.valuePosition("/a/1/b")->column, 18);
    EXPECT_EQ(doc.valuePosition("/c")->line, 3);
    EXPECT_EQ(doc.valuePosition("/c")->column, 7); // a tab counts as one byte
    EXPECT_EQ(doc.valuePosition("/c")->offset, 33u);
    EXPECT_FALSE(doc.valuePosition("/d").has_value());
}

TEST(SourceJson, KeepsMemberOrderAndValues) {
    JsonValue const root =
        parseJson(R"({"z": 1, "a": -2.5e1, "m": [null, false], "s": "\u00e9\ud83d\ude00"})", "f");
    std::vector<std::string> keys;
    for (auto const& [key, value] : root.members())
        keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"z", "a", "m", "s"}));
    EXPECT_EQ(root["z"].asInt(), 1);
    EXPECT_DOUBLE_EQ(root["a"].asNumber(), -25.0);
    EXPECT_TRUE(root["m"][0].isNull());
    EXPECT_FALSE(root["m"][1].asBool());
    EXPECT_EQ(root["s"].asString(), "\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(SourceJson, EscapesPointerTokens) {
    EXPECT_EQ(appendPointer("/args", "a/b~c"), "/args/a~1b~0c");
    JsonValue const root = parseJson(R"({"a/b": {"x~": 3}})", "f");
    EXPECT_EQ(root["a/b"]["x~"].pointer(), "/a~1b/x~0");
    EXPECT_EQ(root["a/b"]["x~"].location().column, 16);
}

TEST(SourceJson, InvalidUtf8PassesThrough) {
    JsonValue const root = parseJson("{\"s\": \"a\xFF\xFE\"}", "f");
    EXPECT_EQ(root["s"].asString(), "a\xFF\xFE");
}

TEST(SourceJson, SkipsAByteOrderMark) {
    JsonValue const root = parseJson("\xEF\xBB\xBF{\"a\": 1}", "f");
    EXPECT_EQ(root["a"].location().column, 7);
}

TEST(SourceJson, ReportsSyntaxErrorsAtTheExactCharacter) {
    EXPECT_EQ(syntaxError(""), "in.json:1:1: error: the file is empty; expected a JSON value");
    EXPECT_EQ(syntaxError("  \n "),
              "in.json:2:2: error: the file holds only white space; expected a JSON value");
    EXPECT_EQ(syntaxError("{\"a\": [1, 2,]}"),
              "in.json:1:12: error: trailing comma before ']' [at /a]");
    EXPECT_EQ(syntaxError("{\"a\": 1,\n}"), "in.json:1:8: error: trailing comma before '}'");
    EXPECT_EQ(syntaxError("{\"a\": \"abc"), "in.json:1:7: error: unterminated string [at /a]");
    EXPECT_EQ(syntaxError("{\"a\": \"ab\ncd\"}"),
              "in.json:1:10: error: line break inside a string (a missing closing quote?) [at /a]");
    EXPECT_EQ(
        syntaxError("{\"a\": \"x\\qy\"}"),
        "in.json:1:9: error: invalid escape '\\q'; JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t and "
        "\\uXXXX [at /a]");
    EXPECT_EQ(syntaxError("{\"a\": \"\\u12G4\"}"),
              "in.json:1:8: error: '\\u' needs four hexadecimal digits [at /a]");
    EXPECT_EQ(
        syntaxError("{\"a\": \"\\ud800x\"}"),
        "in.json:1:8: error: '\\uD800' starts a surrogate pair that has no second half [at /a]");
    EXPECT_EQ(syntaxError("{\"a\": \"\\udc00\"}"),
              "in.json:1:8: error: '\\uDC00' is the second half of a surrogate pair without the "
              "first [at /a]");
    EXPECT_EQ(syntaxError("{\"a\": 1, \"b\": 2, \"a\": 3}"),
              "in.json:1:18: error: duplicate key 'a' (first at line 1, column 2) [at /a]");
    EXPECT_EQ(syntaxError("[\"a\tb\"]"), "in.json:1:4: error: control character U+0009 inside a "
                                         "string; write it as an escape [at /0]");
    EXPECT_EQ(syntaxError("[99999999999999999999]"),
              "in.json:1:2: error: integer 99999999999999999999 does not fit in 64 bits [at /0]");
    EXPECT_EQ(syntaxError("[1e999]"),
              "in.json:1:2: error: number 1e999 is too large for a double [at /0]");
    EXPECT_EQ(
        syntaxError("[012]"),
        "in.json:1:2: error: numbers cannot start with 0 (no octal, no leading zeros) [at /0]");
    EXPECT_EQ(syntaxError("[1.]"), "in.json:1:4: error: expected a digit after '.' [at /0]");
    EXPECT_EQ(syntaxError("[-]"), "in.json:1:3: error: expected a digit after '-' [at /0]");
    EXPECT_EQ(syntaxError("{\"a\": tru}"),
              "in.json:1:7: error: unexpected word 'tru'; strings need double quotes [at /a]");
    EXPECT_EQ(syntaxError("[NaN]"),
              "in.json:1:2: error: unexpected word 'NaN'; JSON has no NaN or Infinity [at /0]");
    EXPECT_EQ(syntaxError("{'a': 1}"), "in.json:1:2: error: keys need double quotes");
    EXPECT_EQ(syntaxError("{\"a\": 'x'}"),
              "in.json:1:7: error: strings need double quotes, not single quotes [at /a]");
    EXPECT_EQ(syntaxError("{\"a\" 1}"),
              "in.json:1:6: error: expected ':' after the key 'a', found '1' [at /a]");
    EXPECT_EQ(syntaxError("{\"a\": 1 \"b\": 2}"),
              "in.json:1:9: error: expected ',' or '}' after a member, found '\"'");
    EXPECT_EQ(syntaxError("[1 2]"),
              "in.json:1:4: error: expected ',' or ']' after an element, found '2'");
    EXPECT_EQ(syntaxError("{\"a\": [1,\n  2"), "in.json:2:4: error: unexpected end of file in the "
                                               "array that starts at line 1, column 7 [at /a]");
    EXPECT_EQ(syntaxError("{} x"), "in.json:1:4: error: unexpected 'x' after the JSON value");
    EXPECT_EQ(syntaxError("{\"a\": 1} // note"),
              "in.json:1:10: error: comments are not allowed in JSON");
    EXPECT_EQ(syntaxError("[,1]"), "in.json:1:2: error: unexpected ','; expected a value [at /0]");
    EXPECT_EQ(syntaxError(std::string_view("[\0]", 3)),
              "in.json:1:2: error: unexpected byte 0x00; expected a value [at /0]");
}

TEST(SourceJson, LimitsNesting) {
    std::string const ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
    EXPECT_EQ(syntaxError(ok), "no error");
    std::string const deep =
        std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
    std::string where; // the 257th '[' is element 0 of 256 arrays
    for (int k = 0; k < kMaxJsonDepth; ++k)
        where += "/0";
    EXPECT_EQ(syntaxError(deep),
              "in.json:1:257: error: arrays and objects nest deeper than 256 levels [at " + where +
                  "]");
}

TEST(SourceJson, ReadsSmallNumbersAsZeroAndBigIntegersExactly) {
    JsonValue const root = parseJson("[1e-400, -9223372036854775808, 9223372036854775807]", "f");
    EXPECT_EQ(root[0].asNumber(), 0.0);
    EXPECT_EQ(root[1].asInt(), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(root[2].asInt(), std::numeric_limits<std::int64_t>::max());
}

TEST(JsonValue, MissingFieldIsReportedAtTheObject) {
    EXPECT_EQ(readError("{\n  \"op\": {\"x\": 1}\n}", [](JsonValue const& r) { r["op"]["tag"]; }),
              "in.json:2:9: error: missing field 'tag' [at /op]");
    EXPECT_EQ(readError("{}", [](JsonValue const& r) { r["command"]; }),
              "in.json:1:1: error: missing field 'command'");
}

TEST(JsonValue, TypeMismatchesSayWhatWasExpectedAndWhatCame) {
    char const* text = R"({"s": 1, "n": "x", "b": null, "o": [], "a": {}, "f": 1.5, "big": 70000})";
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["s"].asString(); }),
              "in.json:1:7: error: expected a string, got a number [at /s]");
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["n"].asNumber(); }),
              "in.json:1:15: error: expected a number, got a string [at /n]");
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["b"].asBool(); }),
              "in.json:1:25: error: expected a boolean (true or false), got null [at /b]");
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["o"]["x"]; }),
              "in.json:1:36: error: expected an object, got an array [at /o]");
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["a"].elements(); }),
              "in.json:1:45: error: expected an array, got an object [at /a]");
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["f"].asInt(); }),
              "in.json:1:54: error: expected an integer, got 1.5 [at /f]");
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["big"].asInt(1, 65535); }),
              "in.json:1:66: error: expected an integer from 1 to 65535, got 70000 [at /big]");
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["big"].asInt(100000); }),
              "in.json:1:66: error: expected an integer of at least 100000, got 70000 [at /big]");
    EXPECT_EQ(readError(text, [](JsonValue const& r) { r["o"][0]; }),
              "in.json:1:36: error: expected at least 1 elements, got 0 [at /o]");
}

TEST(JsonValue, IntegralFloatsAreIntegers) {
    JsonValue const root = parseJson("[1e3, 2.0]", "f");
    EXPECT_EQ(root[0].asInt(), 1000);
    EXPECT_EQ(root[1].asInt(), 2);
}

TEST(JsonValue, OptionalMembersFallBack) {
    JsonValue const root = parseJson(R"({"t": true, "n": 3, "s": "x"})", "f");
    EXPECT_TRUE(root.boolOr("t", false));
    EXPECT_FALSE(root.boolOr("u", false));
    EXPECT_EQ(root.intOr("n", 7), 3);
    EXPECT_EQ(root.intOr("m", 7), 7);
    EXPECT_EQ(root.stringOr("s", "d"), "x");
    EXPECT_EQ(root.stringOr("q", "d"), "d");
    EXPECT_FALSE(root.find("q").has_value());
    EXPECT_TRUE(root.has("n"));
}

TEST(JsonValue, AllowOnlySuggestsTheNearestField) {
    char const* text = "{\"tensor\": \"A\",\n \"shap\": [1]}";
    EXPECT_EQ(readError(text,
                        [](JsonValue const& r) {
                            r.allowOnly({"tensor", "shape", "strides"});
                        }),
              "in.json:2:2: error: unknown field 'shap' (did you mean 'shape'?) [at /shap]");
    EXPECT_EQ(
        readError(R"({"colour": 1})",
                  [](JsonValue const& r) {
                      r.allowOnly({"tensor", "shape"});
                  }),
        "in.json:1:2: error: unknown field 'colour'; expected one of tensor, shape [at /colour]");
    EXPECT_EQ(readError(R"({"shape": 1})",
                        [](JsonValue const& r) {
                            r.allowOnly({"tensor", "shape"});
                        }),
              "no error");
}

TEST(JsonValue, AsChoiceListsTheChoices) {
    constexpr std::array<std::string_view, 3> kinds = {"sum", "max", "min"};
    JsonValue const root = parseJson(R"(["max", "Sum", "avg"])", "f");
    EXPECT_EQ(root[0].asChoice(kinds, "combine"), 1u);
    EXPECT_EQ(
        readError(R"(["Sum"])", [&](JsonValue const& r) { r[0].asChoice(kinds, "combine"); }),
        "in.json:1:2: error: unknown combine 'Sum' (did you mean 'sum'?); expected one of sum, "
        "max, min [at /0]");
    EXPECT_EQ(readError(R"(["avg"])", [&](JsonValue const& r) { r[0].asChoice(kinds, "combine"); }),
              "in.json:1:2: error: unknown combine 'avg'; expected one of sum, max, min [at /0]");
}

TEST(JsonValue, FailInStringPointsAtTheCharacter) {
    // The string's quote is at column 7; its text starts at column 8.
    char const* plain = R"({"e": "a + * b"})";
    EXPECT_EQ(
        readError(plain, [](JsonValue const& r) { r["e"].failInString(4, "unexpected '*'"); }),
        "in.json:1:12: error: unexpected '*' [at /e]");
    // Escapes before the offset count as the columns they are written with.
    char const* escaped = R"({"e": "\"q\" + \u00e9 * b"})";
    EXPECT_EQ(readError(escaped, [](JsonValue const& r) { r["e"].failInString(9, "here"); }),
              "in.json:1:23: error: here [at /e]");
    // At or past the end: the closing quote.
    EXPECT_EQ(
        readError(plain, [](JsonValue const& r) { r["e"].failInString(99, "ends too soon"); }),
        "in.json:1:15: error: ends too soon [at /e]");
    // Not a string: the value itself.
    EXPECT_EQ(readError(R"({"e": 12})", [](JsonValue const& r) { r["e"].failInString(1, "bad"); }),
              "in.json:1:7: error: bad [at /e]");
}

TEST(JsonValue, FailAtKeyPointsAtTheKey) {
    EXPECT_EQ(
        readError("{\n   \"x\": 5}", [](JsonValue const& r) { r["x"].failAtKey("no x here"); }),
        "in.json:2:4: error: no x here [at /x]");
}

TEST(SourceJson, ClosestMatchIgnoresCaseAndCountsTranspositions) {
    std::array<std::string_view, 4> const ops = {"LoadTiled", "Multiply", "Execute", "Reduce"};
    EXPECT_EQ(closestMatch("Mutliply", ops), "Multiply");
    EXPECT_EQ(closestMatch("loadtiled", ops), "LoadTiled");
    EXPECT_EQ(closestMatch("Exec", ops), std::nullopt);
    EXPECT_EQ(closestMatch("Frobnicate", ops), std::nullopt);
}

TEST(SourceJson, ReadJsonFileNamesTheFileItCannotRead) {
    try {
        readJsonFile("/nonexistent/kiln/x.json");
        FAIL() << "no error";
    } catch (UserError const& e) {
        EXPECT_STREQ(
            e.what(),
            "/nonexistent/kiln/x.json: error: cannot read this file: No such file or directory");
    }
    try {
        readJsonFile(KILN_SOURCE_DIR "/examples");
        FAIL() << "no error";
    } catch (UserError const& e) {
        EXPECT_EQ(e.message(), "cannot read this file: it is a directory");
    }
    JsonValue const gemm = readJsonFile(KILN_SOURCE_DIR "/examples/gemm.json");
    EXPECT_EQ(gemm["command"].asString(), "gemm");
    EXPECT_EQ(gemm["command"].location().str(), KILN_SOURCE_DIR "/examples/gemm.json:2:14");
}

} // namespace
} // namespace kiln
