// JsonSchemaCheck.cpp: the draft 2020-12 subset used by arch-db.schema.json and
// rules/schema/ruleset.schema.json.
#include "JsonSchemaCheck.h"

#include <regex>
#include <set>

namespace kiln::arch::test {

namespace {

using Json = nlohmann::json;

class Checker {
public:
    explicit Checker(Json const& root)
        : root_(root) {}

    void check(Json const& schema, Json const& value, std::string const& at) {
        static const std::set<std::string> kKnown = {"$schema",
                                                     "$id",
                                                     "title",
                                                     "description",
                                                     "$defs",
                                                     "$ref",
                                                     "type",
                                                     "enum",
                                                     "required",
                                                     "properties",
                                                     "additionalProperties",
                                                     "items",
                                                     "minItems",
                                                     "minProperties",
                                                     "minLength",
                                                     "minimum",
                                                     "maximum",
                                                     "const",
                                                     "oneOf",
                                                     "pattern"};
        for (auto const& [keyword, unused] : schema.items()) {
            if (kKnown.count(keyword) == 0) {
                error(at, "schema keyword '" + keyword + "' is not supported by the checker");
            }
        }
        if (schema.contains("$ref")) {
            check(resolve(schema.at("$ref").get<std::string>()), value, at);
        }
        if (schema.contains("type") && !hasType(value, schema.at("type").get<std::string>())) {
            error(at, "expected " + schema.at("type").get<std::string>());
            return;
        }
        if (schema.contains("const") && schema.at("const") != value) {
            error(at, "value " + value.dump() + " is not " + schema.at("const").dump());
        }
        if (schema.contains("oneOf")) {
            // Exactly one branch: each is checked on its own, its errors kept only to say why
            // none matched.
            std::size_t matched = 0;
            std::string why;
            for (auto const& branch : schema.at("oneOf")) {
                Checker inner(root_);
                inner.check(branch, value, at);
                if (inner.errors.empty()) {
                    ++matched;
                } else if (why.empty()) {
                    why = inner.errors.front();
                }
            }
            if (matched != 1) {
                error(at, "matches " + std::to_string(matched) + " of the oneOf branches" +
                              (matched == 0 ? " (the first says " + why + ")" : ""));
            }
        }
        if (schema.contains("enum")) {
            bool found = false;
            for (auto const& allowed : schema.at("enum")) {
                found = found || allowed == value;
            }
            if (!found) {
                error(at, "value " + value.dump() + " is not in the enum");
            }
        }
        if (value.is_string()) {
            checkString(schema, value.get<std::string>(), at);
        }
        if (value.is_number() && schema.contains("minimum") &&
            value.get<double>() < schema.at("minimum").get<double>()) {
            error(at, "below the minimum " + schema.at("minimum").dump());
        }
        if (value.is_number() && schema.contains("maximum") &&
            value.get<double>() > schema.at("maximum").get<double>()) {
            error(at, "above the maximum " + schema.at("maximum").dump());
        }
        if (value.is_array()) {
            checkArray(schema, value, at);
        }
        if (value.is_object()) {
            checkObject(schema, value, at);
        }
    }

    std::vector<std::string> errors;

private:
    void error(std::string const& at, std::string const& what) {
        errors.push_back((at.empty() ? "/" : at) + ": " + what);
    }

    Json const& resolve(std::string const& reference) {
        if (reference.rfind("#/", 0) != 0) {
            throw std::runtime_error("only local $ref is supported: " + reference);
        }
        return root_.at(Json::json_pointer(reference.substr(1)));
    }

    static bool hasType(Json const& value, std::string const& type) {
        if (type == "object") {
            return value.is_object();
        }
        if (type == "array") {
            return value.is_array();
        }
        if (type == "string") {
            return value.is_string();
        }
        if (type == "integer") {
            return value.is_number_integer();
        }
        if (type == "number") {
            return value.is_number();
        }
        if (type == "boolean") {
            return value.is_boolean();
        }
        return type == "null" && value.is_null();
    }

    void checkString(Json const& schema, std::string const& text, std::string const& at) {
        if (schema.contains("minLength") &&
            text.size() < schema.at("minLength").get<std::size_t>()) {
            error(at, "shorter than " + schema.at("minLength").dump());
        }
        if (schema.contains("pattern") &&
            !std::regex_search(text, std::regex(schema.at("pattern").get<std::string>()))) {
            error(at, "'" + text + "' does not match " + schema.at("pattern").dump());
        }
    }

    void checkArray(Json const& schema, Json const& value, std::string const& at) {
        if (schema.contains("minItems") &&
            value.size() < schema.at("minItems").get<std::size_t>()) {
            error(at, "fewer than " + schema.at("minItems").dump() + " items");
        }
        if (schema.contains("items")) {
            for (std::size_t i = 0; i < value.size(); ++i) {
                check(schema.at("items"), value[i], at + "/" + std::to_string(i));
            }
        }
    }

    void checkObject(Json const& schema, Json const& value, std::string const& at) {
        if (schema.contains("minProperties") &&
            value.size() < schema.at("minProperties").get<std::size_t>()) {
            error(at, "fewer than " + schema.at("minProperties").dump() + " members");
        }
        if (schema.contains("required")) {
            for (auto const& key : schema.at("required")) {
                if (!value.contains(key.get<std::string>())) {
                    error(at, "missing required member " + key.dump());
                }
            }
        }
        Json const properties = schema.value("properties", Json::object());
        for (auto const& [key, member] : value.items()) {
            std::string memberAt = at + "/" + key;
            if (properties.contains(key)) {
                check(properties.at(key), member, memberAt);
            } else if (schema.contains("additionalProperties")) {
                Json const& additional = schema.at("additionalProperties");
                if (additional.is_boolean()) {
                    if (!additional.get<bool>()) {
                        error(memberAt, "member '" + key + "' is not allowed");
                    }
                } else {
                    check(additional, member, memberAt);
                }
            }
        }
    }

    Json const& root_;
};

} // namespace

std::vector<std::string> checkAgainstSchema(Json const& schema, Json const& document) {
    Checker checker(schema);
    checker.check(schema, document, "");
    return checker.errors;
}

} // namespace kiln::arch::test
