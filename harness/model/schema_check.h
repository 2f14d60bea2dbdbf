// A small JSON Schema checker for the subset scenarios/schema.json uses (type, properties, required,
// additionalProperties, items, enum, anyOf, minimum, maximum, exclusiveMinimum, minItems, minLength,
// pattern), so that the schema file is the single statement of the format and the C++ rejects exactly
// what it says. `x-expected` overrides the wording of "expected X"; `x-ncclfi` marks values checked
// elsewhere (faults by ncclfi::parse_fault, mechanisms and regexes by the scenario loader).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli {

struct SchemaViolation {
  std::string pointer;   // JSON pointer of the bad value ("" = the document)
  std::string expected;  // "an integer >= 1", "one of \"local\", \"mpirun\"", ...
  std::string found;     // describe_json of the value, or "nothing" for a missing key
};

// A value the schema hands to another checker (x-ncclfi), with its pointer.
struct DeferredCheck {
  std::string kind;  // "fault", "mechanism", "regex"
  std::string pointer;
};

struct SchemaResult {
  std::vector<SchemaViolation> violations;  // in document order; empty = valid
  std::vector<DeferredCheck> deferred;
};

// Checks `doc` against `schema` (whose "$defs" may be referenced with "#/$defs/name").
SchemaResult check_against_schema(const nlohmann::json& doc, const nlohmann::json& schema);

// The scenario schema embedded at build time (scenarios/schema.json).
const nlohmann::json& scenario_schema();

}  // namespace ncclfi::cli
