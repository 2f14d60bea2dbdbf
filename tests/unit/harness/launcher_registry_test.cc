// The launcher registry (model/launch/launcher_spec.h) is the one statement of which launchers exist: the
// loader's check of a name, docs/scenarios.md's table, the default launcher and the rules all follow it.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "launch_context.h"
#include "launcher_spec.h"
#include "scenario.h"
#include "schema_check.h"

namespace ncclfi::cli {
namespace {

// The registry is the one list: the schema names no launcher, and the loader refuses an unknown one with
// the registry's names, so a new launcher needs no schema edit.
TEST(LauncherCatalogue, TheSchemaLeavesTheNamesToTheRegistry) {
  const auto& launcher = scenario_schema()["properties"]["launcher"]["properties"];
  EXPECT_FALSE(launcher["kind"].contains("enum"));
  EXPECT_FALSE(launcher["node_launcher"].contains("enum"));
}

TEST(LauncherCatalogue, AnUnknownLauncherIsRefusedNamingEveryLauncher) {
  nlohmann::json doc = {{"name", "x"},
                        {"summary", "x"},
                        {"workload", {{"builtin", "cpu-ring"}, {"ranks", 2}}},
                        {"launcher", {{"kind", "pbsdsh"}}},
                        {"expect", {{"outcome", "clean"}}}};
  try {
    (void)scenario_from_json(doc, "x.json");
    FAIL() << "an unknown launcher was accepted";
  } catch (const ScenarioError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("/launcher/kind"), std::string::npos) << text;
    for (const LauncherSpec* spec : launcher_specs()) {
      EXPECT_NE(text.find(std::string(spec->name)), std::string::npos) << text;
    }
  }
  doc["launcher"] = {{"kind", "torchrun"}, {"nodes", 2}, {"node_launcher", "local"}};
  try {
    (void)scenario_from_json(doc, "x.json");
    FAIL() << "a node launcher that places no process per node was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("/launcher/node_launcher"), std::string::npos) << e.what();
  }
}

TEST(LauncherCatalogue, DocsContainTheTableVerbatim) {
  std::ifstream in(NCCLFI_SOURCE_DIR "/docs/scenarios.md");
  ASSERT_TRUE(in) << "docs/scenarios.md not found";
  std::stringstream text;
  text << in.rdbuf();
  const std::string table = launcher_catalogue_markdown();
  EXPECT_NE(text.str().find(table), std::string::npos)
      << "docs/scenarios.md is out of date: run scripts/update-doc-tables (its launcher table is `ncclfi "
         "list "
         "launchers`):\n"
      << table;
}

TEST(LauncherCatalogue, EveryLauncherIsCompleteAndFoundByItsName) {
  std::set<std::string_view> seen;
  for (const LauncherSpec* spec : launcher_specs()) {
    EXPECT_TRUE(seen.insert(spec->name).second) << spec->name;
    EXPECT_FALSE(spec->summary.empty()) << spec->name;
    ASSERT_NE(spec->make, nullptr) << spec->name;
    EXPECT_NE(spec->make(), nullptr) << spec->name;
    EXPECT_EQ(find_launcher(spec->name), spec);
  }
  EXPECT_EQ(find_launcher("pdsh"), nullptr);
  EXPECT_THROW(make_launcher("pdsh"), std::invalid_argument);
}

TEST(LauncherCatalogue, TheDefaultLauncherOfACommandRunsCommands) {
  EXPECT_EQ(default_launcher(true).workload, LauncherWorkload::kCommand);
  EXPECT_EQ(default_launcher(false).workload, LauncherWorkload::kAny);
  EXPECT_EQ(default_launcher(false).reach, LauncherReach::kThisHost);
}

}  // namespace
}  // namespace ncclfi::cli
