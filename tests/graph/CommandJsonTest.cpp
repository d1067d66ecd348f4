// CommandJson: Commands read from their JSON form.
#include "kiln/graph/CommandJson.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <set>

namespace kiln {
namespace {

/// The spec's GEMM: B stored column-major through explicit strides.
constexpr char const* kGemm = R"({
  "command": "gemm",
  "version": 1,
  "arguments": {
    "A": { "tensor": "f32", "shape": ["M", "K"] },
    "B": { "tensor": "f32", "shape": ["K", "N"], "strides": ["1", "K"] },
    "C": { "tensor": "f32", "shape": ["M", "N"] },
    "D": { "tensor": "f32", "shape": ["M", "N"] },
    "alpha": { "scalar": "f32" },
    "beta": { "scalar": "f32" }
  },
  "operations": [
    { "op": "LoadTiled", "tag": "a", "tensor": "A" },
    { "op": "LoadTiled", "tag": "b", "tensor": "B" },
    { "op": "LoadTiled", "tag": "c", "tensor": "C" },
    { "op": "Multiply", "tag": "ab", "lhs": "a", "rhs": "b", "transA": false, "transB": false },
    { "op": "Execute", "tag": "d", "expr": "alpha * ab + beta * c" },
    { "op": "StoreTiled", "tensor": "D", "value": "d" }
  ],
  "problem": { "M": 127, "N": 65, "K": 33, "alpha": 1.5, "beta": -0.5 }
})";

std::vector<std::string> texts(std::vector<ExprPtr> const& list) {
    std::vector<std::string> out;
    for (auto const& e : list)
        out.push_back(toString(e));
    return out;
}

std::string errorOf(std::string_view text) {
    try {
        parseCommand(text, "cmd.json");
    } catch (UserError const& e) {
        return e.what();
    }
    return "no error";
}

/// A small valid Command with `operations` spliced in, for error tests.
std::string withOperations(std::string_view operations) {
    return std::string(R"({"command": "t", "arguments": {
  "X": {"tensor": "f32", "shape": ["M", "N"]},
  "V": {"tensor": "f32", "shape": ["M"]},
  "s": {"scalar": "f32"}},
"operations": [
)") + std::string(operations) +
           "]}";
}

TEST(CommandJson, ReadsTheGemmOfTheSpec) {
    Command const c = parseCommand(kGemm, "gemm.json");
    EXPECT_EQ(c.name(), "gemm");
    EXPECT_EQ(c.sizes(), (std::vector<std::string>{"M", "K", "N"}));
    ASSERT_EQ(c.tensors().size(), 4u);
    TensorArgument const& b = *c.findTensor("B");
    EXPECT_EQ(b.dtype, DataType::F32);
    EXPECT_EQ(texts(b.shape), (std::vector<std::string>{"K", "N"}));
    EXPECT_EQ(texts(b.strides), (std::vector<std::string>{"1", "K"}));
    EXPECT_EQ(texts(c.findTensor("A")->strides), (std::vector<std::string>{"K", "1"}));
    EXPECT_EQ(b.where.str(), "gemm.json:6:5");
    EXPECT_EQ(b.where.pointer, "/arguments/B");
    ASSERT_EQ(c.scalars().size(), 2u);
    EXPECT_EQ(c.scalars()[1].name, "beta");

    ASSERT_EQ(c.operations().size(), 6u);
    CommandOperation const& mm = c.operations()[3];
    EXPECT_EQ(mm.kind, CommandOpKind::Multiply);
    EXPECT_EQ(mm.inputs, (std::vector<std::string>{"a", "b"}));
    EXPECT_FALSE(mm.transposeA);
    EXPECT_EQ(mm.where.str(), "gemm.json:16:5");
    EXPECT_EQ(mm.where.pointer, "/operations/3");
    CommandOperation const& d = c.operations()[4];
    EXPECT_EQ(toString(d.expression), "alpha * ab + beta * c");
    EXPECT_EQ(texts(c.values().at("d").shape), (std::vector<std::string>{"M", "N"}));
    EXPECT_EQ(c.values().at("ab").dtype, DataType::F32);
    EXPECT_EQ(c.operations()[5].inputs, std::vector<std::string>{"d"});

    EXPECT_EQ(c.defaults.at("M"), 127);
    EXPECT_EQ(c.defaults.at("K"), 33);
    EXPECT_EQ(c.defaults.at("beta"), -0.5);
}

TEST(CommandJson, ReadsEveryExample) {
    int count = 0;
    for (auto const& entry : std::filesystem::directory_iterator(KILN_SOURCE_DIR "/examples")) {
        if (entry.path().extension() != ".json" ||
            entry.path().filename().string().ends_with(".space.json")) // search spaces
            continue;
        SCOPED_TRACE(entry.path().string());
        Command const c = loadCommand(entry.path().string());
        EXPECT_FALSE(c.operations().empty());
        for (auto const& size : c.sizes())
            EXPECT_GT(c.defaults.at(size), 0) << size;
        ++count;
    }
    EXPECT_GE(count, 4);
}

TEST(CommandJson, ShapesAreExpressionsOverSizesOrIntegers) {
    Command const c = parseCommand(R"({"command": "pad", "arguments": {
        "X": {"tensor": "f16", "shape": ["2 * M", 8]},
        "Y": {"tensor": "f16", "shape": ["M * 2", "ceildiv(N, 4) * 4"], "strides": [128, 1]}},
      "operations": [{"op": "LoadTiled", "tag": "x", "tensor": "X"},
                     {"op": "LoadLinear", "tag": "y", "tensor": "Y"}],
      "problem": {"M": 3, "N": 5}})",
                                   "pad.json");
    EXPECT_EQ(c.sizes(), (std::vector<std::string>{"M", "N"}));
    EXPECT_EQ(texts(c.findTensor("X")->shape), (std::vector<std::string>{"M * 2", "8"}));
    EXPECT_EQ(texts(c.findTensor("X")->strides), (std::vector<std::string>{"8", "1"}));
    EXPECT_EQ(texts(c.findTensor("Y")->strides), (std::vector<std::string>{"128", "1"}));
    EXPECT_EQ(c.operations()[1].kind, CommandOpKind::LoadLinear);
    EXPECT_EQ(c.values().at("y").shape.size(), 1u);
}

TEST(CommandJson, ReadsOptionalFieldsOfEachOperation) {
    Command const c = parseCommand(withOperations(R"(
  {"op": "LoadTiled", "tag": "x", "tensor": "X", "doc": "the input"},
  {"op": "Execute", "tag": "h", "expr": "x * s", "dtype": "f16"},
  {"op": "Reduce", "tag": "m", "value": "h", "combine": "max"},
  {"op": "Reduce", "tag": "t", "value": "x"},
  {"op": "StoreLinear", "tensor": "V", "value": "t"}
)"),
                                   "ops.json");
    EXPECT_EQ(c.values().at("h").dtype, DataType::F16);
    EXPECT_EQ(c.operations()[2].combine, Combine::Max);
    EXPECT_EQ(c.operations()[3].combine, Combine::Sum);
    EXPECT_EQ(texts(c.values().at("m").shape), std::vector<std::string>{"M"});
    EXPECT_EQ(c.operations()[4].kind, CommandOpKind::StoreLinear);
    // Errors Command::add finds in an Execute are reported at its expression.
    EXPECT_EQ(c.operations()[1].where.pointer, "/operations/1/expr");
}

TEST(CommandJson, ExpressionErrorsPointInsideTheString) {
    // The text of "expr" starts at column 40; the second '*' is at offset 4.
    EXPECT_EQ(errorOf(withOperations(R"({"op": "LoadTiled", "tag": "x", "tensor": "X"},
{"op": "Execute", "tag": "e", "expr": "x * * s"})")),
              "cmd.json:7:44: error: unexpected '*' [at /operations/1/expr]");
    EXPECT_EQ(errorOf(withOperations(R"({"op": "LoadTiled", "tag": "x", "tensor": "X"},
{"op": "Execute", "tag": "e", "expr": "x * sigma"})")),
              "cmd.json:7:44: error: unknown name 'sigma' [at /operations/1/expr]");
    EXPECT_EQ(
        errorOf(withOperations(R"({"op": "LoadTiled", "tag": "x", "tensor": "X"},
{"op": "Execute", "tag": "e", "expr": "xx + 1"})")),
        "cmd.json:7:40: error: unknown name 'xx' (did you mean 'x'?) [at /operations/1/expr]");
}

TEST(CommandJson, ReferencesAreCheckedWhereTheyAreWritten) {
    std::string const load = R"({"op": "LoadTiled", "tag": "x", "tensor": "X"},)";
    EXPECT_EQ(errorOf(withOperations(R"({"op": "LoadTiled", "tag": "x", "tensor": "Z"})")),
              "cmd.json:6:43: error: unknown tensor 'Z' [at /operations/0/tensor]");
    EXPECT_EQ(errorOf(withOperations(R"({"op": "LoadTiled", "tag": "x", "tensor": "s"})")),
              "cmd.json:6:43: error: 's' is a scalar, not a tensor [at /operations/0/tensor]");
    EXPECT_EQ(
        errorOf(withOperations(load + R"(
{"op": "StoreTiled", "tensor": "X", "value": "y"}, {"op": "LoadTiled", "tag": "y", "tensor": "X"})")),
        "cmd.json:7:46: error: 'y' is defined by a later operation (/operations/2); operations "
        "run in order [at /operations/1/value]");
    EXPECT_EQ(errorOf(withOperations(load + R"(
{"op": "StoreTiled", "tensor": "X", "value": "X"})")),
              "cmd.json:7:46: error: 'X' is a tensor; load it and use the load's tag [at "
              "/operations/1/value]");
    EXPECT_EQ(errorOf(withOperations(load + R"(
{"op": "LoadTiled", "tag": "x", "tensor": "X"})")),
              "cmd.json:7:28: error: tag 'x' is defined twice; first at line 6, column 28 [at "
              "/operations/1/tag]");
}

TEST(CommandJson, ErrorsOfCommandAddAreLocatedAtTheOperation) {
    // Multiply of an M x N by an M x N: the inner sizes differ.
    EXPECT_EQ(
        errorOf(withOperations(R"({"op": "LoadTiled", "tag": "x", "tensor": "X"},
  {"op": "Multiply", "tag": "p", "lhs": "x", "rhs": "x"})")),
        "cmd.json:7:3: error: Multiply: inner sizes differ: lhs 'x' gives M x N, rhs 'x' gives "
        "M x N [at /operations/1]");
    EXPECT_EQ(errorOf(withOperations(R"({"op": "LoadTiled", "tag": "x", "tensor": "X"},
  {"op": "Multiply", "tag": "p", "lhs": "x", "rhs": "x", "transB": true})")),
              "no error");
}

TEST(CommandJson, ProblemMustNameEverySize) {
    std::string const text = R"({"command": "t",
  "arguments": {"X": {"tensor": "f32", "shape": ["M", "N"]}},
  "operations": [{"op": "LoadTiled", "tag": "x", "tensor": "X"}],
  "problem": {"M": 4}})";
    EXPECT_EQ(errorOf(text),
              "cmd.json:4:14: error: the problem gives no value for size 'N' [at /problem]");
}

TEST(CommandJson, SchemaAgreesWithTheReader) {
    JsonValue const schema = readJsonFile(KILN_SOURCE_DIR "/docs/schema/command.schema.json");
    JsonValue const defs = schema["$defs"];

    // The op names are the Command's.
    std::vector<std::string> ops;
    for (auto const& op : defs["operation"]["properties"]["op"]["enum"].elements())
        ops.push_back(op.asString());
    std::vector<std::string> kinds;
    for (auto kind : allCommandOpKinds())
        kinds.push_back(std::string(name(kind)));
    EXPECT_EQ(ops, kinds);

    // Every dtype the schema allows loads, and i64 (a real DataType) does not.
    auto const withScalarType = [](std::string const& dtype) {
        return R"({"command": "t", "arguments": {"X": {"tensor": "f32", "shape": [4]},
          "s": {"scalar": ")" +
               dtype + R"("}}, "operations": [{"op": "LoadTiled", "tag": "x", "tensor": "X"}]})";
    };
    auto const dtypes = defs["dtype"]["enum"].elements();
    EXPECT_EQ(dtypes.size(), 5u);
    for (auto const& dtype : dtypes)
        EXPECT_EQ(errorOf(withScalarType(dtype.asString())), "no error") << dtype.asString();
    EXPECT_NE(errorOf(withScalarType("i64")), "no error");

    // Each op accepts exactly the fields the schema lists for it: an operation with all of them
    // fails for other reasons than an unknown field, and one more field is unknown.
    for (auto const& branch : defs["operation"]["allOf"].elements()) {
        JsonValue const condition = branch["if"]["properties"]["op"];
        std::string const op = condition.has("const") ? condition["const"].asString()
                                                      : condition["enum"][0].asString();
        std::string fields;
        for (auto const& [field, spec] : branch["then"]["properties"].members())
            if (field != "op")
                fields += ", \"" + field + "\": null";
        SCOPED_TRACE(op);
        std::string const all = errorOf(withOperations(R"({"op": ")" + op + "\"" + fields + "}"));
        EXPECT_EQ(all.find("unknown field"), std::string::npos) << all;
        std::string const extra =
            errorOf(withOperations(R"({"op": ")" + op + "\"" + fields + R"(, "bogus": 1})"));
        EXPECT_NE(extra.find("unknown field 'bogus'"), std::string::npos) << extra;
    }

    // Each op's fields and required fields are those of its row in CommandOps.h.
    std::set<std::string> covered;
    for (auto const& branch : defs["operation"]["allOf"].elements()) {
        JsonValue const condition = branch["if"]["properties"]["op"];
        std::vector<std::string> branchOps;
        if (condition.has("const"))
            branchOps.push_back(condition["const"].asString());
        else
            for (auto const& op : condition["enum"].elements())
                branchOps.push_back(op.asString());
        std::set<std::string> properties, required;
        for (auto const& [field, spec] : branch["then"]["properties"].members())
            if (field != "op" && field != "doc")
                properties.insert(field);
        for (auto const& field : branch["then"]["required"].elements())
            required.insert(field.asString());
        for (auto const& op : branchOps) {
            SCOPED_TRACE(op);
            covered.insert(op);
            std::set<std::string> fields, mustHave;
            for (auto const& f : info(*parseCommandOpKind(op)).fields) {
                fields.insert(std::string(f.key));
                if (isRequired(f.field))
                    mustHave.insert(std::string(f.key));
            }
            EXPECT_EQ(properties, fields);
            EXPECT_EQ(required, mustHave);
        }
    }
    EXPECT_EQ(covered, std::set<std::string>(kinds.begin(), kinds.end()));
}

TEST(CommandJson, LoadCommandNamesAMissingFile) {
    try {
        loadCommand("no/such/command.json");
        FAIL() << "no error";
    } catch (UserError const& e) {
        EXPECT_STREQ(
            e.what(),
            "no/such/command.json: error: cannot read this file: No such file or directory");
    }
}

} // namespace
} // namespace kiln
