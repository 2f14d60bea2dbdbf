// Cross-field rules of a scenario, checked after the schema: what no single field can say alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scenario.h"

namespace ncclfi::cli {

// Appends one problem per broken rule: a rank outside the job, a layer the workload never reaches,
// a deadline shorter than the timeouts it must outlast, restart settings that cannot hold, ...
void check_scenario_rules(const Scenario& scenario, std::vector<ScenarioError::Problem>& problems);

// The value following `flag` in `args` as seconds ("--timeout-s", "3"), if present and numeric.
std::optional<double> flag_seconds(const std::vector<std::string>& args, const std::string& flag);

}  // namespace ncclfi::cli
