// {param:NAME} placeholders: a scenario as a template for a user's own job.
#include <gtest/gtest.h>

#include "scenario.h"
#include "scenario_params.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

json template_doc() {
  return {{"name", "job"},
          {"summary", "s"},
          {"params",
           {{"script", "train.py"},
            {"script_args", {"--epochs", "1", "--timeout={param:timeout_s}", "--every", "{param:ranks}"}},
            {"timeout_s", 30},
            {"ranks", 2}}},
          {"workload",
           {{"command", {"python3", "{param:script}", "{param:script_args}"}}, {"ranks", "{param:ranks}"}}},
          {"env", {{"MY_TIMEOUT", "{param:timeout_s}s"}}},
          {"deadline_s", 60},
          {"expect", {{"outcome", "clean"}}}};
}

TEST(ScenarioParams, DefaultsFillTheTemplate) {
  const json out = apply_scenario_params(template_doc(), {}, "t.json");
  // The list spliced in; a number inside it is an argument, so text.
  EXPECT_EQ(out["workload"]["command"],
            json({"python3", "train.py", "--epochs", "1", "--timeout=30", "--every", "2"}));
  EXPECT_EQ(out["workload"]["ranks"], 2);  // a number stays a number
  EXPECT_EQ(out["env"]["MY_TIMEOUT"], "30s");
  EXPECT_EQ(out["params"]["script_args"],
            json({"--epochs", "1", "--timeout=30", "--every", "2"}));  // as used
}

TEST(ScenarioParams, OverridesTakeTheTypeOfTheirDefault) {
  const json out = apply_scenario_params(
      template_doc(), {{"script_args", "--lr 0.1 'two words'"}, {"ranks", "4"}, {"timeout_s", "12.5"}},
      "t.json");
  EXPECT_EQ(out["workload"]["command"], json({"python3", "train.py", "--lr", "0.1", "two words"}));
  EXPECT_EQ(out["workload"]["ranks"], 4);
  EXPECT_EQ(out["env"]["MY_TIMEOUT"], "12.5s");
  const Scenario s = scenario_from_json(template_doc(), "t.json", {{"ranks", "3"}});
  EXPECT_EQ(s.workload.ranks, 3);
  EXPECT_EQ(s.workload.command[1], "train.py");
}

TEST(ScenarioParams, AnEmptyListRemovesTheArgument) {
  const json out = apply_scenario_params(template_doc(), {{"script_args", ""}}, "t.json");
  EXPECT_EQ(out["workload"]["command"], json({"python3", "train.py"}));
}

TEST(ScenarioParams, ErrorsNameTheFileThePointerAndTheChoices) {
  try {
    apply_scenario_params(template_doc(), {{"no_such", "1"}}, "t.json");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /params: expected a parameter to set (ranks, script, "
                                         "script_args, timeout_s)"),
              std::string::npos)
        << e.what();
  }
  try {
    apply_scenario_params(template_doc(), {{"ranks", "four"}}, "t.json");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("/params/ranks: expected a number"), std::string::npos) << e.what();
  }
  json doc = template_doc();
  doc["env"]["X"] = "{param:missing}";
  try {
    apply_scenario_params(doc, {}, "t.json");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("/env/X: expected a parameter declared in /params"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(apply_scenario_params(template_doc(), {{"script_args", "'open"}}, "t.json"), ScenarioError);
}

TEST(ScenarioParams, AChainOfParametersIsAnError) {
  json doc = template_doc();
  doc["params"]["a"] = "{param:b}";
  doc["params"]["b"] = "{param:timeout_s}";
  EXPECT_THROW(apply_scenario_params(doc, {}, "t.json"), ScenarioError);
}

TEST(ScenarioParams, WithoutParamsTheDocumentIsUntouched) {
  json doc = template_doc();
  doc.erase("params");
  doc["workload"]["command"] = {"run", "{rank}"};  // runtime placeholders are not parameters
  doc["workload"]["ranks"] = 2;
  doc["env"] = json::object();
  EXPECT_EQ(apply_scenario_params(doc, {}, "t.json"), doc);
}

TEST(SplitWords, QuotesAndEscapesAsAShell) {
  EXPECT_EQ(split_words("  a  'b c' \"d e\" f\\ g "), (std::vector<std::string>{"a", "b c", "d e", "f g"}));
  EXPECT_EQ(split_words(""), std::vector<std::string>{});
  EXPECT_EQ(split_words("''"), std::vector<std::string>{""});
  EXPECT_THROW(split_words("\"x"), std::invalid_argument);
}

TEST(ParamAssignment, NeedsANameAndAnEqualsSign) {
  EXPECT_EQ(parse_param_assignment("a=b=c"), (std::pair<std::string, std::string>{"a", "b=c"}));
  EXPECT_EQ(parse_param_assignment("a="), (std::pair<std::string, std::string>{"a", ""}));
  EXPECT_THROW(parse_param_assignment("=b"), std::invalid_argument);
  EXPECT_THROW(parse_param_assignment("ab"), std::invalid_argument);
}

}  // namespace
}  // namespace ncclfi::cli
