// Named parameters: how a scenario becomes a template for a user's own job. The scenario's "params"
// object names each parameter with its default; `--param NAME=VALUE` on the command line overrides it;
// and "{param:NAME}" anywhere in the scenario (outside "params") is replaced before validation:
//   - a string that is exactly "{param:NAME}" becomes the value itself (a number stays a number:
//     "ranks": "{param:ranks}"); in an array it is text (arrays hold arguments), and a list parameter's
//     items take its place (zero or more arguments: `{param:script_args}`);
//   - inside a longer string, the value's text ("--timeout={param:timeout_s}").
// A parameter's value may itself name other parameters (resolved once: no chains). An override is
// read as the type of its default: a number, a list (split like a shell splits words,
// with '...' and "..." quoting), or text.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli {

using ParamOverrides = std::map<std::string, std::string>;

// The document with every {param:NAME} replaced and "params" holding the values used. Throws
// ScenarioError (file, JSON pointer) for an unknown parameter, an override of no parameter, or an
// override that is not of its default's type.
nlohmann::json apply_scenario_params(const nlohmann::json& doc, const ParamOverrides& overrides,
                                     const std::string& file);

// The parameter names `doc` declares (sorted: a JSON object's order). A sweep binds an axis to one by
// name (`ncclfi sweep S --set timeout_s=1,2,4`).
std::vector<std::string> declared_params(const nlohmann::json& doc);

// Parses "NAME=VALUE" (the command line's form). Throws std::invalid_argument without '='.
std::pair<std::string, std::string> parse_param_assignment(const std::string& text);

// Splits `text` into words as a shell would (whitespace; '...' and "..." quote; \ escapes), without
// expanding anything. Throws std::invalid_argument for an unterminated quote.
std::vector<std::string> split_words(const std::string& text);

}  // namespace ncclfi::cli
