// Named parameters of a scenario: `"params": {"timeout_s": 4}` declares a parameter with its default,
// and `{param:timeout_s}` anywhere in a string value uses it. A string that is the placeholder alone
// becomes the parameter's value with its type (`"deadline_s": "{param:deadline}"` is a number); inside a
// longer string the value's text is spliced in. A sweep binds an axis to a parameter by name
// (`ncclfi sweep S --set timeout_s=1,2,4`) instead of by the position of a value in the document.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario.h"

namespace ncclfi::cli {

// `doc` with every placeholder replaced by its parameter's value. A placeholder naming no declared
// parameter is a problem at its pointer (all of them are reported); the document is returned as far as
// it could be filled.
nlohmann::json substitute_params(const nlohmann::json& doc, std::vector<ScenarioError::Problem>& problems);
// The parameter names `doc` declares, in order.
std::vector<std::string> declared_params(const nlohmann::json& doc);

}  // namespace ncclfi::cli
