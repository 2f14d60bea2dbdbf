// The attempt loop with node agents: connections to the hub that never prove the secret (a port scan,
// a stale agent, a stranger) are authenticated beside the loop, so they cannot hold its deadline back.
// A real `ncclfi agent` joins; then 50 silent strangers connect, and the deadline must fire when it
// fires without them.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent_protocol.h"
#include "attempt_runner.h"
#include "host_env.h"
#include "unit_temp_dir.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ncclfi::test_support::TempDir;

// One rank (`sleep 30`: only the deadline ends it) and one real `ncclfi agent` on this host. With
// `strangers`, that many connections reach the hub as the job starts (the agent is in by then) and stay
// silent for kSilentS seconds before they close.
class StrangersLauncher final : public RankLauncher {
 public:
  static constexpr double kSilentS = 6;
  // Each stranger says `say[i % size]` (if any) as soon as it is connected.
  explicit StrangersLauncher(int strangers, std::vector<std::string> say = {})
      : strangers_(strangers), say_(std::move(say)) {}
  ~StrangersLauncher() override {
    if (closer_.joinable()) closer_.join();
  }

  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    std::vector<int> fds;
    for (int i = 0; i < strangers_; ++i) {
      fds.push_back(connect_to(ctx.agent_addr, 2000));
      if (!say_.empty() && fds.back() >= 0) {
        const std::string& line = say_[static_cast<size_t>(i) % say_.size()];
        EXPECT_EQ(::write(fds.back(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
      }
    }
    closer_ = std::thread([fds] {
      std::this_thread::sleep_for(std::chrono::duration<double>(kSilentS));
      for (int fd : fds)
        if (fd >= 0) ::close(fd);
    });
    ProcessSpec rank;
    rank.rank = 0;
    rank.argv = {"/bin/sleep", "30"};
    rank.env = ctx.parent_env;
    rank.log_path = ctx.log_dir + "/rank-0.log";
    return {rank};
  }

  std::optional<ProcessSpec> agent_process(const LaunchContext& ctx) const override {
    ProcessSpec agent;
    agent.argv = {NCCLFI_CLI, "agent"};
    agent.env = ctx.parent_env;
    agent.env["NCCLFI_HARNESS_ID"] = ctx.harness_id;
    agent.env[kAgentAddrVar] = ctx.agent_addr;
    agent.env[kAgentSecretVar] = ctx.agent_secret;
    agent.env[kAgentSpoolVar] = ctx.agent_spool;
    agent.log_path = ctx.log_dir + "/agents.log";
    return agent;
  }

 private:
  int strangers_;
  std::vector<std::string> say_;
  mutable std::thread closer_;
};

// Seconds from the attempt's start to its `deadline` event (-1 when there is none).
double deadline_fired_after(int strangers, double deadline_s, std::vector<std::string> say = {},
                            std::string* agents_log = nullptr) {
  TempDir dir;
  const json doc = {{"name", "strangers"},
                    {"summary", "one rank that only the deadline ends, with one node agent"},
                    {"workload", {{"command", {"/bin/sleep", "30"}}, {"ranks", 1}}},
                    {"launcher", {{"kind", "command"}}},
                    {"baseline", false},
                    {"deadline_s", deadline_s},
                    {"grace_s", 0.5},
                    {"expect", {{"outcome", "clean"}}}};
  Scenario s = scenario_from_json(doc, "strangers.json");
  s.launcher.nodes = 1;  // agents, started by this test's launcher (no launcher of the catalogue here)
  const auto classifier = harness::LogClassifier::builtin();
  const StrangersLauncher launcher(strangers, std::move(say));
  AttemptInputs in;
  in.ctx.scenario = &s;
  in.ctx.run_dir = dir.path;
  in.ctx.log_dir = dir.path + "/attempt-0";
  fs::create_directories(in.ctx.log_dir);
  in.ctx.plan_path = dir.path + "/plan.json";
  in.ctx.events_path = dir.path + "/events.jsonl";
  in.ctx.harness_id = "strangers-test-" + std::to_string(getpid());
  in.ctx.parent_env = current_environment();
  in.launcher = &launcher;
  in.classifier = &classifier;
  in.log_dir_rel = "attempt-0";
  harness::History history;
  history.world_size = 1;
  const AttemptResult result = run_attempt(in, history);
  EXPECT_TRUE(result.deadline_hit);
  if (agents_log) {
    std::ifstream log(in.ctx.events_path);
    std::stringstream text;
    text << log.rdbuf();
    *agents_log = text.str();
  }
  std::ifstream events(in.ctx.events_path);
  std::string line;
  while (std::getline(events, line)) {
    const auto e = json::parse(line, nullptr, false);
    if (e.is_object() && e.value("event", "") == "deadline" && e.value("source", "") == "harness")
      return static_cast<double>(e.value("ts_ns", int64_t{0}) - result.start_ns) / 1e9;
  }
  return -1;
}

TEST(AttemptAgents, SilentStrangersDoNotMoveTheDeadline) {
  setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  constexpr double kDeadlineS = 2;
  const double alone = deadline_fired_after(0, kDeadlineS);
  const double crowded = deadline_fired_after(50, kDeadlineS);
  unsetenv("NCCLFI_AGENT_HOST");
  ASSERT_GE(alone, kDeadlineS);
  ASSERT_GE(crowded, kDeadlineS);
  // Authenticated inside the loop, the strangers held it until they closed (kSilentS, 2 s each before).
  EXPECT_LT(crowded - alone, 0.75) << "alone " << alone << " s, with 50 silent strangers " << crowded << " s";
}

// Lines of the wrong types from strangers (a "t" that is a number, a hello whose host is an object and
// whose challenge is a number, an array, a hello then a non-text MAC) once threw the library's
// type_error out of the hub and made the attempt a harness error. They are refused and recorded; the
// attempt runs to its deadline as it would alone, and the real agent stays in.
TEST(AttemptAgents, LinesOfTheWrongTypesFromStrangersAreRefusedNotFatal) {
  setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  constexpr double kDeadlineS = 2;
  const std::vector<std::string> say = {
      "{\"t\":5}\n",
      "{\"t\":\"hello\",\"host\":{\"a\":1},\"challenge\":7}\n",
      "[1,2,3]\n",
      "{\"t\":\"hello\",\"host\":\"x\",\"challenge\":\"c\"}\n{\"t\":\"auth\",\"mac\":[1]}\n",
  };
  std::string events;
  double fired = -1;
  EXPECT_NO_THROW(fired = deadline_fired_after(8, kDeadlineS, say, &events));
  unsetenv("NCCLFI_AGENT_HOST");
  EXPECT_GE(fired, kDeadlineS);
  EXPECT_LT(fired, kDeadlineS + 1.5);
  size_t refused = 0;
  for (size_t at = events.find("\"agent_refused\""); at != std::string::npos;
       at = events.find("\"agent_refused\"", at + 1))
    ++refused;
  EXPECT_EQ(refused, 8u) << events;
  EXPECT_NE(events.find("\"event\":\"agent\""), std::string::npos) << "the real agent did not join\n"
                                                                   << events;
}

}  // namespace
}  // namespace ncclfi::cli
