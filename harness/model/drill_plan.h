// What a drill would do, decided before anything launches: which ranks each fault reaches, on which host,
// and when; the blast-radius limits and the allow-list of hosts checked against that; and the dry run's
// report of it (`ncclfi run --dry-run`). The one place that answers "which ranks and hosts does this
// scenario fault".
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ncclfi/host_allow.h"
#include "scenario.h"

namespace ncclfi::cli {

// The host each rank will run on as far as it is known before launch: this host for the launchers that
// start every rank here (local, command, single-node torchrun); "" where the launcher decides (srun,
// mpirun), which may place ranks on other nodes.
std::vector<std::string> planned_rank_hosts(const Scenario& s);

// Limits given on the command line (`run --max-faulted-ranks/--max-faulted-hosts`): they apply on top of
// the scenario's own `limits`, the stricter one wins.
struct BlastLimits {
  std::optional<int> max_faulted_ranks, max_faulted_hosts;
};

struct BlastRadius {
  std::map<int, std::vector<std::string>> faults_by_rank;  // each faulted rank and the ids of its faults
  std::set<std::string> hosts;                             // the known hosts of faulted ranks
  int unknown_host_ranks = 0;  // faulted ranks whose host the launcher decides: each counts as a host
  int host_count() const { return static_cast<int>(hosts.size()) + unknown_host_ranks; }
};
BlastRadius blast_radius(const Scenario& s);

// A problem for each limit the faults exceed: the scenario's named by /limits/<field>, the command line's
// by its option.
void check_blast_radius(const Scenario& s, const BlastLimits& cli,
                        std::vector<ScenarioError::Problem>& problems);

// Why the harness refuses to launch `s` under `list` (a faulted rank's planned host is outside it), or "".
std::string allow_list_refusal(const Scenario& s, const AllowList& list);

// The dry run: per host and rank, each fault that would be injected there, with its kind, layer, target,
// trigger (call, time, probability, count) and windows. dry_run_text() renders that document.
nlohmann::json dry_run_json(const Scenario& s, const AllowList& list, const BlastLimits& cli);
std::string dry_run_text(const nlohmann::json& plan);

}  // namespace ncclfi::cli
