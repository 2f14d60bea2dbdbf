// The job's ranks in /proc, as the harness (proc faults on a launcher's ranks) and a node agent see
// them: one scan, which reads a process's rank as the rank itself does (ncclfi::resolve_rank): an
// empty or malformed rank variable is passed over for the next one, never read as rank 0 nor made to
// hide the process.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent_node.h"
#include "ncclfi/params.h"
#include "proc_scan.h"
#include "sleeper.h"

namespace ncclfi::cli {
namespace {

using test_support::start_sleeper;

// What resolve_rank_from_env() says in a process whose rank variables are `vars` (this process's own
// rank variables are put back after).
int rank_the_process_reads(const std::vector<std::string>& vars) {
  std::map<std::string, std::optional<std::string>> saved;
  for (const char* name : kRankEnvVars) {
    const char* v = std::getenv(name);
    saved[name] = v != nullptr ? std::optional<std::string>(v) : std::nullopt;
    unsetenv(name);
  }
  for (const auto& v : vars) {
    const auto eq = v.find('=');
    setenv(v.substr(0, eq).c_str(), v.substr(eq + 1).c_str(), 1);
  }
  const int rank = resolve_rank_from_env();
  for (const auto& [name, value] : saved) {
    if (value)
      setenv(name.c_str(), value->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  return rank;
}

TEST(ProcScan, EveryScanReadsARankAsTheRankItselfDoes) {
  const std::string id = "job-processes-test-" + std::to_string(getpid());
  const std::vector<std::string> job = {"NCCLFI_HARNESS_ID=" + id, std::string(kRankMarkerVar) + "=6"};
  // Rank variables a launcher or a user may leave empty or malformed, and the rank each process reads.
  const std::vector<std::pair<std::vector<std::string>, int>> cases = {
      {{"NCCLFI_RANK=", "RANK=2"}, 2},                // set but empty: the next one
      {{"NCCLFI_RANK=x1", "RANK=3"}, 3},              // not a number
      {{"RANK=5junk", "OMPI_COMM_WORLD_RANK=4"}, 4},  // a number with a tail
      {{"RANK=-1", "SLURM_PROCID=5"}, 5},             // out of range
      {{"RANK=oops"}, -1},                            // no rank at all: not found as any rank
  };
  std::map<int, std::vector<int>> expected;
  std::vector<pid_t> pids;
  for (const auto& [vars, rank] : cases) {
    ASSERT_EQ(rank_the_process_reads(vars), rank) << vars[0];
    EXPECT_EQ(rank_of_environment(vars), rank) << vars[0];
    std::vector<std::string> env = job;
    env.insert(env.end(), vars.begin(), vars.end());
    pids.push_back(start_sleeper(env));
    if (rank >= 0) expected[rank].push_back(pids.back());
  }
  EXPECT_EQ(job_rank_pids(id), expected) << "the harness's scan (proc faults on a launcher's ranks)";
  EXPECT_EQ(node_rank_pids(id), expected) << "a node agent's scan";
  std::vector<int> all = job_pids(id);
  std::sort(all.begin(), all.end());
  std::vector<int> started(pids.begin(), pids.end());
  std::sort(started.begin(), started.end());
  EXPECT_EQ(all, started) << "every process of the job, rank or not";
  for (pid_t p : pids) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
}

}  // namespace
}  // namespace ncclfi::cli
