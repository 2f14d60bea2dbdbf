// `ncclfi run` on small shell jobs through the command launcher: verdicts, exit codes, timings, the
// run directory and the suite reports, proc faults, deadlines, restarts, `report` and `sweep`.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string latest_run(const std::string& runs, const std::string& name) {
  return fs::canonical(fs::path(runs) / name / "latest").string();
}

// The `faults` of a scenario with one proc fault on `ranks`, `after_ms` after each rank's launch.
json proc_faults(const std::string& id, const std::string& kind, json ranks, int after_ms,
                 json params = json::object()) {
  json fault = {{"id", id},
                {"layer", "proc"},
                {"kind", kind},
                {"target", {{"ranks", std::move(ranks)}}},
                {"trigger", {{"after_ms", after_ms}}}};
  if (!params.empty()) fault["params"] = std::move(params);
  return json::array({fault});
}

TEST(CliRun, CleanJobPassesAndLeavesEveryFile) {
  TempDir dir;
  const std::string runs = dir.path + "/runs";
  const auto file = write_scenario(
      dir.path,
      shell_scenario("clean-shell", 3, "echo rank $RANK of $WORLD_SIZE plan=${NCCLFI_PLAN:-none}; exit 0",
                     {{"outcome", "clean"}}));
  const auto r =
      run_cli({"run", file, "--out", runs, "--junit", dir.path + "/j.xml", "--html", dir.path + "/r.html"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LT(r.seconds, 10);
  const std::string run = latest_run(runs, "clean-shell");
  for (const char* f :
       {"scenario.json", "plan.json", "verdict.json", "attempt-0/rank-0.log", "attempt-0/rank-2.log"}) {
    EXPECT_TRUE(file_exists(run + "/" + f)) << f;
  }
  EXPECT_NE(read_text(run + "/attempt-0/rank-2.log").find("rank 2 of 3 plan=none"), std::string::npos);
  const json verdict = read_json(run + "/verdict.json");
  EXPECT_EQ(verdict["verdict"], "pass") << verdict.dump(2);
  EXPECT_EQ(verdict["outcome"], "clean");
  EXPECT_TRUE(file_exists(dir.path + "/j.xml"));
  EXPECT_TRUE(file_exists(dir.path + "/r.html"));
  EXPECT_TRUE(file_exists(runs + "/suites/latest/summary.json"));
  EXPECT_NE(r.out.find("clean-shell"), std::string::npos) << r.out;
}

TEST(CliRun, FailedExpectationExitsOne) {
  TempDir dir;
  const auto file = write_scenario(dir.path, shell_scenario("fails", 2, "exit 3", {{"outcome", "clean"}}));
  const auto r = run_cli({"run", file, "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const json verdict = read_json(latest_run(dir.path + "/runs", "fails") + "/verdict.json");
  EXPECT_EQ(verdict["verdict"], "fail");
  EXPECT_EQ(verdict["outcome"], "detected");
}

TEST(CliRun, WorkloadWatchdogExitIsDetectedAndTimed) {
  TempDir dir;
  // Rank 1 "detects" 1 s after the proc fault fires at 300 ms (exit 3 = workload watchdog).
  json s =
      shell_scenario("watchdog-exit", 2, "if [ $RANK = 1 ]; then sleep 1.3; exit 3; fi; sleep 1.5; exit 3",
                     {{"outcome", "detected"},
                      {"detected_by", {"workload_watchdog"}},
                      {"detection_s", {{"min", 0.8}, {"max", 1.6}}}});
  s["faults"] = proc_faults("poke", "stop", {0}, 300, {{"ms", 1}});
  const auto r = run_cli({"run", write_scenario(dir.path, s), "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const json verdict = read_json(latest_run(dir.path + "/runs", "watchdog-exit") + "/verdict.json");
  EXPECT_EQ(verdict["verdict"], "pass") << verdict.dump(2);
  ASSERT_TRUE(verdict["detection_s"].is_number());
  EXPECT_NEAR(verdict["detection_s"].get<double>(), 1.0, 0.3);
}

TEST(CliRun, DeadlineTearsDownAFrozenJobAndCallsItHung) {
  TempDir dir;
  json s = shell_scenario("frozen", 3, "exec sleep 100",
                          {{"outcome", "hung"}, {"detected_by", {"harness_deadline"}}}, 2.0);
  s["faults"] = proc_faults("freeze", "stop", "all", 100);
  const auto r = run_cli({"run", write_scenario(dir.path, s), "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_GT(r.seconds, 1.9);
  EXPECT_LT(r.seconds, 8.0);  // deadline 2 s + grace 1 s + start-up
  const json verdict = read_json(latest_run(dir.path + "/runs", "frozen") + "/verdict.json");
  EXPECT_EQ(verdict["outcome"], "hung") << verdict.dump(2);
}

// A rank that floods its output (NCCL_DEBUG=TRACE does) must not hold the harness's poll loop: the
// kill and the deadline still come on time while 100 MB of log lines wait to be classified.
TEST(CliRun, KillAndDeadlineStayOnTimeWhileARankFloodsItsOutput) {
  TempDir dir;
  json s = shell_scenario("flood", 2,
                          "if [ $RANK = 0 ]; then sleep 0.5; "
                          "awk 'BEGIN{for(i=0;i<1000000;i++) printf \"%099d\\n\", i}'; fi; exec sleep 100",
                          {{"outcome", "hung"}}, 2.0);
  s["faults"] = proc_faults("crash", "kill", {1}, 1000);
  const auto r = run_cli({"run", write_scenario(dir.path, s), "--out", dir.path + "/runs"}, 120);
  const std::string run = latest_run(dir.path + "/runs", "flood");
  EXPECT_EQ(fs::file_size(run + "/attempt-0/rank-0.log"), 100'000'000u) << r.out << r.err;
  int64_t launch_ns = 0, kill_ns = 0, deadline_ns = 0;
  std::istringstream events(read_text(run + "/events.jsonl"));
  for (std::string line; std::getline(events, line);) {
    const json e = json::parse(line);
    const std::string event = e["event"];
    if (event == "launch" && e["rank"] == 1) launch_ns = e["ts_ns"];
    if (event == "inject") kill_ns = e["ts_ns"];
    if (event == "deadline") deadline_ns = e["ts_ns"];
  }
  ASSERT_GT(launch_ns, 0);
  ASSERT_GT(kill_ns, 0);
  ASSERT_GT(deadline_ns, 0);
  // Both fall inside the flood (0.5 s to several seconds of parsing); an unbounded read of the log
  // would make them seconds late.
  EXPECT_NEAR(static_cast<double>(kill_ns - launch_ns) / 1e9, 1.0, 0.4);
  EXPECT_NEAR(static_cast<double>(deadline_ns - launch_ns) / 1e9, 2.0, 0.4);
}

TEST(CliRun, ProcKillFaultKillsTheTargetRankOnly) {
  TempDir dir;
  json s = shell_scenario("kill-one", 3, "trap 'exit 0' TERM; sleep 1.5 & wait; exit 0",
                          {{"outcome", "detected"}}, 10);
  s["faults"] = proc_faults("crash", "kill", {1}, 200, {{"signal", "SIGKILL"}});
  const auto r = run_cli({"run", write_scenario(dir.path, s), "--out", dir.path + "/runs"});
  const json verdict = read_json(latest_run(dir.path + "/runs", "kill-one") + "/verdict.json");
  const auto& exits = verdict["history"]["exits"];
  ASSERT_EQ(exits.size(), 3u) << verdict.dump(2);
  for (const auto& e : exits) {
    if (e["rank"] == 1) {
      EXPECT_EQ(e["signal"], 9) << e.dump();
    } else {
      EXPECT_EQ(e["exit_code"], 0) << e.dump();
    }
  }
}

TEST(CliRun, RestartRecoversWhenFaultsOnlyOnFirstAttempt) {
  TempDir dir;
  // Fails (exit 3) while the plan is set, i.e. only on attempt 0, where the harness also kills rank 1 (a
  // run whose fault never fired cannot pass, and only the harness's or an injector's record says one did).
  json s = shell_scenario("restart", 2, "if [ -n \"$NCCLFI_PLAN\" ]; then sleep 0.3; exit 3; fi; exit 0",
                          {{"outcome", "recovered"}, {"restarts", {{"min", 1}, {"max", 1}}}});
  s["faults"] = proc_faults("d", "kill", {1}, 100);
  s["restart"] = {{"max", 2}, {"faults_on_attempts", {0}}, {"backoff_s", 0.1}};
  const auto r = run_cli({"run", write_scenario(dir.path, s), "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string run = latest_run(dir.path + "/runs", "restart");
  EXPECT_TRUE(file_exists(run + "/attempt-1/rank-1.log"));
  EXPECT_FALSE(file_exists(run + "/attempt-2"));
  EXPECT_EQ(read_json(run + "/verdict.json")["outcome"], "recovered");
}

TEST(CliRun, MpirunLauncherForwardsVariablesAndKillsRanksThroughIt) {
  if (run_program({"/bin/sh", "-c", "command -v mpirun"}).exit_code != 0) GTEST_SKIP() << "no mpirun";
  TempDir dir;
  json s =
      shell_scenario("mpi", 3, "echo rank=$OMPI_COMM_WORLD_RANK events=${NCCLFI_EVENTS:+set}; exec sleep 30",
                     {{"outcome", "detected"}}, 40);
  s["launcher"] = {{"kind", "mpirun"}};
  s["faults"] = proc_faults("k", "kill", {1}, 800);
  const auto r = run_cli({"run", write_scenario(dir.path, s), "--out", dir.path + "/runs"}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LT(r.seconds, 30);  // mpirun tore the job down after the kill, well before the 40 s deadline
  const std::string run = latest_run(dir.path + "/runs", "mpi");
  const std::string log = read_text(run + "/attempt-0/launcher.log");
  EXPECT_NE(log.find("]<stdout>:rank=2 events=set"), std::string::npos) << log;
  const json verdict = read_json(run + "/verdict.json");
  EXPECT_EQ(verdict["outcome"], "detected") << verdict.dump(2);
}

TEST(CliRun, HydraLauncherGivesEachRankItsVariablesAndKillsRanksThroughIt) {
  if (run_program({"/bin/sh", "-c", "command -v mpiexec.hydra"}).exit_code != 0) {
    GTEST_SKIP() << "no mpiexec.hydra (Debian: mpich)";
  }
  TempDir dir;
  json s =
      shell_scenario("hydra", 3, "echo rank=$RANK of=$WORLD_SIZE events=${NCCLFI_EVENTS:+set}; exec sleep 30",
                     {{"outcome", "detected"}}, 40);
  s["launcher"] = {{"kind", "hydra"}};
  s["faults"] = proc_faults("k", "kill", {1}, 800);
  const auto r = run_cli({"run", write_scenario(dir.path, s), "--out", dir.path + "/runs"}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LT(r.seconds, 30);  // Hydra tore the job down after the kill, well before the 40 s deadline
  const std::string run = latest_run(dir.path + "/runs", "hydra");
  const std::string log = read_text(run + "/attempt-0/launcher.log");
  EXPECT_NE(log.find("[2] rank=2 of=3 events=set"), std::string::npos) << log;
  const json verdict = read_json(run + "/verdict.json");
  EXPECT_EQ(verdict["outcome"], "detected") << verdict.dump(2);
}

TEST(CliRun, SettingsNcclDidNotReadAreNotesNotFailures) {
  TempDir dir;
  // No preload here: what tells is NCCL's own INFO line (which a rank prints as NCCL_DEBUG=INFO would) and
  // NCCL's names. NCCL_TIMEOUT exists in no NCCL; NCCL took NCCL_SOCKET_IFNAME otherwise than written.
  json s = shell_scenario("nccl-env-notes", 1,
                          "echo 'vm:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to lo'; echo "
                          "'vm:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda12.9'; exit 0",
                          {{"outcome", "clean"}});
  s["env"] = {{"NCCL_TIMEOUT", "5"}, {"NCCL_SOCKET_IFNAME", "eth0"}};
  const auto file = write_scenario(dir.path, s);
  const auto validated = run_cli({"validate", file});
  EXPECT_NE(validated.out.find("/env: NCCL_TIMEOUT=5: NCCL 2.28.9 has no variable of this name (did you mean "
                               "NCCL_IB_TIMEOUT?)"),
            std::string::npos)
      << validated.out;
  const auto r = run_cli({"run", file, "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const json verdict = read_json(latest_run(dir.path + "/runs", "nccl-env-notes") + "/verdict.json");
  EXPECT_EQ(verdict["verdict"], "pass") << verdict.dump(2);
  const json notes = {
      "NCCL_SOCKET_IFNAME=eth0: NCCL 2.28.9 took it as lo",
      "NCCL_TIMEOUT=5: NCCL 2.28.9 has no variable of this name (did you mean NCCL_IB_TIMEOUT?)"};
  for (const auto& note : notes) {  // and any NCCL_* of the environment the test runs in
    const auto& got = verdict["notes"];
    EXPECT_NE(std::find(got.begin(), got.end(), note), got.end()) << note << "\n" << verdict.dump(2);
  }
  EXPECT_NE(r.out.find("notes:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NCCL_SOCKET_IFNAME=eth0: NCCL 2.28.9 took it as lo"), std::string::npos) << r.out;
}

TEST(CliRun, ReportRerendersARun) {
  TempDir dir;
  const auto file =
      write_scenario(dir.path, shell_scenario("for-report", 1, "exit 0", {{"outcome", "clean"}}));
  ASSERT_EQ(run_cli({"run", file, "--out", dir.path + "/runs", "-q"}).exit_code, 0);
  const auto r = run_cli({"report", dir.path + "/runs/for-report/latest"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("for-report"), std::string::npos);
  EXPECT_EQ(run_cli({"report", dir.path + "/nowhere"}).exit_code, 2);
}

TEST(CliSweep, MatrixOverTheProductOfValues) {
  TempDir dir;
  json s = shell_scenario("sweepme", 1, "exit 0", {{"outcome", "clean"}});
  s["grace_s"] = 0.5;
  const auto file = write_scenario(dir.path, s);
  const auto r = run_cli({"sweep", file, "--set", "/deadline_s=5,6", "--set", "/grace_s=0.5,1", "--out",
                          dir.path + "/runs", "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("clean"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli({"sweep", file, "--set", "deadline_s=1"}).exit_code, 2);
}

// The SigIgn and SigBlk masks a process printed (grep ^Sig /proc/self/status), as numbers; -1 when absent.
std::pair<long long, long long> ignored_and_blocked(const std::string& text) {
  long long ignored = -1, blocked = -1;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("SigIgn:", 0) == 0) ignored = std::stoll(line.substr(7), nullptr, 16);
    if (line.rfind("SigBlk:", 0) == 0) blocked = std::stoll(line.substr(7), nullptr, 16);
  }
  return {ignored, blocked};
}

// ncclfi ignores SIGPIPE itself; the ranks it starts must not inherit that (nor any other ignored or
// blocked signal), whether started directly or through `agent --exec`: a rank writing to a closed pipe
// dies of SIGPIPE, as it would without ncclfi.
TEST(CliRun, RanksStartWithEverySignalAtItsDefault) {
  TempDir dir;
  const std::string runs = dir.path + "/runs";
  const auto file =
      write_scenario(dir.path, shell_scenario("signals", 1, "exec grep -E '^Sig(Ign|Blk):' /proc/self/status",
                                              {{"outcome", "clean"}}));
  const auto r = run_cli({"run", file, "--out", runs});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto direct = ignored_and_blocked(read_text(latest_run(runs, "signals") + "/attempt-0/rank-0.log"));
  const auto through = run_program(
      {NCCLFI_CLI, "agent", "--exec", "--", "/bin/grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status"});
  ASSERT_EQ(through.exit_code, 0) << through.out << through.err;
  const auto wrapped = ignored_and_blocked(through.out);
  constexpr long long kSigpipe = 1LL << (SIGPIPE - 1);
  for (const auto& [how, masks] :
       {std::pair{"started directly", direct}, std::pair{"through agent --exec", wrapped}}) {
    EXPECT_EQ(masks.first & kSigpipe, 0) << how << ": SIGPIPE ignored";
    EXPECT_EQ(masks.first, 0) << how << ": ignored signals";
    EXPECT_EQ(masks.second, 0) << how << ": blocked signals";
  }
}

}  // namespace
}  // namespace ncclfi::e2e
