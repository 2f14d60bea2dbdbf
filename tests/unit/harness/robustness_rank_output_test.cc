// A rank that floods its output (30 MB of lines, then one 20 MB line without a newline) under the real
// `ncclfi agent --exec`, with a real agent streaming to a real hub: the wrapper's memory, the node's
// spool file, the agent's tail and the harness's file stay bounded, and the final tail still arrives,
// ending with the rank's last lines, with the counts of what did not travel.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "agent_hub.h"
#include "agent_node.h"
#include "rank_output_tail.h"

extern char** environ;

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;

struct Wrapped {
  int status = -1;
  long max_rss_kb = 0;
};

// `ncclfi agent --exec -- sh -c SCRIPT` as rank `rank` of a node whose spool is `spool`, its own output
// thrown away; the hub is served while it runs (the agent streams to it meanwhile).
Wrapped run_wrapped(const std::string& script, int rank, const fs::path& spool, AgentHub& hub) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "NCCLFI_AGENT_SPOOL=" + spool.string(),
                                  "NCCLFI_EVENTS=" + (spool / "events.jsonl").string(),
                                  "NCCLFI_RANK=" + std::to_string(rank)};
  std::vector<std::string> argv = {NCCLFI_CLI, "agent", "--exec", "--", "sh", "-c", script};
  std::vector<char*> envp, args;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  Wrapped w;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return w;
  rusage usage{};
  while (wait4(pid, &w.status, WNOHANG, &usage) == 0) hub.poll(10);
  w.max_rss_kb = usage.ru_maxrss;
  return w;
}

TEST(RankOutputFlood, CostsBoundedMemoryAndDiskAndItsTailArrives) {
  const fs::path dir = fs::temp_directory_path() / ("ncclfi-flood-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "attempt-0");
  setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  AgentHub hub("s", (dir / "events.jsonl").string());
  hub.keep_output((dir / "attempt-0").string(), 4);
  const fs::path spool = dir / "spool";
  AgentConfig config{hub.address(), "s", "flood-test-" + std::to_string(getpid()), spool.string(), 0.5};
  const FaultGate gate;
  auto agent = std::async(std::launch::async, [&] { return run_agent(config, gate); });
  ASSERT_EQ(hub.wait_for_agents(1, 10000), 1u);

  const Wrapped quiet = run_wrapped("echo hello", 0, spool, hub);
  ASSERT_TRUE(WIFEXITED(quiet.status) && WEXITSTATUS(quiet.status) == 0) << quiet.status;
  // 2727273 lines of 11 bytes (30 MB), one line, then 20 MB without a newline; its exit code passes through.
  const Wrapped flood = run_wrapped(
      "yes 'flood line' 2>/dev/null | head -n 2727273; echo the-last-line; head -c 20000000 /dev/zero | tr "
      "'\\0' x; "
      "exit 7",
      1, spool, hub);
  ASSERT_TRUE(WIFEXITED(flood.status) && WEXITSTATUS(flood.status) == 7) << flood.status;
  // The wrapper held no more of the flood than its pipe reads and one cut line (a copy of the 20 MB line
  // alone would show).
  EXPECT_LT(flood.max_rss_kb, quiet.max_rss_kb + 8 * 1024) << "quiet " << quiet.max_rss_kb << " KiB";
  const fs::path spooled = spool_output_path(spool.string(), 1);
  ASSERT_TRUE(fs::exists(spooled));
  EXPECT_LE(fs::file_size(spooled), kSpoolOutputCapBytes + 512 + kTailLines * (kOutputLineBytes + 1));

  for (int i = 0; i < 2000 && hub.rank_output()[1].lines_total == 0; ++i) hub.poll(10);
  const auto out = hub.rank_output();
  ASSERT_EQ(out.count(1), 1u);
  const auto& r = out.at(1);
  // The spool kept floor(cap / 11) lines; the rest of the 2727275 lines were counted, not written.
  const uint64_t written = kSpoolOutputCapBytes / 11;
  EXPECT_EQ(r.skipped_lines, 2727275 - written);
  // The agent read those, the notice and the kept last lines; each was streamed or counted as dropped.
  EXPECT_EQ(r.lines_total, written + 1 + kTailLines);
  EXPECT_EQ(r.streamed + r.dropped, r.lines_total);
  EXPECT_GT(r.dropped, 0u);
  EXPECT_LE(fs::file_size(dir / "attempt-0" / r.file), kHarnessOutputCapBytes);
  ASSERT_EQ(r.lines.size(), kTailLines);
  for (const auto& line : r.lines) EXPECT_LE(line.size(), kOutputLineBytes);
  EXPECT_EQ(r.lines[kTailLines - 2], "the-last-line");
  EXPECT_EQ(r.lines.back().substr(0, 8), "xxxxxxxx");
  EXPECT_NE(r.lines.back().find(" bytes cut]"), std::string::npos);
  EXPECT_EQ(r.lines[kTailLines - 3], "flood line");
  EXPECT_EQ(r.cut_lines, 1u);
  EXPECT_EQ(out.at(0).lines, std::vector<std::string>{"hello"});

  hub.quit(5000);
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(agent.get(), 0);
  EXPECT_FALSE(fs::exists(spool));  // the node keeps nothing of the drill
  unsetenv("NCCLFI_AGENT_HOST");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ncclfi::cli
