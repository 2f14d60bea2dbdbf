// Bad input is rejected before anything launches, with file, JSON pointer and expectation (exit 2);
// the catalogue validates; every command has --help with examples.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;

json good_scenario() {
  return shell_scenario("good", 2, "exit 0", {{"outcome", "clean"}});
}

TEST(CliValidate, CatalogueValidates) {
  const auto r = run_cli({"validate", std::string(NCCLFI_SOURCE_DIR) + "/scenarios"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("net-drop-recv-hang"), std::string::npos);
  EXPECT_NE(r.out.find(" 0 invalid"), std::string::npos) << r.out;
}

TEST(CliValidate, UnknownKeyNamesFileAndPointer) {
  TempDir dir;
  json s = good_scenario();
  s["workload"]["argz"] = json::array();
  const std::string file = write_scenario(dir.path, s);
  const auto r = run_cli({"validate", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + ": /workload/argz: expected no such key"), std::string::npos) << r.err;
}

TEST(CliValidate, WrongTypeSaysExpectedAndGot) {
  TempDir dir;
  json s = good_scenario();
  s["workload"]["ranks"] = "four";
  const std::string file = write_scenario(dir.path, s);
  const auto r = run_cli({"validate", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + ": /workload/ranks: expected an integer from 1 to 4096"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("got \"four\""), std::string::npos) << r.err;
}

TEST(CliValidate, FaultErrorsComeFromThePlanParserWithTheirPointer) {
  TempDir dir;
  json s = good_scenario();
  s["faults"] = {{{"id", "x"}, {"layer", "proc"}, {"kind", "kill"}, {"trigger", {{"after_calls", "ten"}}}}};
  s["expect"] = {{"outcome", "detected"}};
  const std::string file = write_scenario(dir.path, s);
  const auto r = run_cli({"validate", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + ": /faults/0/trigger/after_calls: expected"), std::string::npos) << r.err;
}

TEST(CliValidate, KindThatDoesNotExistOnTheLayer) {
  TempDir dir;
  json s = good_scenario();
  s["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "hang"}}};
  s["expect"] = {{"outcome", "detected"}};
  const auto r = run_cli({"validate", write_scenario(dir.path, s)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/faults/0/kind"), std::string::npos) << r.err;
}

TEST(CliValidate, CrossFieldRankOutsideJobAndShortDeadline) {
  TempDir dir;
  json s = good_scenario();
  s["workload"] = {{"builtin", "cpu-ring"}, {"ranks", 2}, {"args", {"--timeout-s", "30"}}};
  s["launcher"] = {{"kind", "local"}};
  s["deadline_s"] = 10;
  s["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "drop"}, {"target", {{"ranks", {5}}}}}};
  s["expect"] = {{"outcome", "detected"}, {"ranks", {0, 7}}};
  const std::string file = write_scenario(dir.path, s);
  const auto r = run_cli({"validate", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + ": /faults/0/target/ranks/0: expected a rank of the job (0-1), got 5"),
            std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find(file +
                 ": /deadline_s: expected a deadline longer than the workload's --timeout-s (30 s), got 10"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("/expect/ranks/1"), std::string::npos) << r.err;
}

TEST(CliValidate, RunRejectsBadInputBeforeLaunchingAnything) {
  TempDir dir;
  json good = shell_scenario("launch-marker", 1, "touch " + dir.path + "/launched", {{"outcome", "clean"}});
  json bad = good_scenario();
  bad["name"] = "zz-bad";
  bad["deadline_s"] = -1;
  write_scenario(dir.path, good);
  write_scenario(dir.path, bad);
  const auto r = run_cli({"run", dir.path, "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/deadline_s: expected a number of seconds > 0 and at most 604800 (a week), got -1"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(file_exists(dir.path + "/launched"));
}

TEST(CliValidate, SyntaxErrorAndMissingFile) {
  TempDir dir;
  const std::string file = dir.path + "/broken.json";
  std::ofstream(file) << "{\"name\": ";
  auto r = run_cli({"validate", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + ": /: expected valid JSON"), std::string::npos) << r.err;
  r = run_cli({"run", dir.path + "/nope.json"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CliHelp, EveryCommandHasHelpWithExamples) {
  for (const char* cmd : {"run", "validate", "list", "report", "arm", "disarm", "sweep"}) {
    const auto r = run_cli({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Example"), std::string::npos) << cmd << ": " << r.out;
  }
  EXPECT_EQ(run_cli({"frobnicate"}).exit_code, 2);
}

TEST(CliList, FaultsPointsScenarios) {
  auto r = run_cli({"list", "faults"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("drop"), std::string::npos);
  EXPECT_NE(r.out.find("init_hang"), std::string::npos);
  r = run_cli({"list", "points"});
  EXPECT_NE(r.out.find("net/irecv"), std::string::npos);
  EXPECT_NE(r.out.find("proc/kill"), std::string::npos);
  r = run_cli({"list", "scenarios", std::string(NCCLFI_SOURCE_DIR) + "/scenarios/cpu"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("net-drop-recv-hang"), std::string::npos);
}

}  // namespace
}  // namespace ncclfi::e2e
