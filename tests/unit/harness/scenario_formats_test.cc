// Scenario formats: YAML converted to the JSON document with the line of every value, and named
// parameters substituted where {param:NAME} is used.
#include <gtest/gtest.h>

#include "scenario.h"
#include "scenario_params.h"
#include "scenario_yaml.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

TEST(ScenarioYaml, ConvertsByTheCoreSchemaAndKeepsQuotedStrings) {
  LineMap lines;
  const json doc = yaml_to_json(
      "name: x\n"
      "ranks: 4\n"
      "ratio: 2.5\n"
      "on: true\n"
      "none: ~\n"
      "quoted: \"4\"\n"
      "args: [--iters, '40', 7]\n"
      "nested:\n"
      "  deep: {a: 1}\n",
      lines);
  EXPECT_EQ(doc["name"], "x");
  EXPECT_EQ(doc["ranks"], 4);
  EXPECT_TRUE(doc["ranks"].is_number_integer());
  EXPECT_EQ(doc["ratio"], 2.5);
  EXPECT_EQ(doc["on"], true);
  EXPECT_TRUE(doc["none"].is_null());
  EXPECT_EQ(doc["quoted"], "4");
  EXPECT_EQ(doc["args"], json({"--iters", "40", 7}));
  EXPECT_EQ(doc["nested"]["deep"]["a"], 1);
  EXPECT_EQ(lines.at("/ranks"), 2);
  EXPECT_EQ(lines.at("/args/1"), 7);
  EXPECT_EQ(lines.at("/nested/deep/a"), 9);
  EXPECT_EQ(lines.at("/nested"), 8);  // a mapping value: its key's line
  // An unknown key has no line of its own: its nearest ancestor's.
  EXPECT_EQ(line_of(lines, "/nested/deep/b"), 9);
  EXPECT_EQ(line_of(lines, "/nested/missing"), 8);
}

TEST(ScenarioYaml, SyntaxErrorsNameTheLine) {
  LineMap lines;
  try {
    yaml_to_json("name: x\nlist: [1, 2\nother: 3\n", lines);
    FAIL() << "a syntax error must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("line ", 0), 0u) << e.what();
  }
}

TEST(ScenarioYaml, RecognisesItsExtensions) {
  EXPECT_TRUE(is_yaml_path("a/b.yaml"));
  EXPECT_TRUE(is_yaml_path("b.yml"));
  EXPECT_FALSE(is_yaml_path("b.json"));
  EXPECT_FALSE(is_yaml_path("yaml"));
}

TEST(ScenarioParams, WholePlaceholdersKeepTheTypeAndPartsAreSpliced) {
  const json doc = {
      {"params", {{"t", "4"}, {"deadline", 30}, {"check", true}}},
      {"deadline_s", "{param:deadline}"},
      {"workload", {{"args", {"--timeout-s", "{param:t}", "--label=t{param:t}-{param:deadline}"}}}},
      {"flag", "{param:check}"}};
  const json out = apply_scenario_params(doc, {}, "f.json");
  EXPECT_EQ(out["deadline_s"], 30);
  EXPECT_EQ(out["workload"]["args"][1], "4");
  EXPECT_EQ(out["workload"]["args"][2], "--label=t4-30");
  EXPECT_EQ(out["flag"], true);
  EXPECT_EQ(out["params"], doc["params"]);
  EXPECT_EQ(declared_params(doc), (std::vector<std::string>{"check", "deadline", "t"}));
}

TEST(ScenarioParams, EveryUndeclaredUseIsAProblemAtItsPointer) {
  const json doc = {{"params", {{"t", 1}}}, {"a", "{param:x}"}, {"b", {"pre {param:y} post"}}};
  try {
    apply_scenario_params(doc, {}, "f.json");
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    const auto& problems = e.problems();
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_EQ(problems[0].pointer, "/a");
    EXPECT_EQ(problems[0].expected, "a parameter declared in /params (t)");
    EXPECT_EQ(problems[1].pointer, "/b/0");
    EXPECT_EQ(problems[1].found, "{param:y}");
  }
}

}  // namespace
}  // namespace ncclfi::cli
