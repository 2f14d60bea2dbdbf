// Scenario loading: the schema subset, deferred fault checks, cross-field rules, defaults.
#include <gtest/gtest.h>

#include "nccl_symbols.h"
#include "scenario.h"
#include "scenario_rules.h"
#include "schema_check.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

json minimal() {
  return {{"name", "t"},
          {"summary", "s"},
          {"workload", {{"builtin", "cpu-ring"}, {"ranks", 4}, {"args", {"--timeout-s", "3"}}}},
          {"deadline_s", 30},
          {"expect", {{"outcome", "clean"}}}};
}

std::vector<ScenarioError::Problem> problems_of(const json& doc) {
  try {
    scenario_from_json(doc, "f.json");
  } catch (const ScenarioError& e) {
    return e.problems();
  }
  return {};
}

bool has_problem(const json& doc, const std::string& pointer, const std::string& expected_part) {
  for (const auto& p : problems_of(doc)) {
    if (p.pointer == pointer && p.expected.find(expected_part) != std::string::npos) return true;
  }
  return false;
}

TEST(Scenario, MinimalLoadsWithDefaults) {
  const Scenario s = scenario_from_json(minimal(), "f.json");
  EXPECT_EQ(s.launcher.kind, "local");
  EXPECT_TRUE(s.layer_net);  // cpu-ring always goes through the shim
  EXPECT_FALSE(s.layer_api);
  EXPECT_EQ(s.restart.max, 0);
  EXPECT_TRUE(s.restart.faults_on(0));
  EXPECT_TRUE(s.needs_baseline());
  EXPECT_DOUBLE_EQ(s.grace_s, 3);
}

TEST(Scenario, ErrorMessageFormat) {
  json d = minimal();
  d["deadline_s"] = "soon";
  try {
    scenario_from_json(d, "f.json");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_STREQ(
        e.what(),
        "f.json: /deadline_s: expected a number of seconds > 0 and at most 604800 (a week), got \"soon\"");
  }
}

TEST(Scenario, SchemaRejectsUnknownKeysAndWrongTypesEverywhere) {
  json d = minimal();
  d["expect"]["outcom"] = "clean";
  EXPECT_TRUE(has_problem(d, "/expect/outcom", "no such key"));
  d = minimal();
  d["expect"]["outcome"] = "fine";
  EXPECT_TRUE(has_problem(d, "/expect/outcome", "one of \"clean\""));
  d = minimal();
  d["env"] = {{"A", 1}};
  EXPECT_TRUE(has_problem(d, "/env/A", "string"));
  // '=' in a name smuggled a reserved variable past the rule ("NCCLFI_PLAN=/x" is that assignment).
  for (const char* name : {"NCCLFI_PLAN=/tmp/x", "LD_PRELOAD=x", "1ABC", "A-B"}) {
    d = minimal();
    d["env"] = {{name, "v"}};
    EXPECT_TRUE(has_problem(d, (json::json_pointer("/env") / name).to_string(), "a variable name of letters"))
        << name;
  }
  d = minimal();
  d["env"] = {{"NCCL_DEBUG", "INFO"}, {"_MY_VAR2", "x"}};
  EXPECT_FALSE(has_problem(d, "/env/NCCL_DEBUG", "")) << "a plain name is fine";
  d = minimal();
  d["expect"]["ranks"] = "some";
  EXPECT_TRUE(has_problem(d, "/expect/ranks", "\"all\", \"any\" or an array"));
  d = minimal();
  d.erase("summary");
  EXPECT_TRUE(has_problem(d, "/summary", "non-empty string"));
}

TEST(Scenario, FaultsValidatedByThePlanParser) {
  json d = minimal();
  d["expect"] = {{"outcome", "detected"}};
  d["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "drop"}, {"trigger", {{"after_calls", -1}}}}};
  const auto problems = problems_of(d);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].pointer, "/faults/0/trigger/after_calls");
}

TEST(Scenario, UnknownMechanismAndBadRegex) {
  json d = minimal();
  d["expect"] = {{"outcome", "clean"}, {"detected_by", {"telepathy"}}, {"log_matches", {"(unclosed"}}};
  EXPECT_TRUE(has_problem(d, "/expect/detected_by/0", "detection mechanism"));
  EXPECT_TRUE(has_problem(d, "/expect/log_matches/0", "regular expression"));
}

TEST(ScenarioRules, CrossField) {
  json d = minimal();
  d["expect"] = {{"outcome", "detected"}};
  d["faults"] = {{{"id", "x"}, {"layer", "api"}, {"kind", "hang"}}};
  EXPECT_TRUE(has_problem(d, "/faults/0/layer", "cpu-ring makes no NCCL API calls"));
  d["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "drop"}, {"target", {{"peer", 9}}}}};
  EXPECT_TRUE(has_problem(d, "/faults/0/target/peer", "a rank of the job (0-3)"));
  d = minimal();
  d["deadline_s"] = 2;
  EXPECT_TRUE(has_problem(d, "/deadline_s", "--timeout-s (3 s)"));
  d = minimal();
  d["expect"] = {{"outcome", "recovered"}};
  d["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "drop"}}};
  EXPECT_TRUE(has_problem(d, "/expect/outcome", "no restart is allowed"));
  d["restart"] = {{"max", 1}, {"faults_on_attempts", {0, 2}}};
  EXPECT_TRUE(has_problem(d, "/restart/faults_on_attempts/1", "attempt that can happen"));
  d = minimal();
  d["expect"] = {{"outcome", "hung"}};
  EXPECT_TRUE(has_problem(d, "/expect/outcome", "without faults"));
  d = minimal();
  d["workload"]["command"] = {"x"};
  EXPECT_TRUE(has_problem(d, "/workload", "exactly one of"));
  d = minimal();
  d["expect"]["detection_s"] = {{"min", 5}, {"max", 1}};
  EXPECT_TRUE(has_problem(d, "/expect/detection_s/max", "max >= min"));
}

// recovered_in_place's fields: read with the scenario, bad values named by file, pointer and what was wanted.
TEST(ScenarioRules, InPlaceRecoveryExpectations) {
  json d = minimal();
  d["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "drop"}}};
  d["expect"] = {{"outcome", "recovered_in_place"}, {"survivors", 3}, {"resume_s", {{"max", 20}}}};
  const Scenario s = scenario_from_json(d, "f.json");
  EXPECT_EQ(s.expectation.survivors, 3);
  ASSERT_TRUE(s.expectation.resume_s && s.expectation.resume_s->max);
  EXPECT_EQ(*s.expectation.resume_s->max, 20);

  d["expect"]["survivors"] = 4;  // a world of 4 where nobody is lost
  EXPECT_TRUE(has_problem(d, "/expect/survivors", "fewer survivors than the job's 4 ranks"));
  d["expect"]["survivors"] = 0;
  try {
    scenario_from_json(d, "f.json");
    FAIL();
  } catch (const ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("f.json: /expect/survivors"), std::string::npos) << what;
  }
  d["expect"]["survivors"] = 3;
  d["expect"]["resume_s"] = {{"min", 5}, {"max", 1}};
  EXPECT_TRUE(has_problem(d, "/expect/resume_s/max", "max >= min"));
  d["expect"] = {{"outcome", "detected"}, {"survivors", 3}};
  EXPECT_TRUE(has_problem(d, "/expect/survivors", "\"outcome\": \"recovered_in_place\" beside it"));
  d["expect"] = {{"outcome", "detected"}, {"resume_s", {{"max", 3}}}};
  EXPECT_TRUE(has_problem(d, "/expect/resume_s", "recovered_in_place"));
  d = minimal();
  d["requires"] = {{"nccl_symbols", {"ncclCommShrink"}}};
  EXPECT_EQ(scenario_from_json(d, "f.json").required_nccl_symbols,
            std::vector<std::string>{"ncclCommShrink"});
  d["requires"] = {{"nccl_symbols", {"shrink"}}};
  EXPECT_FALSE(problems_of(d).empty());
}

// requires.nccl_symbols against the libnccl.so.2 this host's loader finds (skipped where there is none).
TEST(NcclSymbols, NamesTheMissingCallTheLibraryAndItsVersion) {
  if (!missing_nccl_symbols({"ncclGetVersion"}, "").empty()) GTEST_SKIP() << "no libnccl.so.2 on this host";
  EXPECT_EQ(missing_nccl_symbols({}, ""), "");
  const std::string why = missing_nccl_symbols({"ncclGetVersion", "ncclNoSuchCall"}, "/nonexistent");
  EXPECT_NE(why.find("needs ncclNoSuchCall: "), std::string::npos) << why;
  EXPECT_NE(why.find("libnccl.so.2 (NCCL 2."), std::string::npos) << why;
  EXPECT_NE(why.find(") lacks it"), std::string::npos) << why;
}

TEST(ScenarioRules, RasRanksNeedTheProbeAndRanksOfTheJob) {
  json d = minimal();
  d["expect"]["ras_ranks"] = {1};
  EXPECT_TRUE(has_problem(d, "/expect/ras_ranks", "\"probe_ras\": true"));
  d["probe_ras"] = true;
  EXPECT_TRUE(problems_of(d).empty());
  d["expect"]["ras_ranks"] = {1, 4};
  EXPECT_TRUE(has_problem(d, "/expect/ras_ranks/1", "a rank of the job (0-3)"));
  d["expect"]["ras_ranks"] = {"1"};
  EXPECT_TRUE(has_problem(d, "/expect/ras_ranks/0", "integer"));
}

TEST(Scenario, ExpectationParsedOnceAtLoad) {
  json d = minimal();
  d["expect"] = {{"outcome", "degraded"}, {"degraded_margin", 0.5}};
  d["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "drop"}}};
  const Scenario s = scenario_from_json(d, "f.json");
  ASSERT_EQ(s.expectation.outcomes.size(), 1u);
  EXPECT_EQ(s.expectation.outcomes[0], harness::Outcome::kDegraded);
  EXPECT_DOUBLE_EQ(s.expectation.margin(), 0.5);
  EXPECT_TRUE(s.needs_baseline());
  EXPECT_EQ(s.baseline_runs, 2);
  d["restart"] = {{"max", 3}};
  d["expect"]["restarts"] = {{"min", 2}, {"max", 1}};
  const auto problems = problems_of(d);
  ASSERT_EQ(problems.size(), 1u);  // reported once, by the expectation's parser
  EXPECT_EQ(problems[0].pointer, "/expect/restarts/max");
}

TEST(ScenarioRules, FaultMayNotFireOnlyWithFaults) {
  json d = minimal();
  d["expect"]["fault_may_not_fire"] = true;
  EXPECT_TRUE(has_problem(d, "/expect/fault_may_not_fire", "only in a scenario with faults"));
  d["faults"] = {{{"id", "x"}, {"layer", "net"}, {"kind", "drop"}}};
  EXPECT_TRUE(problems_of(d).empty());
  EXPECT_TRUE(scenario_from_json(d, "f.json").expectation.fault_may_not_fire);
  d["baseline_runs"] = 0;
  EXPECT_TRUE(has_problem(d, "/baseline_runs", "1"));
}

TEST(ScenarioRules, FlagSeconds) {
  EXPECT_EQ(flag_seconds({"--iters", "3", "--timeout-s", "2.5"}, "--timeout-s"), 2.5);
  EXPECT_EQ(flag_seconds({"--timeout-s=4"}, "--timeout-s"), 4.0);
  EXPECT_FALSE(flag_seconds({"--timeout-s", "x"}, "--timeout-s").has_value());
  EXPECT_FALSE(flag_seconds({"--iters", "3"}, "--timeout-s").has_value());
}

TEST(SchemaCheck, AnyOfAndDeferred) {
  const json schema = {
      {"type", "object"},
      {"properties", {{"f", {{"type", "array"}, {"items", {{"type", "object"}, {"x-ncclfi", "fault"}}}}}}}};
  const auto r = check_against_schema(json{{"f", {json::object(), json::object()}}}, schema);
  EXPECT_TRUE(r.violations.empty());
  ASSERT_EQ(r.deferred.size(), 2u);
  EXPECT_EQ(r.deferred[1].pointer, "/f/1");
}

TEST(SchemaCheck, PointersEscapeTildeAndSlashInKeys) {
  const json schema = {
      {"type", "object"},
      {"properties", {{"env", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}}}}};
  const auto r = check_against_schema(json{{"env", {{"a/b~c", 1}}}}, schema);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].pointer, "/env/a~1b~0c");
}

}  // namespace
}  // namespace ncclfi::cli
