// No rank outlives ncclfi: after SIGINT (graceful: teardown, partial report) or SIGKILL (nothing of
// ncclfi runs: PR_SET_PDEATHSIG and the orphan guard) every rank process and its children are gone.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

namespace fs = std::filesystem;

// Each rank records its pid and a child's pid, then waits for ever.
nlohmann::json forever_scenario(const std::string& name, const std::string& dir) {
  return shell_scenario(
      name, 3, "sleep 1000 & echo $! > " + dir + "/child-$RANK; echo $$ > " + dir + "/rank-$RANK; wait",
      {{"outcome", "clean"}}, 120);
}

// The pids the ranks wrote, each waited for (at most 20 s) until its line is complete.
std::vector<pid_t> read_pids(const std::string& dir) {
  std::vector<pid_t> pids;
  for (const char* kind : {"rank-", "child-"}) {
    for (int r = 0; r < 3; ++r) {
      const pid_t pid = wait_for_pid_file(dir + "/" + kind + std::to_string(r), 20);
      if (pid > 0) pids.push_back(pid);
    }
  }
  return pids;
}

bool all_gone(const std::vector<pid_t>& pids, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    bool any = false;
    for (pid_t p : pids) any = any || process_alive(p);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void interrupt_mid_run(int sig) {
  TempDir dir;
  const auto file = write_scenario(dir.path, forever_scenario("forever", dir.path));
  const pid_t cli = start_cli({"run", file, "--out", dir.path + "/runs", "-q"}, dir.path + "/cli.out");
  const auto pids = read_pids(dir.path);
  ASSERT_EQ(pids.size(), 6u) << read_text(dir.path + "/cli.out");
  for (pid_t p : pids) ASSERT_TRUE(process_alive(p));
  kill(cli, sig);
  const int status = wait_pid(cli, 20);
  ASSERT_NE(status, -1) << "ncclfi did not exit after signal " << sig;
  EXPECT_TRUE(all_gone(pids, 5)) << "a rank or its child outlived ncclfi after signal " << sig;
  if (sig == SIGINT) {
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 3);
    // The partial report is there.
    const auto verdict = read_json(dir.path + "/runs/forever/latest/verdict.json");
    EXPECT_NE(verdict["harness_error"].get<std::string>().find("interrupted"), std::string::npos);
    EXPECT_TRUE(fs::exists(dir.path + "/runs/forever/latest/attempt-0/rank-0.log"));
  }
}

TEST(CliTeardown, SigintLeavesNoRankAndAPartialReport) {
  interrupt_mid_run(SIGINT);
}
TEST(CliTeardown, SigtermLeavesNoRank) {
  interrupt_mid_run(SIGTERM);
}
TEST(CliTeardown, SigkillLeavesNoRank) {
  interrupt_mid_run(SIGKILL);
}

}  // namespace
}  // namespace ncclfi::e2e
