// Drill safety and the drill report through the CLI: the dry run launches nothing, the allow-list refuses
// before launch and inside the ranks, `ncclfi abort` and Ctrl-C stop a running drill, and the drill report
// of real cpu-ring runs (a frozen rank healed by its window, a flapping link) says what happened.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

namespace fs = std::filesystem;

bool cpu_ring_built() {
  return fs::exists(std::string(NCCLFI_BIN_DIR) + "/ncclfi-cpu-ring") &&
         fs::exists(std::string(NCCLFI_LIB_DIR) + "/libnccl-net-ncclfi.so");
}

#define REQUIRE_CPU_RING() \
  if (!cpu_ring_built()) GTEST_SKIP() << "ncclfi-cpu-ring or libnccl-net-ncclfi.so not built"

std::string drill_file(const std::string& name) {
  return std::string(NCCLFI_SOURCE_DIR) + "/scenarios/drills/" + name + ".json";
}

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::vector<nlohmann::json> events_named(const std::string& path, const std::string& event) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto e = nlohmann::json::parse(line, nullptr, false);
    if (e.is_object() && e.value("event", "") == event) out.push_back(std::move(e));
  }
  return out;
}

// A command job that leaves a file when it runs: proof that something was launched.
nlohmann::json touching_job(const std::string& marker) {
  return {{"name", "drill-dry"},
          {"summary", "a job that leaves a file"},
          {"workload", {{"command", {"sh", "-c", "touch " + marker}}, {"ranks", 2}}},
          {"faults",
           {{{"id", "freeze"},
             {"layer", "proc"},
             {"kind", "stop"},
             {"target", {{"ranks", {1}}}},
             {"trigger", {{"after_ms", 1000}, {"duration_s", 1}, {"every_s", 3}, {"times", 2}}}}}},
          {"deadline_s", 20},
          {"expect", {{"outcome", "detected"}}}};
}

TEST(Drill, DryRunPrintsThePlanAndLaunchesNothing) {
  TempDir dir;
  const std::string marker = dir.path + "/launched";
  const auto file = write_scenario(dir.path, touching_job(marker));
  const auto r = run_cli({"run", file, "--dry-run", "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing is launched"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host " + this_host()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 1: freeze (proc stop"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#2 +4.0 s to +5.0 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 0: nothing injected"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(marker)) << "the dry run started the job";
  EXPECT_FALSE(fs::exists(dir.path + "/runs")) << "the dry run made a run directory";
  const auto j = run_cli({"run", file, "--dry-run", "--json", "--out", dir.path + "/runs"});
  EXPECT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["dry_run"], true);
  const auto& plan = doc["scenarios"][0];
  EXPECT_EQ(plan["launched"], false);
  EXPECT_EQ(plan["hosts"][0]["ranks"][1]["faults"][0]["fault_id"], "freeze");
  EXPECT_EQ(plan["hosts"][0]["ranks"][1]["faults"][0]["windows_total"], 2);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(fs::exists(dir.path + "/runs"));
}

TEST(Drill, LimitsAndTheAllowListRefuseBeforeLaunch) {
  TempDir dir;
  const std::string marker = dir.path + "/launched";
  const auto file = write_scenario(dir.path, touching_job(marker));
  std::ofstream(dir.path + "/hosts") << "# staging only\nstaging-*\n";
  const auto refused =
      run_cli({"run", file, "--allowed-hosts", dir.path + "/hosts", "--out", dir.path + "/runs"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("host '" + this_host() +
                             "' of a faulted rank is not in the allowed hosts (staging-*)"),
            std::string::npos)
      << refused.err;
  const auto limited = run_cli({"run", file, "--max-faulted-ranks", "0", "--out", dir.path + "/runs"});
  EXPECT_EQ(limited.exit_code, 2);  // out of range
  auto wide = touching_job(marker);
  wide["faults"][0]["target"]["ranks"] = "all";
  const auto wide_file = write_scenario(dir.path, wide);
  const auto over = run_cli({"run", wide_file, "--max-faulted-ranks", "1", "--out", dir.path + "/runs"});
  EXPECT_EQ(over.exit_code, 2) << over.out << over.err;
  EXPECT_NE(over.err.find(": --max-faulted-ranks: expected at most 1 faulted ranks (drill limit), got 2"),
            std::string::npos)
      << over.err;
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(fs::exists(dir.path + "/runs"));
}

// The ranks run on a host named outside the list (a UTS namespace: `unshare -u` and `hostname`); the
// harness's own host is allowed, so only the ranks' own check stands between the plan and the job.
TEST(Drill, APlanOnAHostOutsideTheListIsIgnoredWithOneWarningAndTheJobRunsClean) {
  REQUIRE_CPU_RING();
  if (run_program({"/usr/bin/unshare", "-u", "true"}, 10).exit_code != 0)
    GTEST_SKIP() << "no UTS namespaces here (unshare -u)";
  TempDir dir;
  const nlohmann::json s = {
      {"name", "drill-outside"},
      {"summary", "ranks on a host outside the allow-list"},
      {"workload",
       {{"command",
         {"/usr/bin/unshare", "-u", "sh", "-c", "hostname drill-outside-1 && exec \"$0\" \"$@\"",
          "{bin_dir}/ncclfi-cpu-ring", "--iters", "200", "--bytes", "16K", "--timeout-s", "5", "--check"}},
        {"ranks", 2}}},
      {"launcher", {{"kind", "command"}}},
      {"layers", {"net"}},
      {"faults",
       {{{"id", "drop"},
         {"layer", "net"},
         {"kind", "drop"},
         {"target", {{"ranks", {1}}, {"direction", "recv"}}},
         {"trigger", {{"after_calls", 5}}}}}},
      {"deadline_s", 40},
      {"expect", {{"outcome", "detected"}, {"fault_may_not_fire", true}}}};
  const auto file = write_scenario(dir.path, s);
  std::ofstream(dir.path + "/hosts") << this_host() << "\n";
  const auto r =
      run_cli({"run", file, "--allowed-hosts", dir.path + "/hosts", "--out", dir.path + "/runs", "-q"}, 110);
  const std::string run = dir.path + "/runs/drill-outside/latest";
  ASSERT_TRUE(fs::exists(run + "/verdict.json")) << r.out << r.err;
  EXPECT_TRUE(events_named(run + "/events.jsonl", "inject").empty())
      << "a fault fired outside the allow-list";
  const auto refused = events_named(run + "/events.jsonl", "injection_refused");
  ASSERT_EQ(refused.size(), 2u) << "one per rank (the net shim)";
  EXPECT_EQ(refused[0]["host"], "drill-outside-1");
  const auto verdict = read_json(run + "/verdict.json");
  for (const auto& x : verdict["history"]["exits"]) EXPECT_EQ(x["exit_code"], 0) << "the job ran clean";
  for (int rank = 0; rank < 2; ++rank) {
    const std::string log = read_text(run + "/attempt-0/rank-" + std::to_string(rank) + ".log");
    const std::string warning = "ncclfi: host 'drill-outside-1' is not in the allowed hosts (" + this_host() +
                                "): no fault is injected here";
    const size_t first = log.find(warning);
    EXPECT_NE(first, std::string::npos) << log;
    EXPECT_EQ(log.find(warning, first + 1), std::string::npos) << "one warning, not one per call";
  }
}

nlohmann::json long_drill(const std::string& name) {
  return {{"name", name},
          {"summary", "a long drill to stop"},
          {"workload",
           {{"builtin", "cpu-ring"},
            {"ranks", 2},
            {"args", {"--iters", "100000000", "--bytes", "16K", "--timeout-s", "20"}}}},
          {"control", true},
          {"faults",
           {{{"id", "slow"},
             {"layer", "net"},
             {"kind", "delay"},
             {"params", {{"ms", 1}}},
             {"target", {{"ranks", {1}}}},
             {"trigger", {{"count", 0}}}},
            {{"id", "freeze"},
             {"layer", "proc"},
             {"kind", "stop"},
             {"target", {{"ranks", {0}}}},
             {"trigger", {{"after_ms", 60000}}}}}},
          {"deadline_s", 120},
          {"grace_s", 1},
          {"expect", {{"outcome", "degraded"}}},
          {"baseline", false}};
}

// The control FIFOs (`ncclfi-<source>-<pid>.in`) the ranks' front ends opened in the run directory.
size_t control_fifos(const std::string& run) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ncclfi-", 0) == 0 && name.size() > 3 && name.compare(name.size() - 3, 3, ".in") == 0) ++n;
  }
  return n;
}

// Starts a long drill and waits until its ranks injected and both ranks' front ends listen for control
// (a rank on a loaded host may open its FIFO after the other's first injection); returns the harness's
// pid and the run dir.
std::pair<pid_t, std::string> start_drill(const TempDir& dir, const std::string& name) {
  const auto file = write_scenario(dir.path, long_drill(name));
  const pid_t cli = start_cli({"run", file, "--out", dir.path + "/runs", "-q"}, dir.path + "/cli.out");
  const std::string run = dir.path + "/runs/" + name + "/latest";
  for (int i = 0;
       i < 600 && (events_named(run + "/events.jsonl", "inject").empty() || control_fifos(run) < 2); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return {cli, run};
}

std::vector<int> rank_pids(const std::string& run) {
  std::vector<int> pids;
  for (const auto& e : events_named(run + "/events.jsonl", "launch")) pids.push_back(e["pid"].get<int>());
  return pids;
}

TEST(Drill, AbortDisarmsEveryFaultAndTearsTheJobDown) {
  REQUIRE_CPU_RING();
  TempDir dir;
  const auto [cli, run] = start_drill(dir, "drill-abort");
  ASSERT_FALSE(events_named(run + "/events.jsonl", "inject").empty()) << read_text(dir.path + "/cli.out");
  const auto r = run_cli({"abort", run}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("the job is torn down"), std::string::npos) << r.out;
  const int status = wait_pid(cli, 60);
  ASSERT_NE(status, -1);
  EXPECT_EQ(WEXITSTATUS(status), 3) << "an aborted run ends like an interrupted one";
  const auto controls = events_named(run + "/events.jsonl", "control");
  ASSERT_EQ(controls.size(), 1u);
  EXPECT_EQ(controls[0]["action"], "abort");
  EXPECT_EQ(controls[0]["by"], "ncclfi abort");
  // The abort asks for the teardown first, then disarms: each rank's shim either answered the disarm or
  // was already gone when its FIFO was tried (on a loaded host the teardown can win), never neither.
  EXPECT_GE(controls[0]["acknowledged"].get<int>() + controls[0]["skipped_dead"].get<int>(), 2)
      << "both ranks' net shims disarmed or gone: " << controls[0].dump();
  EXPECT_EQ(controls[0]["refused"].get<int>(), 0) << controls[0].dump();
  // No injection after the abort was given, and the frozen-rank fault (due in 60 s) never fired.
  for (const auto& e : events_named(run + "/events.jsonl", "inject")) {
    EXPECT_LE(e["ts_ns"].get<int64_t>(), controls[0]["ts_ns"].get<int64_t>() + 50'000'000) << e.dump();
    EXPECT_NE(e["fault_id"], "freeze");
  }
  for (int pid : rank_pids(run)) EXPECT_FALSE(process_alive(pid)) << "rank process " << pid << " survived";
  const auto verdict = read_json(run + "/verdict.json");
  EXPECT_NE(verdict["harness_error"].get<std::string>().find("aborted by `ncclfi abort`"), std::string::npos);
  EXPECT_NE(read_text(run + "/drill-report.md").find("| abort | all | ncclfi abort |"), std::string::npos);
}

TEST(Drill, CtrlCStopsInjectionAndIsRecorded) {
  REQUIRE_CPU_RING();
  TempDir dir;
  const auto [cli, run] = start_drill(dir, "drill-ctrl-c");
  ASSERT_FALSE(events_named(run + "/events.jsonl", "inject").empty()) << read_text(dir.path + "/cli.out");
  ::kill(cli, SIGINT);
  const int status = wait_pid(cli, 60);
  ASSERT_NE(status, -1);
  EXPECT_EQ(WEXITSTATUS(status), 3);
  const auto controls = events_named(run + "/events.jsonl", "control");
  ASSERT_EQ(controls.size(), 1u);
  EXPECT_EQ(controls[0]["action"], "abort");
  EXPECT_EQ(controls[0]["by"], "signal 2");
  for (int pid : rank_pids(run)) EXPECT_FALSE(process_alive(pid));
}

TEST(Drill, FrozenRankReportSaysWhatWhereWhenAndWhoDetected) {
  REQUIRE_CPU_RING();
  TempDir dir;
  const auto r = run_cli({"run", drill_file("drill-frozen-rank"), "--out", dir.path, "-q"}, 110);
  const std::string run = dir.path + "/drill-frozen-rank/latest";
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string md = read_text(run + "/drill-report.md");
  EXPECT_NE(md.find("## Drill report: drill-frozen-rank (pass)"), std::string::npos) << md;
  // The stop and its heal, on rank 3 of this host: the window lasted its duration_s (5 s). The heal's
  // time is measured, so it may land a millisecond either side of +5.000 s.
  const std::string row = "| freeze | proc stop | " + this_host() + " | 3 | 1 | 1 | +0.000 s | +";
  const auto at = md.find(row);
  ASSERT_NE(at, std::string::npos) << md;
  const double healed_at = std::stod(md.substr(at + row.size()));
  EXPECT_NEAR(healed_at, 5.0, 0.05) << md;
  EXPECT_NE(md.find("| yes | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("First detection: rank "), std::string::npos) << md;
  EXPECT_NE(md.find("by workload_watchdog"), std::string::npos) << md;
  EXPECT_NE(md.find("| outcome | pass |"), std::string::npos) << md;
  EXPECT_NE(md.find("not recovered"), std::string::npos) << "the job ended on its watchdogs\n" << md;
  const auto printed = run_cli({"report", "--markdown", run});
  EXPECT_EQ(printed.out, md);
  const auto html = run_cli({"report", run});
  EXPECT_NE(read_text(run + "/report.html").find("drill report"), std::string::npos) << html.err;
}

// A drill runs its ranks quiet: what they print says neither ncclfi nor inject, though the fault fired
// (the events say so) and the job noticed it.
TEST(Drill, RanksPrintNothingThatNamesNcclfiOrAnInjection) {
  REQUIRE_CPU_RING();
  TempDir dir;
  const auto r = run_cli({"run", drill_file("drill-nic-drop-one-rank"), "--out", dir.path, "-q"}, 110);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string run = dir.path + "/drill-nic-drop-one-rank/latest";
  EXPECT_FALSE(events_named(run + "/events.jsonl", "inject").empty());
  int logs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::canonical(run))) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.rfind("rank-", 0) != 0) continue;
    ++logs;
    std::string text = read_text(entry.path().string());
    const std::string printed = text;
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    EXPECT_EQ(text.find("ncclfi"), std::string::npos) << name << ":\n" << printed;
    EXPECT_EQ(text.find("inject"), std::string::npos) << name << ":\n" << printed;
  }
  EXPECT_EQ(logs, 4) << "one output file per rank";
}

TEST(Drill, FlappingLinkInjectsAndHealsEveryWindow) {
  REQUIRE_CPU_RING();
  TempDir dir;
  const auto r = run_cli({"run", drill_file("drill-flapping-link"), "--out", dir.path, "-q"}, 300);
  const std::string run = dir.path + "/drill-flapping-link/latest";
  ASSERT_TRUE(fs::exists(run + "/verdict.json")) << r.out << r.err;
  std::set<uint64_t> injected, healed;
  for (const auto& e : events_named(run + "/events.jsonl", "inject"))
    injected.insert(e["window"].get<uint64_t>());
  for (const auto& e : events_named(run + "/events.jsonl", "heal"))
    healed.insert(e["window"].get<uint64_t>());
  EXPECT_EQ(injected, (std::set<uint64_t>{1, 2, 3}));
  EXPECT_EQ(healed, (std::set<uint64_t>{1, 2, 3}));
  const std::string md = read_text(run + "/drill-report.md");
  for (const char* w : {"| flap | net stall | ", "| 1 | 1 | +0.000 s | +1.500 s | yes |", "| 1 | 3 | +5.0",
                        " | +6.500 s | yes | 1 |"})
    EXPECT_NE(md.find(w), std::string::npos) << w << "\n" << md;
  EXPECT_NE(read_text(run + "/../../suites/latest/report.html").find("data-window=\"3\""), std::string::npos);
}

}  // namespace
}  // namespace ncclfi::e2e
