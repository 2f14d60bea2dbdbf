// Hostile jobs against `ncclfi run`: output that used to crash or stall the classifiers, records that
// cannot be written, reserved variables, escaping daemons, concurrent runs.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string latest_run(const std::string& runs, const std::string& name) {
  return fs::canonical(fs::path(runs) / name / "latest").string();
}

// Before: one 50 KB line of digits and spaces overflowed std::regex's stack: ncclfi died of SIGSEGV.
TEST(RobustRun, HugeDigitLineIsClassifiedAndTheCutIsRecorded) {
  TempDir dir;
  const auto file = write_scenario(
      dir.path, shell_scenario("digits", 2, "head -c 60000 /dev/zero | tr '\\0' 7; echo; exit 0",
                               {{"outcome", "clean"}}));
  const auto r = run_cli({"run", file, "--out", dir.path + "/runs", "-q"}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string run = latest_run(dir.path + "/runs", "digits");
  EXPECT_EQ(read_json(run + "/verdict.json")["verdict"], "pass");
  EXPECT_NE(read_text(run + "/events.jsonl").find("\"output_truncated\""), std::string::npos);
}

// Before: (a*)*b against a line of 30 a's backtracked for minutes; the 2 s deadline was not kept.
TEST(RobustRun, CatastrophicScenarioPatternDoesNotHoldTheDeadline) {
  TempDir dir;
  json s = shell_scenario("backtrack", 1, "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; exec sleep 100",
                          {{"outcome", "hung"}, {"detected_by", {"harness_deadline"}}}, 2.0);
  s["log_patterns"] = {{{"regex", "(a*)*b"}, {"mechanism", "api_error"}}};
  const auto r = run_cli({"run", write_scenario(dir.path, s), "--out", dir.path + "/runs", "-q"}, 60);
  ASSERT_FALSE(r.timed_out) << "ncclfi did not keep its deadline";
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LT(r.seconds, 30);
}

}  // namespace
}  // namespace ncclfi::e2e
