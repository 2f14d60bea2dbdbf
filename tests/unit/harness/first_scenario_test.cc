// A first scenario never quietly does nothing: the annotated example of docs/scenarios.md is the shipped
// file, it loads with no warning, and the same scenario without its `count` is warned about (a rate fault
// that fires once under an expected `degraded` slows one call, and the run would read clean).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "scenario.h"
#include "scenario_yaml.h"

namespace ncclfi::cli {
namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(NCCLFI_SOURCE_DIR "/") + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Scenario from_yaml(const std::string& text, const std::string& name) {
  LineMap lines;
  return scenario_from_json(yaml_to_json(text, lines), name);
}

const char* const kExample = "scenarios/examples/first-straggler.yaml";

TEST(FirstScenario, TheDocsExampleIsTheShippedFileAndLoadsWithoutWarnings) {
  const std::string docs = read_source("docs/scenarios.md");
  const auto start = docs.find("```yaml\n", docs.find("## A complete scenario"));
  ASSERT_NE(start, std::string::npos);
  const auto body = start + 8;
  const std::string block = docs.substr(body, docs.find("```", body) - body);
  std::string file = read_source(kExample);
  file = file.substr(file.find('\n') + 1);  // the file's own first line says where it comes from
  EXPECT_EQ(block, file);
  const Scenario s = load_scenario(std::string(NCCLFI_SOURCE_DIR "/") + kExample);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
  ASSERT_EQ(s.plan.faults.size(), 1u);
  EXPECT_EQ(s.plan.faults[0].trigger.count, 0u);
}

TEST(FirstScenario, ARateFaultThatFiresOnceUnderDegradedIsWarnedAbout) {
  std::string text = read_source(kExample);
  const std::string with_count = "trigger: {count: 0}";
  const auto at = text.find(with_count);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, with_count.size(), "trigger: {after_calls: 5}");
  const Scenario s = from_yaml(text, "first.yaml");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("first.yaml: /faults/0/trigger: net delay \"congestion\" fires once"),
            std::string::npos)
      << s.warnings[0];
  EXPECT_NE(s.warnings[0].find("\"count\": 0"), std::string::npos) << s.warnings[0];
}

TEST(FirstScenario, OnlyRateKindsUnderADegradedExpectationAreWarnedAbout) {
  std::string text = read_source(kExample);
  text.replace(text.find("trigger: {count: 0}"), 19, "trigger: {after_calls: 5}");
  // Expected to be detected: one slow call may be the point (a straggler the watchdog must catch).
  std::string detected = text;
  detected.replace(detected.find("outcome: degraded"), 17, "outcome: detected");
  detected.replace(detected.find("result: verified"), 16, "detected_by: [workload_watchdog]");
  EXPECT_TRUE(from_yaml(detected, "d.yaml").warnings.empty());
  // A stall is one window of its own (a flap), not a rate: one firing is what it means.
  std::string stall = text;
  stall.replace(stall.find("kind: delay"), 11, "kind: stall");
  stall.replace(stall.find("params: {ms: 10, jitter_ms: 3}"), 30, "params: {ms: 500}");
  EXPECT_TRUE(from_yaml(stall, "s.yaml").warnings.empty());
}

}  // namespace
}  // namespace ncclfi::cli
