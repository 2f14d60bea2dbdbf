// The `--json` documents of `ncclfi validate` and `ncclfi list` (run and sweep print their summary.json
// and sweep.json). Machine output: stable keys, one document on stdout, nothing else on stdout.
#pragma once

#include <nlohmann/json.hpp>

#include "scenario.h"

namespace ncclfi::cli {

// {"file", "valid": true, "name", "expected", "summary", "tags"} for a scenario that loaded.
nlohmann::json scenario_json(const Scenario& scenario);
// {"file", "valid": false, "errors": [{"pointer", "expected", "found"}]} for one that did not.
nlohmann::json scenario_error_json(const ScenarioError& error);
// The fault kinds: [{"layer", "kind", "effect", "points", "params": [{"name", "type", "required",
// "range", "default", "meaning", "choices"}]}], the same content as `ncclfi list faults`.
nlohmann::json fault_catalogue_json();
// The launchers: [{"name", "summary", "workload", "reach", "restarts_workers", "per_rank_option"}], the same
// content as `ncclfi list launchers`.
nlohmann::json launcher_catalogue_json();

}  // namespace ncclfi::cli
