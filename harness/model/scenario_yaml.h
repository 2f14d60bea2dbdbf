// Scenarios written in YAML (*.yaml, *.yml): converted to the same JSON document a JSON scenario is,
// so one schema and one loader check both; the line of every value is kept, so an error names the file,
// the line and the JSON pointer.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace ncclfi::cli {

// JSON pointer -> 1-based line of the value in the YAML text.
using LineMap = std::map<std::string, int>;

// Whether `path` names a YAML file (by its extension).
bool is_yaml_path(const std::string& path);
// Parses YAML text into JSON: mappings to objects (keys as strings), sequences to arrays, plain
// scalars by the YAML 1.2 core schema (null, true/false, integers, floats, else strings), quoted
// scalars always strings. Fills `lines`. Throws std::runtime_error with "line N: ..." on a syntax error
// or a construct JSON has no form for (aliases are resolved; a non-scalar key is an error), on a
// duplicate key, and on a document whose aliases expand past 50000 values or 4 MiB of text.
nlohmann::json yaml_to_json(const std::string& text, LineMap& lines);
// The line of `pointer`, or of its nearest ancestor that has one (an unknown key's parent); 0 if none.
int line_of(const LineMap& lines, const std::string& pointer);

}  // namespace ncclfi::cli
