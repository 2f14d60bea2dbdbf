// Sweep parsing and document patching.
#include <gtest/gtest.h>

#include "sweep_runner.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

TEST(Sweep, ParseAxis) {
  const auto a = parse_sweep_axis("/workload/args/7=1,2,4");
  EXPECT_EQ(a.pointer, "/workload/args/7");
  EXPECT_EQ(a.values, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(parse_sweep_axis("timeout_s=1,2").pointer, "timeout_s");  // a parameter by name
  EXPECT_THROW(parse_sweep_axis("9lives=1"), std::invalid_argument);
  EXPECT_THROW(parse_sweep_axis("a b=1"), std::invalid_argument);
  EXPECT_THROW(parse_sweep_axis("/x=1,,2"), std::invalid_argument);
}

TEST(Sweep, ANamedAxisSetsTheDefaultOfADeclaredParameter) {
  const json doc = {{"params", {{"timeout_s", "4"}, {"deadline", 30}}},
                    {"workload", {{"args", {"--timeout-s", "{param:timeout_s}"}}}}};
  auto d = apply_sweep_value(doc, "timeout_s", "0.5");
  EXPECT_EQ(d["params"]["timeout_s"], "0.5");  // stays a string, as declared
  EXPECT_EQ(d["workload"]["args"][1], "{param:timeout_s}");
  EXPECT_EQ(apply_sweep_value(doc, "deadline", "12")["params"]["deadline"], 12);
  try {
    apply_sweep_value(doc, "timeout", "1");
    FAIL() << "an undeclared parameter is an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("declares no parameter timeout (its \"params\": deadline, timeout_s)"),
        std::string::npos)
        << e.what();
  }
}

TEST(Sweep, ApplyKeepsStringsWhereStringsAreAndParsesJsonElsewhere) {
  const json doc = {{"workload", {{"args", {"--timeout-s", "3"}}}}, {"deadline_s", 30}};
  auto d = apply_sweep_value(doc, "/workload/args/1", "5");
  EXPECT_EQ(d["workload"]["args"][1], "5");
  d = apply_sweep_value(doc, "/deadline_s", "12.5");
  EXPECT_EQ(d["deadline_s"], 12.5);
  d = apply_sweep_value(doc, "/grace_s", "1");
  EXPECT_EQ(d["grace_s"], 1);
  EXPECT_THROW(apply_sweep_value(doc, "/nothing/here", "1"), std::invalid_argument);
}

TEST(Sweep, CombinationsFirstAxisSlowest) {
  const auto c = sweep_combinations({{"/a", {"1", "2"}}, {"/b", {"x", "y", "z"}}});
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0], (std::vector<std::string>{"1", "x"}));
  EXPECT_EQ(c[5], (std::vector<std::string>{"2", "z"}));
}

}  // namespace
}  // namespace ncclfi::cli
