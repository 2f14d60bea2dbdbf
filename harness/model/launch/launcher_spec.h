// The launchers: one file per launcher in this folder, each a LauncherSpec (what it is, what it needs,
// how far its ranks reach, its own rules, and what it starts), listed in launcher_registry.cc. Nothing
// outside these files names a launcher: the loader, the rules, the requirement check, the drill plan, the
// schema test, `ncclfi list launchers` and the table in docs/scenarios.md all read the specs.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scenario.h"

namespace ncclfi::cli {

class RankLauncher;

// Where a launcher's ranks run.
enum class LauncherReach {
  kThisHost,             // every rank on this host
  kNodes,                // it places the ranks on `nodes` itself, and one node agent per node
  kThroughNodeLauncher,  // this host, or across `nodes` through a node launcher (a kNodes launcher)
};

// The workloads a launcher can start.
enum class LauncherWorkload {
  kAny,      // a builtin workload or a command
  kCommand,  // a command only (the script or program it starts)
};

struct LauncherSpec {
  std::string_view name;     // `launcher.kind`
  std::string_view summary;  // one line, for `ncclfi list launchers` and docs/scenarios.md
  LauncherWorkload workload = LauncherWorkload::kAny;
  LauncherReach reach = LauncherReach::kThisHost;
  bool restarts_workers = false;  // takes `launcher.max_restarts` (it restarts its own workers)
  bool per_rank_option = false;   // takes `launcher.per_rank` (one process per rank, or one for the job)
  // Why this host cannot start it ("needs `mpirun` on PATH"), or "" when it can.
  std::string (*unmet_requirement)() = nullptr;
  // Its own rules beyond the traits above (nullptr: none); problems name the JSON pointer.
  void (*check)(const Scenario& scenario, std::vector<ScenarioError::Problem>& problems) = nullptr;
  // What it starts (launch_context.h).
  std::unique_ptr<RankLauncher> (*make)() = nullptr;
};

// Every launcher, in the order `ncclfi list launchers` shows them.
const std::vector<const LauncherSpec*>& launcher_specs();
// The launcher of a scenario that names none: `command` for a command workload, else `local`.
const LauncherSpec& default_launcher(bool command_workload);
// The launcher named `name`, or nullptr.
const LauncherSpec* find_launcher(std::string_view name);
// What the launcher named `name` starts (std::invalid_argument for a name no launcher has).
std::unique_ptr<RankLauncher> make_launcher(std::string_view name);
// The scenario's launcher and its node launcher (nullptr when it has none). The loader has checked
// the names, so these never fail on a loaded scenario.
const LauncherSpec& launcher_of(const Scenario& scenario);
const LauncherSpec* node_launcher_of(const Scenario& scenario);
// Whether the scenario's job has node agents (a kNodes launcher with nodes, or torchrun through one).
bool has_node_agents(const Scenario& scenario);
// Whether every rank runs on this host (no launcher places them elsewhere).
bool ranks_on_this_host(const Scenario& scenario);
// The launcher catalogue as a Markdown table (name, workloads, reach, restarts, summary): docs/scenarios.md
// holds it verbatim.
std::string launcher_catalogue_markdown();

}  // namespace ncclfi::cli
