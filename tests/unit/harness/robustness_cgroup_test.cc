// A rank that leaves its attempt's cgroup. A rank running as root could write its pid into another
// cgroup's cgroup.procs and outlive the drill: each rank enters a cgroup namespace rooted at its
// attempt's cgroup, where the kernel refuses that move, and the end of the attempt kills whatever carries
// the harness id outside the cgroup.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "attempt_runner.h"
#include "host_env.h"
#include "run_cgroup.h"
#include "sleeper.h"
#include "unit_temp_dir.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ncclfi::test_support::TempDir;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first cgroup2 mount ("" when none).
std::string cgroup2_root() {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, dir, type, rest;
  while (mounts >> device >> dir >> type && std::getline(mounts, rest))
    if (type == "cgroup2") return dir;
  return "";
}

// Whether the cgroup2 hierarchy is mounted with nsdelegate (a cgroup namespace is then a boundary).
bool nsdelegate() {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, dir, type, options, rest;
  while (mounts >> device >> dir >> type >> options && std::getline(mounts, rest))
    if (type == "cgroup2") return ("," + options + ",").find(",nsdelegate,") != std::string::npos;
  return false;
}

// Why the test cannot run here, or "".
std::string cannot_run() {
  if (::geteuid() != 0) return "not root: a rank cannot move itself to another cgroup";
  if (cgroup2_root().empty()) return "no cgroup v2 hierarchy is mounted";
  if (!RunCgroup::create("ncclfi-probe-" + std::to_string(::getpid())))
    return "no writable cgroup v2 hierarchy";
  return "";
}

// Gone, or a zombie nobody reaped yet: it runs no more.
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

bool gone_within(pid_t pid, std::chrono::milliseconds wait) {
  const auto end = std::chrono::steady_clock::now() + wait;
  while (!gone(pid) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return gone(pid);
}

// One rank: `/bin/sh SCRIPT`, with the harness id in its environment.
class ScriptLauncher final : public RankLauncher {
 public:
  explicit ScriptLauncher(std::string script) : script_(std::move(script)) {}
  std::vector<ProcessSpec> processes(const LaunchContext& ctx) const override {
    ProcessSpec rank;
    rank.rank = 0;
    rank.argv = {"/bin/sh", script_};
    rank.env = ctx.parent_env;
    rank.env["NCCLFI_HARNESS_ID"] = ctx.harness_id;
    rank.log_path = ctx.log_dir + "/rank-0.log";
    return {rank};
  }

 private:
  std::string script_;
};

// Runs one attempt of a one-rank job that `script` is; returns the run's events.
std::string run_one_attempt(const std::string& dir, const std::string& script,
                            const std::string& harness_id) {
  const json doc = {{"name", "escape"},
                    {"summary", "one rank that leaves a process behind"},
                    {"workload", {{"command", {"/bin/sh", script}}, {"ranks", 1}}},
                    {"launcher", {{"kind", "command"}}},
                    {"baseline", false},
                    {"deadline_s", 20},
                    {"grace_s", 0.5},
                    {"expect", {{"outcome", "clean"}}}};
  Scenario s = scenario_from_json(doc, "escape.json");
  const auto classifier = harness::LogClassifier::builtin();
  const ScriptLauncher launcher(script);
  AttemptInputs in;
  in.ctx.scenario = &s;
  in.ctx.run_dir = dir;
  in.ctx.log_dir = dir + "/attempt-0";
  fs::create_directories(in.ctx.log_dir);
  in.ctx.plan_path = dir + "/plan.json";
  in.ctx.events_path = dir + "/events.jsonl";
  in.ctx.harness_id = harness_id;
  in.ctx.parent_env = current_environment();
  in.launcher = &launcher;
  in.classifier = &classifier;
  in.log_dir_rel = "attempt-0";
  harness::History history;
  history.world_size = 1;
  run_attempt(in, history);
  return read_text(in.ctx.events_path);
}

// Before: the rank's daemon left its process group (setsid), wrote itself into the root cgroup and
// outlived the attempt. Where the hierarchy is mounted with nsdelegate, the rank's cgroup namespace makes
// the kernel refuse the move; elsewhere (as on this test's CI host) the move succeeds, and the end of the
// attempt finds the daemon by the harness id it still carries. Either way it is gone.
TEST(CgroupEscape, ARankRunningAsRootThatMovesItselfOutDoesNotOutliveItsAttempt) {
  if (const std::string why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string script = dir.path + "/escape.sh";
  std::ofstream(script) << "setsid /bin/sh -c 'if echo $$ > " << cgroup2_root()
                        << "/cgroup.procs 2>/dev/null; then echo moved; else echo refused; fi > " << dir.path
                        << "/move.txt; echo $$ > " << dir.path << "/escaper.tmp; mv " << dir.path
                        << "/escaper.tmp " << dir.path
                        << "/escaper.pid; exec /bin/sleep 60' </dev/null >/dev/null 2>&1 &\n"
                        << "while [ ! -s " << dir.path << "/escaper.pid ]; do sleep 0.05; done\nexit 0\n";
  const std::string events = run_one_attempt(dir.path, script, "cgroup-escape-" + std::to_string(::getpid()));
  const std::string pid_text = read_text(dir.path + "/escaper.pid");
  ASSERT_FALSE(pid_text.empty()) << "the rank did not start its daemon";
  const pid_t escaper = std::stoi(pid_text);
  const bool dead = gone_within(escaper, std::chrono::seconds(2));
  if (!dead) ::kill(escaper, SIGKILL);
  EXPECT_TRUE(dead) << "the rank's daemon left the attempt's cgroup and outlived the attempt";
  const std::string move = read_text(dir.path + "/move.txt");
  if (nsdelegate()) {
    EXPECT_EQ(move, "refused\n") << "the cgroup namespace let the rank move itself out";
  } else {
    EXPECT_EQ(move, "moved\n");
    EXPECT_NE(events.find(R"("event":"escaped")"), std::string::npos) << events;
  }
}

// A process that carries the harness id outside the attempt's cgroup (as a rank's daemon that got out
// where ranks cannot be given a cgroup namespace): killed when the attempt ends, and counted.
TEST(CgroupEscape, WhatCarriesTheHarnessIdOutsideTheCgroupIsKilledAtTheEnd) {
  if (const std::string why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string id = "cgroup-escaper-" + std::to_string(::getpid());
  const pid_t escaper = test_support::start_sleeper({"NCCLFI_HARNESS_ID=" + id});
  ASSERT_GT(escaper, 0);
  const std::string script = dir.path + "/clean.sh";
  std::ofstream(script) << "exit 0\n";
  const std::string events = run_one_attempt(dir.path, script, id);
  bool dead = false;  // SIGKILL was sent as the attempt ended; the exit follows within moments
  for (int i = 0; i < 200 && !dead; ++i) {
    dead = ::waitpid(escaper, nullptr, WNOHANG) == escaper;
    if (!dead) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!dead) test_support::stop_sleepers({escaper});
  EXPECT_TRUE(dead) << "a process with the harness id outside the cgroup outlived the attempt";
  EXPECT_NE(events.find(R"("event":"escaped")"), std::string::npos) << events;
  EXPECT_NE(events.find(R"("killed":1)"), std::string::npos) << events;
}

}  // namespace
}  // namespace ncclfi::cli
