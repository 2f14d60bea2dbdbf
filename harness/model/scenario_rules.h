// Cross-field rules of a scenario, checked after the schema: what no single field can say alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scenario.h"

namespace ncclfi::cli {

// Appends one problem per broken rule: a rank outside the job, a layer the workload never reaches,
// a deadline shorter than the timeouts it must outlast, restart settings that cannot hold, ...
// Variables the harness sets for the ranks and a scenario's `env` may not: every NCCLFI_* (the plan,
// the events, the harness id the orphan guard finds ranks by), LD_PRELOAD and NCCL_NET_PLUGIN (which
// front ends are loaded). A scenario that set NCCLFI_PLAN ran a fault in its baseline while plan.json
// recorded none; one that set NCCLFI_HARNESS_ID escaped the orphan guard.
bool is_reserved_env(std::string_view name);

void check_scenario_rules(const Scenario& scenario, std::vector<ScenarioError::Problem>& problems);

// What is valid but probably not meant, one line each: a rate fault (a delay, a throttle) that fires once
// by default under an expected `degraded` slows one call, and the run would read clean; an NCCL_* variable
// in `env` that no NCCL has (NCCL_TIMEOUT, NCCL_IB_TIMOUT) does nothing.
std::vector<std::string> scenario_warnings(const Scenario& scenario);

// The value following `flag` in `args` as seconds ("--timeout-s", "3"), if present and numeric.
std::optional<double> flag_seconds(const std::vector<std::string>& args, const std::string& flag);

}  // namespace ncclfi::cli
