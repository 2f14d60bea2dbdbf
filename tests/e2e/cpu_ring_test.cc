// The real net shim and cpu-ring through the CLI: the drop scenario's detection timing, the timeout
// sweep, and arming a fault at run time. (Every CPU scenario's verdict is a test of its own: e2e.<name>,
// from tests/CMakeLists.txt.) Skipped (GTEST_SKIP) until both binaries are built.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

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

std::string scenario(const std::string& name) {
  return std::string(NCCLFI_SOURCE_DIR) + "/scenarios/cpu/" + name + ".json";
}

nlohmann::json run_one(const std::string& name, const std::string& runs, CliResult* out = nullptr) {
  const auto r = run_cli({"run", scenario(name), "--out", runs, "-q"}, 110);
  if (out != nullptr) *out = r;
  EXPECT_FALSE(r.timed_out) << name;
  const std::string verdict = runs + "/" + name + "/latest/verdict.json";
  if (!fs::exists(verdict)) {
    ADD_FAILURE() << name << ": no verdict.json\n" << r.out << r.err;
    return {};
  }
  return read_json(verdict);
}

// Events named `event` in an event log (lines that do not parse yet are skipped).
int count_events(const std::string& path, const std::string& event, int rank = -1) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line, nullptr, false);
    if (e.is_object() && e.value("event", "") == event && (rank < 0 || e.value("rank", -1) == rank)) ++n;
  }
  return n;
}

// Waits (at most timeout_s) until each of `ranks` ranks logged `ops` collectives.
bool wait_for_ops(const std::string& events, int ranks, int ops, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    bool all = true;
    for (int r = 0; r < ranks && all; ++r) all = count_events(events, "op", r) >= ops;
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(CpuRing, DesignExampleDropIsDetectedByEveryWatchdogInTime) {
  REQUIRE_CPU_RING();
  TempDir dir;
  CliResult r;
  const auto verdict = run_one("net-drop-recv-hang", dir.path, &r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << verdict.dump(2);
  EXPECT_EQ(verdict["outcome"], "detected");
  ASSERT_TRUE(verdict["detection_s"].is_number()) << verdict.dump(2);
  EXPECT_GE(verdict["detection_s"].get<double>(), 2.5);
  EXPECT_LE(verdict["detection_s"].get<double>(), 5.0);
}

TEST(CpuRing, TimeoutSweepRecommendsTheSmallestTimeoutThatSurvivesTheStall) {
  REQUIRE_CPU_RING();
  TempDir dir;
  // Both files pass their parameter timeout_s to --timeout-s; the stall lasts 1 s.
  const auto r = run_cli({"sweep", scenario("net-stall-survived"), "--set", "timeout_s=0.5,2", "--hang",
                          scenario("net-drop-recv-hang"), "--out", dir.path, "-q"},
                         110);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("recommended timeout 2s"), std::string::npos) << r.out;
}

TEST(CpuRing, ArmAtRunTimeThroughTheControlFifo) {
  REQUIRE_CPU_RING();
  TempDir dir;
  nlohmann::json s = {
      {"name", "armed-at-runtime"},
      {"summary", "a drop that waits for `ncclfi arm`"},
      {"workload",
       {{"builtin", "cpu-ring"},
        {"ranks", 2},
        {"args", {"--iters", "1000000", "--bytes", "64K", "--timeout-s", "2"}}}},
      {"control", true},
      {"faults",
       {{{"id", "drop1"},
         {"layer", "net"},
         {"kind", "drop"},
         {"target", {{"ranks", {1}}, {"direction", "recv"}}},
         {"trigger", {{"armed", false}}}}}},
      {"deadline_s", 40},
      {"grace_s", 1},
      {"expect",
       {{"outcome", "detected"}, {"detected_by", {"workload_watchdog"}}, {"detection_s", {{"max", 4}}}}}};
  const auto file = write_scenario(dir.path, s);
  const pid_t cli = start_cli({"run", file, "--out", dir.path + "/runs", "-q"}, dir.path + "/cli.out");
  const std::string run = dir.path + "/runs/armed-at-runtime/latest";
  bool fifo = false;
  for (int i = 0; i < 400 && !fifo; ++i) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run, ec)) {
      const auto name = e.path().filename().string();
      if (name.rfind("ncclfi-", 0) == 0 && name.size() > 3 && name.substr(name.size() - 3) == ".in")
        fifo = true;
    }
    if (!fifo) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fifo) << "no control FIFO in " << run;
  // The ring runs unarmed for a while (both ranks through 50 collectives) and nothing fires.
  ASSERT_TRUE(wait_for_ops(run + "/events.jsonl", 2, 50, 30))
      << read_text(run + "/events.jsonl").substr(0, 2000);
  EXPECT_EQ(count_events(run + "/events.jsonl", "inject"), 0) << "a disarmed fault fired";
  const auto arm = run_cli({"arm", run, "drop1"}, 30);
  EXPECT_EQ(arm.exit_code, 0) << arm.out << arm.err;
  EXPECT_NE(arm.out.find("acknowledged"), std::string::npos);
  const int status = wait_pid(cli, 60);
  ASSERT_NE(status, -1);
  EXPECT_EQ(WEXITSTATUS(status), 0) << read_text(dir.path + "/cli.out");
  // The arm is on the run's own timeline, before the injection it enabled.
  const nlohmann::json verdict = read_json(run + "/verdict.json");
  int64_t armed_ns = 0, injected_ns = 0;
  for (const auto& e : verdict["history"]["events"]) {
    if (e["event"] == "control" && e["fields"]["action"] == "arm" && e["fields"]["fault_id"] == "drop1")
      armed_ns = e["ts_ns"];
    if (e["event"] == "inject" && injected_ns == 0) injected_ns = e["ts_ns"];
  }
  EXPECT_GT(armed_ns, 0) << "no control event in the run's history";
  EXPECT_LE(armed_ns, injected_ns);
}

}  // namespace
}  // namespace ncclfi::e2e
