// `ncclfi run --filter`: globs over the name and the tags, case ignored, commas and repeats, `!` to
// exclude (scenario_filter.h).
#include <gtest/gtest.h>

#include "scenario_filter.h"

namespace ncclfi::cli {
namespace {

bool keeps(const std::vector<std::string>& values, const std::string& name,
           const std::vector<std::string>& tags = {}) {
  return filter_keeps(parse_scenario_filter(values), name, tags);
}

TEST(ScenarioFilter, NoFilterKeepsEverything) {
  EXPECT_TRUE(keeps({}, "anything"));
}

TEST(ScenarioFilter, AGlobMatchesTheNameOrATag) {
  EXPECT_TRUE(keeps({"net-*"}, "net-drop-recv-hang"));
  EXPECT_FALSE(keeps({"net-*"}, "proc-kill"));
  EXPECT_TRUE(keeps({"g?u"}, "x", {"cpu", "gpu"}));
  EXPECT_TRUE(keeps({"[pn]roc-*"}, "proc-kill"));
  EXPECT_FALSE(keeps({"net"}, "net-drop")) << "a pattern without a wildcard is the whole word";
  EXPECT_TRUE(keeps({"net"}, "x", {"net"}));
}

TEST(ScenarioFilter, CaseIsIgnored) {
  EXPECT_TRUE(keeps({"NET-*"}, "net-delay"));
  EXPECT_TRUE(keeps({"cpu"}, "x", {"CPU"}));
}

TEST(ScenarioFilter, SeveralValuesByCommasOrRepeatsAnyMatches) {
  EXPECT_TRUE(keeps({"net-*,proc-*"}, "proc-kill"));
  EXPECT_TRUE(keeps({"net-*", "proc-*"}, "proc-kill"));
  EXPECT_TRUE(keeps({" net-* , proc-* "}, "net-delay")) << "blanks around a pattern";
  EXPECT_FALSE(keeps({"net-*", "proc-*"}, "api-error"));
}

TEST(ScenarioFilter, BangExcludes) {
  EXPECT_FALSE(keeps({"!gpu"}, "x", {"gpu"}));
  EXPECT_TRUE(keeps({"!gpu"}, "x", {"cpu"})) << "exclusions alone keep the rest";
  EXPECT_FALSE(keeps({"net-*,!*hang*"}, "net-drop-recv-hang"));
  EXPECT_TRUE(keeps({"net-*", "!*hang*"}, "net-delay"));
  EXPECT_FALSE(keeps({"!NET-*"}, "net-delay"));
}

TEST(ScenarioFilter, EmptyPatternsAreDropped) {
  const ScenarioFilter f = parse_scenario_filter({"net,,!", ","});
  EXPECT_EQ(f.include, std::vector<std::string>{"net"});
  EXPECT_TRUE(f.exclude.empty());
}

}  // namespace
}  // namespace ncclfi::cli
