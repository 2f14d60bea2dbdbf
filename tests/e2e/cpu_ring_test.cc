// The CPU catalogue through the real net shim and cpu-ring: the DESIGN.md example scenario as
// written, and every CPU scenario's verdict. Skipped (GTEST_SKIP) until both binaries are built.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

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
  // /workload/args/5 is --timeout-s's value in both files; the stall lasts 1 s.
  const auto r = run_cli({"sweep", scenario("net-stall-survived"), "--set", "/workload/args/5=0.5,2",
                          "--hang", scenario("net-drop-recv-hang"), "--out", dir.path, "-q"},
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
    if (!fifo) usleep(50000);
  }
  ASSERT_TRUE(fifo) << "no control FIFO in " << run;
  usleep(500000);  // let the ring run a while unarmed: nothing may fire yet
  const auto arm = run_cli({"arm", run, "drop1"}, 30);
  EXPECT_EQ(arm.exit_code, 0) << arm.out << arm.err;
  EXPECT_NE(arm.out.find("acknowledged"), std::string::npos);
  const int status = wait_pid(cli, 60);
  ASSERT_NE(status, -1);
  EXPECT_EQ(WEXITSTATUS(status), 0) << read_text(dir.path + "/cli.out");
}

class CpuCatalogue : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuCatalogue, ScenarioPasses) {
  REQUIRE_CPU_RING();
  TempDir dir;
  CliResult r;
  const auto verdict = run_one(GetParam(), dir.path, &r);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(verdict.value("verdict", ""), "pass") << verdict.dump(2).substr(0, 4000);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CpuCatalogue,
                         ::testing::Values("cpu-ring-clean", "cpu-ring-8-ranks-clean", "net-delay-degraded",
                                           "net-throttle-degraded", "net-corrupt-detected",
                                           "net-corrupt-silent", "net-error-isend", "net-connect-fail",
                                           "net-stall-survived", "net-stall-false-positive",
                                           "proc-stop-frozen-rank", "proc-kill-rank",
                                           "net-drop-restart-recovered", "proc-stop-all-hung"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (auto& c : n) c = (c == '-') ? '_' : c;
                           return n;
                         });

}  // namespace
}  // namespace ncclfi::e2e
