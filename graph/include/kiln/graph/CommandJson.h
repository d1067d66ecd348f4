// CommandJson.h: Commands read from JSON files.
//
// The JSON form of a Command (docs/command.md, schema in docs/schema/command.schema.json) is
// what users write: arguments with dtypes and shapes, operations in order, and an optional
// "problem" with default sizes and scalar values. Loading checks everything Command::add()
// checks and more (unknown fields, references, expression syntax), and every mistake is one
// UserError at file:line:col with the JSON pointer of the offending value.
#pragma once

#include "kiln/graph/Command.h"
#include "kiln/graph/SourceJson.h"

#include <map>
#include <string>
#include <string_view>

namespace kiln {

/// The version of the Command JSON form this Kiln reads and writes.
inline constexpr int kCommandJsonVersion = 1;

/// Reads a Command from JSON `text`; `file` names it in messages.
Command parseCommand(std::string_view text, std::string const& file);

/// Reads a Command from the JSON file at `path`.
Command loadCommand(std::string const& path);

/// Reads a Command from a JSON object already parsed (e.g. one embedded in a larger file).
Command readCommand(JsonValue const& root);

/// The sizes and scalar values of `problem`, an object as a Command's "problem" is (a rule
/// test's problem is one too), checked against `command`: each name one of its sizes or scalars,
/// each size an integer from 1 to 2^40, every size given. Errors point into `problem`'s file.
std::map<std::string, double> readProblem(Command const& command, JsonValue const& problem);

} // namespace kiln
