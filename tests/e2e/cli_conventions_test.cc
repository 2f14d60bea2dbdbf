// The command line's conventions: --version, "did you mean" for mistyped commands and options, --json
// on run/validate/list/sweep, --repeat with pass rates, --color and NO_COLOR, arm/disarm naming the
// run's faults and leaving an event, and one exit status table for every command.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;

TEST(CliConventions, VersionNamesTheNcclAndCudaItWasBuiltAgainst) {
  const auto r = run_cli({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ncclfi 0.", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "built against NCCL ")) << r.out;
  EXPECT_TRUE(contains(r.out, ", CUDA ")) << r.out;
}

TEST(CliConventions, MistypedCommandGetsASuggestion) {
  const auto r = run_cli({"rnu", "scenarios/"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unknown command 'rnu'. Did you mean 'run'?")) << r.err;
  const auto far = run_cli({"frobnicate"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_TRUE(contains(far.err, "unknown command 'frobnicate'.")) << far.err;
  EXPECT_FALSE(contains(far.err, "Did you mean")) << "nothing is close to frobnicate: " << far.err;
}

TEST(CliConventions, MistypedOptionGetsASuggestion) {
  const auto r = run_cli({"validate", "x.json", "--jsno"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "ncclfi validate: unknown option '--jsno'. Did you mean '--json'?")) << r.err;
  // A global option is valid after the command, and its value is not taken for a command.
  const auto colr = run_cli({"run", "--colr", "never", "x.json"});
  EXPECT_EQ(colr.exit_code, 2);
  EXPECT_TRUE(contains(colr.err, "Did you mean '--color'?")) << colr.err;
}

TEST(CliConventions, NoCommandListsTheCommands) {
  const auto r = run_cli({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(contains(r.err, "A subcommand is required")) << r.err;
  EXPECT_TRUE(contains(r.err, "give a command")) << r.err;
  EXPECT_TRUE(contains(r.err, "validate")) << r.err;
}

TEST(CliConventions, ValidateJsonListsEachFileWithItsErrors) {
  TempDir dir;
  const auto good = write_scenario(dir.path, shell_scenario("good", 1, "exit 0", {{"outcome", "clean"}}));
  json bad_doc = shell_scenario("bad", 1, "exit 0", {{"outcome", "clean"}});
  bad_doc["workload"]["ranks"] = "two";
  const auto bad = write_scenario(dir.path, bad_doc);
  const auto r = run_cli({"validate", good, bad, "--json"});
  EXPECT_EQ(r.exit_code, 2);
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["valid"], 1);
  EXPECT_EQ(doc["invalid"], 1);
  ASSERT_EQ(doc["files"].size(), 2u);
  for (const auto& f : doc["files"]) {
    if (f["file"] == good) {
      EXPECT_EQ(f["valid"], true);
      EXPECT_EQ(f["name"], "good");
    } else {
      EXPECT_EQ(f["valid"], false);
      EXPECT_EQ(f["errors"][0]["pointer"], "/workload/ranks") << f.dump();
    }
  }
}

TEST(CliConventions, EveryErrorOfAFileInOnePass) {
  TempDir dir;
  json doc = shell_scenario("two-errors", 1, "exit 0", {{"outcome", "detected"}});
  doc["workload"]["ranks"] = "two";                                         // the schema's
  doc["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "teleport"}}};  // the fault parser's
  const auto r = run_cli({"validate", write_scenario(dir.path, doc), "--json"});
  EXPECT_EQ(r.exit_code, 2);
  const json doc_out = json::parse(r.out);
  std::vector<std::string> pointers;
  for (const auto& e : doc_out["files"][0]["errors"]) pointers.push_back(e["pointer"]);
  EXPECT_NE(std::find(pointers.begin(), pointers.end(), "/workload/ranks"), pointers.end()) << r.out;
  EXPECT_NE(std::find(pointers.begin(), pointers.end(), "/faults/0/kind"), pointers.end()) << r.out;
}

TEST(CliConventions, YamlScenariosRunAndTheirErrorsNameTheLine) {
  TempDir dir;
  const std::string yaml = dir.path + "/s.yaml";
  std::ofstream(yaml) << "name: yaml-scenario\n"
                         "summary: written in YAML\n"
                         "params: {code: \"0\"}\n"
                         "workload:\n"
                         "  command: [/bin/sh, -c, \"exit {param:code}\"]\n"
                         "  ranks: 1\n"
                         "launcher: {kind: command}\n"
                         "baseline: false\n"
                         "deadline_s: 10\n"
                         "expect: {outcome: clean}\n";
  const auto run = run_cli({"run", yaml, "--out", dir.path + "/runs", "-q", "--json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["runs"][0]["scenario"], "yaml-scenario");
  // Swept by the parameter's name: code=3 fails the clean expectation.
  const auto sweep =
      run_cli({"sweep", yaml, "--set", "code=0,3", "--out", dir.path + "/runs", "-q", "--json"});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  const json matrix = json::parse(sweep.out)["matrix"];
  EXPECT_TRUE(contains(matrix.dump(), "\"pass\"")) << matrix.dump();
  EXPECT_TRUE(contains(matrix.dump(), "\"fail\"")) << matrix.dump();
  std::ofstream(dir.path + "/bad.yaml") << "name: bad\n"
                                           "summary: x\n"
                                           "workload:\n"
                                           "  command: [/bin/true]\n"
                                           "  ranks: two\n"
                                           "expect: {outcome: clean, bogus: 1}\n";
  const auto bad = run_cli({"validate", dir.path + "/bad.yaml"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(contains(bad.err, dir.path + "/bad.yaml:5: /workload/ranks: expected")) << bad.err;
  EXPECT_TRUE(contains(bad.err, dir.path + "/bad.yaml:6: /expect/bogus: expected")) << bad.err;
}

TEST(CliConventions, ValidateChecksABareFaultPlan) {
  TempDir dir;
  const std::string plan = dir.path + "/plan.json";
  std::ofstream(plan)
      << R"({"seed": 1, "faults": [{"id": "d", "layer": "net", "kind": "delay", "params": {"ms": -5}}]})";
  const auto bad = run_cli({"validate", plan});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(contains(bad.err, plan + ": /faults/0/params/ms: expected")) << bad.err;
  std::ofstream(plan)
      << R"({"seed": 1, "faults": [{"id": "d", "layer": "net", "kind": "delay", "params": {"ms": 5}}]})";
  const auto good = run_cli({"validate", plan});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_TRUE(contains(good.out, "(fault plan: 1 fault(s))")) << good.out;
}

TEST(CliConventions, ListJsonHasTheSameContentAsTheText) {
  const auto text = run_cli({"list", "points"});
  const auto as_json = run_cli({"list", "points", "--json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  std::string lines;
  for (const auto& p : json::parse(as_json.out)) lines += p.get<std::string>() + "\n";
  EXPECT_EQ(lines, text.out);
  const auto faults = run_cli({"list", "faults", "--json"});
  ASSERT_EQ(faults.exit_code, 0) << faults.err;
  const json kinds = json::parse(faults.out);
  ASSERT_FALSE(kinds.empty());
  const auto markdown = run_cli({"list", "faults"}).out;
  for (const auto& k : kinds) {
    EXPECT_TRUE(contains(markdown, k["kind"].get<std::string>())) << k.dump();
    EXPECT_TRUE(k["params"].is_array());
  }
}

TEST(CliConventions, RunJsonPrintsTheSummaryAndNoTable) {
  TempDir dir;
  const auto file = write_scenario(dir.path, shell_scenario("json-run", 1, "exit 0", {{"outcome", "clean"}}));
  const auto r = run_cli({"run", file, "--out", dir.path + "/runs", "--json", "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);  // stdout is one JSON document, nothing else
  EXPECT_EQ(doc["passed"], 1);
  EXPECT_EQ(doc["runs"][0]["scenario"], "json-run");
  EXPECT_EQ(doc["runs"][0]["status"], "pass");
}

TEST(CliConventions, RepeatReportsThePassRateOfAFlakyScenario) {
  TempDir dir;
  // Passes on every other run: a counter in a file decides.
  const std::string counter = dir.path + "/count";
  const std::string shell = "n=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n + 1)) > " + counter +
                            "; [ $((n % 2)) -eq 0 ] && exit 0; exit 3";
  const auto file = write_scenario(dir.path, shell_scenario("flaky", 1, shell, {{"outcome", "clean"}}));
  const auto r = run_cli({"run", file, "--out", dir.path + "/runs", "--repeat", "4", "--json", "-q"}, 120);
  EXPECT_EQ(r.exit_code, 1) << "a flaky scenario fails the suite: " << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["runs"].size(), 4u);
  ASSERT_TRUE(doc.contains("pass_rates")) << doc.dump(2);
  const json rate = doc["pass_rates"][0];
  EXPECT_EQ(rate["scenario"], "flaky");
  EXPECT_EQ(rate["runs"], 4);
  EXPECT_EQ(rate["passed"], 2);
  EXPECT_EQ(rate["flaky"], true);
  const auto table = run_cli({"report", dir.path + "/runs"});
  EXPECT_TRUE(contains(table.out, "2/4 passed (50%), flaky")) << table.out;
}

TEST(CliConventions, MetricsFileIsValidPrometheusText) {
  TempDir dir;
  const auto file = write_scenario(dir.path, shell_scenario("metrics", 1, "exit 0", {{"outcome", "clean"}}));
  const std::string metrics = dir.path + "/ncclfi.prom";
  const auto r = run_cli({"run", file, "--out", dir.path + "/runs", "-q", "--metrics", metrics});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(metrics);
  EXPECT_TRUE(contains(text, "ncclfi_scenario_status{scenario=\"metrics\",run=\"1\",status=\"pass\"} 1\n"))
      << text;
  EXPECT_TRUE(contains(text, "ncclfi_scenario_duration_seconds{scenario=\"metrics\",run=\"1\"} ")) << text;
  // Prometheus' own linter, where Debian's prometheus package is installed.
  if (!file_exists("/usr/bin/promtool")) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  const auto check = run_program({"/bin/sh", "-c", "promtool check metrics < " + metrics});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(CliConventions, ColorFollowsTheFlagAndNoColor) {
  TempDir dir;
  const auto file = write_scenario(dir.path, shell_scenario("colors", 1, "exit 0", {{"outcome", "clean"}}));
  const auto always = run_cli({"run", file, "--out", dir.path + "/runs", "-q", "--color", "always"});
  EXPECT_EQ(always.exit_code, 0) << always.err;
  EXPECT_TRUE(contains(always.out, "\033[32mpass")) << always.out;
  // stdout is a pipe here: auto means no colour.
  const auto automatic = run_cli({"report", dir.path + "/runs"});
  EXPECT_FALSE(contains(automatic.out, "\033[")) << automatic.out;
  const auto never = run_cli({"report", dir.path + "/runs", "--color", "never"});
  EXPECT_FALSE(contains(never.out, "\033["));
  const auto bad = run_cli({"report", dir.path + "/runs", "--color", "sometimes"});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(CliConventions, NoColorTurnsAutoColourOffEvenOnATerminal) {
  // `script` gives ncclfi a terminal; NO_COLOR must win over it, --color always over NO_COLOR.
  TempDir dir;
  const auto file = write_scenario(dir.path, shell_scenario("nocolor", 1, "exit 0", {{"outcome", "clean"}}));
  ASSERT_EQ(run_cli({"run", file, "--out", dir.path + "/runs", "-q"}).exit_code, 0);
  auto on_tty = [&](const std::string& env, const std::string& extra) {
    const std::string cmd = env + " " + std::string(NCCLFI_CLI) + " report " + dir.path + "/runs " + extra;
    return run_program({"/usr/bin/script", "-qec", cmd, "/dev/null"});
  };
  const auto plain_tty = on_tty("env -u NO_COLOR", "");
  if (plain_tty.exit_code != 0 && !contains(plain_tty.out, "pass")) GTEST_SKIP() << "no usable `script`";
  EXPECT_TRUE(contains(plain_tty.out, "\033[32mpass")) << plain_tty.out;
  EXPECT_FALSE(contains(on_tty("env NO_COLOR=1", "").out, "\033[32mpass"));
  EXPECT_TRUE(contains(on_tty("env NO_COLOR=1", "--color always").out, "\033[32mpass"));
}

// A run directory as `ncclfi run` leaves it, with a plan of two faults.
std::string fake_run_dir(const TempDir& dir) {
  const std::string run = dir.path + "/run";
  std::filesystem::create_directories(run);
  std::ofstream(run + "/plan.json") << json{
      {"seed", 1},
      {"control", true},
      {"faults",
       {{{"id", "slow"}, {"layer", "net"}, {"kind", "delay"}, {"params", {{"ms", 5}}}},
        {{"id", "stop"},
         {"layer", "proc"},
         {"kind", "stop"}}}}}.dump();
  return run;
}

TEST(CliConventions, ArmWithAnUnknownFaultListsTheRunsFaults) {
  TempDir dir;
  const std::string run = fake_run_dir(dir);
  const auto r = run_cli({"arm", run, "slwo"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "has no fault 'slwo'; its faults: slow, stop")) << r.err;
  EXPECT_FALSE(file_exists(run + "/events.jsonl")) << "nothing was sent, nothing is recorded";
  const auto not_a_run = run_cli({"disarm", dir.path, "slow"});
  EXPECT_EQ(not_a_run.exit_code, 2);
  EXPECT_TRUE(contains(not_a_run.err, "has no plan.json")) << not_a_run.err;
}

TEST(CliConventions, ArmAndDisarmAreRecordedInTheRunsEvents) {
  TempDir dir;
  const std::string run = fake_run_dir(dir);
  // A live harness on this host, as this user: this test process stands in for it.
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::ofstream(run + "/harness.json")
      << json{{"pid", ::getpid()}, {"harness_id", "test"}, {"host", host}}.dump();
  // No live rank: nobody acknowledges (exit 1), and the command is still on the record.
  EXPECT_EQ(run_cli({"arm", run, "slow"}).exit_code, 1);
  EXPECT_EQ(run_cli({"disarm", run, "slow"}).exit_code, 1);
  std::ifstream in(run + "/events.jsonl");
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["event"], "control");
  EXPECT_EQ(lines[0]["source"], "control");
  EXPECT_EQ(lines[0]["action"], "arm");
  EXPECT_EQ(lines[0]["fault_id"], "slow");
  EXPECT_EQ(lines[0]["acknowledged"], 0);
  EXPECT_EQ(lines[0]["rank"], -1);
  EXPECT_EQ(lines[1]["action"], "disarm");
}

}  // namespace
}  // namespace ncclfi::e2e
