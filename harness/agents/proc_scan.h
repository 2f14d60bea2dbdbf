// The job's processes, found in /proc: the one scan behind the harness's proc faults on ranks a launcher
// started, its last sweep at teardown, the orphan guard, and each node agent's search for its ranks.
// A process belongs to the job when its environment holds NCCLFI_HARNESS_ID=<the job's id>; it is one
// of the job's ranks when it also holds the rank marker (kRankMarkerVar: no launcher process has it)
// and a rank variable, read as the rank reads it (ncclfi::resolve_rank, ncclfi/params.h).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ncclfi::cli {

// Which of the job's ranks a scan reports.
struct RankScan {
  // Only those in this host's UTS namespace: an agent's node (a test cluster's hosts share one kernel).
  bool this_host_only = false;
  // The `agent --exec` wrappers too (processes running the scanning executable, which hold the ranks'
  // places for their launcher and carry the rank's variables): false where the rank itself is wanted.
  bool with_wrappers = true;
};

// Live processes of the job (the caller left out).
std::vector<int> job_pids(const std::string& harness_id);
// The job's ranks: rank -> pids. Node agents (kAgentAddrVar in their environment) and the caller are
// never ranks.
std::map<int, std::vector<int>> job_rank_pids(const std::string& harness_id, const RankScan& scan = {});
// The rank an environment (KEY=VALUE strings) names, as the process itself reads it; -1 when none.
int rank_of_environment(const std::vector<std::string>& vars);

}  // namespace ncclfi::cli
