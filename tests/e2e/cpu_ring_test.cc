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

// A rank kept out of the bootstrap: the preload's connect() answers its connects to the job's rendezvous
// with EHOSTUNREACH, every time, and no other connection. cpu-ring retries as NCCL's bootstrap does and
// gives up with NCCL's WARN; the other ranks reached the rendezvous and only wait; diagnose names rank 2
// at the bootstrap.
TEST(CpuRing, ARankKeptOutOfTheBootstrapRetriesAsNcclDoesAndIsNamed) {
  REQUIRE_CPU_RING();
  TempDir dir;
  CliResult r;
  const auto verdict = run_one("bootstrap-rank-kept-out", dir.path, &r);
  EXPECT_EQ(verdict["status"], "pass") << r.out << r.err << verdict.dump(2);
  const std::string run = dir.path + "/bootstrap-rank-kept-out/latest";
  std::ifstream events(run + "/events.jsonl");
  int injections = 0;
  for (std::string line; std::getline(events, line);) {
    const auto e = nlohmann::json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("event", "") != "inject") continue;
    ++injections;
    EXPECT_EQ(e.value("rank", -1), 2) << line;
    EXPECT_EQ(e.value("point", ""), "nccl/bootstrap/rendezvous") << line;
    EXPECT_EQ(e.value("errno_name", ""), "EHOSTUNREACH") << line;
  }
  EXPECT_EQ(injections, 4) << "NCCL_SOCKET_RETRY_CNT=3: three retries after the first attempt";
  const std::string kept_out = read_text(run + "/attempt-0/rank-2.log");
  for (int n = 1; n <= 3; ++n) {
    EXPECT_NE(kept_out.find("NCCL INFO socketStartConnect: connect to 127.0.0.1<"), std::string::npos);
    EXPECT_NE(kept_out.find("returned No route to host, retrying (" + std::to_string(n) +
                            "/3) after sleep for " + std::to_string(100 * n) + " msec"),
              std::string::npos)
        << kept_out;
  }
  EXPECT_NE(kept_out.find("misc/socket.cc:582 NCCL WARN socketStartConnect: connect to 127.0.0.1<"),
            std::string::npos)
      << kept_out;
  EXPECT_NE(kept_out.find("exceeded error retry count after 4 attempts"), std::string::npos) << kept_out;
  for (int rank : {0, 1, 3}) {
    const std::string log = read_text(run + "/attempt-0/rank-" + std::to_string(rank) + ".log");
    EXPECT_EQ(log.find("socketStartConnect"), std::string::npos) << "rank " << rank << " was not kept out";
    EXPECT_NE(log.find("Init START"), std::string::npos) << log;
  }
  const auto d = run_cli({"diagnose", run});
  EXPECT_NE(d.out.find("Culprit:    rank 2"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("Site:       bootstrap"), std::string::npos) << d.out;
}

// cpu-ring calls no NCCL function: the only api fault it takes is one at its rendezvous.
TEST(CpuRing, AnApiFaultOtherThanAtTheRendezvousIsRefused) {
  TempDir dir;
  nlohmann::json s = read_json(scenario("bootstrap-rank-kept-out"));
  s["faults"][0]["target"]["ops"] = {"root"};
  const auto r = run_cli({"validate", write_scenario(dir.path, s)});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("an api fault at op \"rendezvous\" only"), std::string::npos)
      << r.out << r.err;
}

}  // namespace
}  // namespace ncclfi::e2e
