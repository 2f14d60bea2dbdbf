// The CPU catalogue through the real net shim and cpu-ring: the DESIGN.md example scenario as
// written, and every CPU scenario's verdict. Skipped (exit 77) until both binaries are built.
#include <gtest/gtest.h>

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
