// JsonSchemaCheck.h: a small JSON Schema validator for the keywords arch-db.schema.json and
// rules/schema/ruleset.schema.json use.
//
// nlohmann/json has no validator and the check is only needed by tests, so rather than a new
// dependency this implements the subset of draft 2020-12 the schema is written in: type, enum,
// required, properties, additionalProperties, items, minItems, minProperties, minLength,
// minimum, maximum, const, oneOf, pattern and local $ref ("#/$defs/..."). Any other keyword is
// reported as an error, so the schema cannot silently outgrow the checker.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::arch::test {

/// Every violation of `schema` by `document`, as "<json pointer>: <what>"; empty when valid.
std::vector<std::string> checkAgainstSchema(nlohmann::json const& schema,
                                            nlohmann::json const& document);

} // namespace kiln::arch::test
