// Daily use of the command line: a mistyped command is named with the closest one at every level,
// --filter with globs, `!` and lists, repeats told apart in the reports, `report` on a suite directory,
// and messages about unreadable files that read as sentences.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

TEST(CliDailyUse, MistypedNestedCommandGetsASuggestion) {
  const auto lab = run_cli({"lab", "strat"});
  EXPECT_EQ(lab.exit_code, 2);
  EXPECT_TRUE(contains(lab.err, "ncclfi lab: unknown command 'strat'. Did you mean 'start'?")) << lab.err;
  EXPECT_TRUE(contains(lab.err, "Run 'ncclfi lab --help'")) << lab.err;
  const auto global_first = run_cli({"--color", "never", "lab", "gradbook"});
  EXPECT_TRUE(contains(global_first.err, "Did you mean 'gradebook'?")) << global_first.err;
  const auto top = run_cli({"--color", "never", "valdate", "x.json"});
  EXPECT_TRUE(contains(top.err, "ncclfi: unknown command 'valdate'. Did you mean 'validate'?")) << top.err;
  const auto far = run_cli({"lab", "frobnicate"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_TRUE(contains(far.err, "unknown command 'frobnicate'")) << far.err;
  EXPECT_FALSE(contains(far.err, "Did you mean")) << far.err;
  // A command's own positionals are not commands: `lab start LAB` takes any lab name to check itself.
  EXPECT_FALSE(contains(run_cli({"lab", "start", "strat", "--student", "x"}).err, "unknown command"));
}

// The names --filter keeps out of scenarios/cpu, by a dry run (nothing launched).
std::vector<std::string> filtered(const std::vector<std::string>& filters) {
  std::vector<std::string> args{"run", std::string(NCCLFI_SOURCE_DIR) + "/scenarios/cpu", "--dry-run",
                                "--json"};
  for (const auto& f : filters) {
    args.push_back("--filter");
    args.push_back(f);
  }
  const auto r = run_cli(args);
  std::vector<std::string> names;
  if (r.exit_code != 0) {
    ADD_FAILURE() << "ncclfi run --dry-run exited " << r.exit_code << ": " << r.err;
    return names;
  }
  const json doc = json::parse(r.out);  // held: a range over a temporary's member would dangle
  for (const auto& s : doc["scenarios"]) names.push_back(s["scenario"].get<std::string>());
  return names;
}

TEST(CliDailyUse, FilterTakesGlobsListsAndExclusions) {
  const auto net = filtered({"NET-DROP-*"});
  ASSERT_FALSE(net.empty());
  for (const auto& n : net) EXPECT_EQ(n.rfind("net-drop-", 0), 0u) << n;
  const auto two = filtered({"net-drop-*,proc-*"});
  const auto repeated = filtered({"net-drop-*", "proc-*"});
  EXPECT_EQ(two, repeated);
  EXPECT_GT(two.size(), net.size());
  const auto without = filtered({"net-drop-*", "!*hang*"});
  EXPECT_LT(without.size(), net.size());
  for (const auto& n : without) EXPECT_EQ(n.find("hang"), std::string::npos) << n;
}

TEST(CliDailyUse, RepeatsAreNamedApartAndReportTakesTheSuiteDirectory) {
  TempDir dir;
  const auto file = write_scenario(dir.path, shell_scenario("twice", 1, "exit 0", {{"outcome", "clean"}}));
  const auto r = run_cli({"run", file, "--out", dir.path + "/runs", "--repeat", "2", "--json", "-q"}, 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["runs"][0]["run_name"], "twice#1");
  EXPECT_EQ(summary["runs"][1]["run_name"], "twice#2");
  std::string suite;
  for (const auto& e : fs::directory_iterator(dir.path + "/runs/suites")) suite = e.path().string();
  ASSERT_FALSE(suite.empty());
  const std::string junit = read_text(suite + "/junit.xml");
  EXPECT_TRUE(contains(junit, "name=\"twice#1\"") && contains(junit, "name=\"twice#2\"")) << junit;
  // As the run printed it at its end: the suite directory is enough to render it again.
  const auto again = run_cli({"report", suite, "--color", "never"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.out, "twice#1") && contains(again.out, "twice#2")) << again.out;
  EXPECT_TRUE(contains(again.out, "2/2 passed")) << again.out;
}

TEST(CliDailyUse, AnUnreadableFileIsSaidInASentence) {
  TempDir dir;
  const auto file = write_scenario(dir.path, shell_scenario("x", 1, "exit 0", {{"outcome", "clean"}}));
  const auto hosts = run_cli({"run", file, "--dry-run", "--allowed-hosts", dir.path + "/missing.txt"});
  EXPECT_EQ(hosts.exit_code, 2);
  EXPECT_TRUE(contains(hosts.err, "missing.txt is unreadable (open: No such file or directory)"))
      << hosts.err;
  const auto plan = run_cli({"validate", dir.path + "/plan.json"});
  for (const auto& text : {hosts.err, hosts.out, plan.err, plan.out}) {
    EXPECT_FALSE(contains(text, "is cannot")) << text;
  }
}

}  // namespace
}  // namespace ncclfi::e2e
