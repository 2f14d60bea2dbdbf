// A scenario with verbs faults (or `"layers": ["verbs"]`) gives its ranks libncclfi-ibverbs.so both ways NCCL
// may load a libibverbs: NCCL_IBVERBS_LIB (2.30.3 and later) and lib/ibverbs first on LD_LIBRARY_PATH (any
// version), keeping the library path the ranks would have had; a scenario's env may not set NCCL_IBVERBS_LIB.
#include <gtest/gtest.h>

#include "host_env.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "scenario_rules.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

Scenario scenario_with(const json& extra) {
  json d = {{"name", "v"},
            {"summary", "s"},
            {"workload", {{"builtin", "nccl-workload"}, {"ranks", 2}}},
            {"launcher", {{"kind", "local"}}},
            {"deadline_s", 30},
            {"expect", {{"outcome", "clean"}}}};
  d.update(extra);
  return scenario_from_json(d, "v.json");
}

LaunchContext context_for(const Scenario& s) {
  LaunchContext ctx;
  ctx.scenario = &s;
  ctx.install = {"/b/bin", "/b/lib", "/b/share/ncclfi"};
  ctx.run_dir = "/runs/v/1";
  ctx.plan_path = "/runs/v/1/plan.json";
  ctx.events_path = "/runs/v/1/events.jsonl";
  ctx.parent_env = {{"PATH", "/usr/bin"}, {"LD_LIBRARY_PATH", "/opt/nccl/lib"}};
  return ctx;
}

const json kVerbsFault = {
    {"faults",
     {{{"id", "nic"}, {"layer", "verbs"}, {"kind", "retry_exceeded"}, {"target", {{"ranks", {0}}}}}}}};

TEST(VerbsLayerEnv, AVerbsFaultLoadsTheWrapperBothWays) {
  const Scenario s = scenario_with(kVerbsFault);
  EXPECT_TRUE(s.layer_verbs);
  const auto env = injection_env(context_for(s), 0);
  EXPECT_EQ(env.at("NCCL_IBVERBS_LIB"), "/b/lib/libncclfi-ibverbs.so");
  EXPECT_EQ(env.at("LD_LIBRARY_PATH"), "/b/lib/ibverbs:/opt/nccl/lib");
  EXPECT_FALSE(env.contains("NCCL_NET_PLUGIN")) << "NCCL's own IB transport, not the shim";
}

TEST(VerbsLayerEnv, TheScenariosOwnLibraryPathIsKeptBehindIt) {
  json extra = kVerbsFault;
  extra["env"] = {{"LD_LIBRARY_PATH", "/x/lib"}};
  const Scenario s = scenario_with(extra);
  EXPECT_EQ(injection_env(context_for(s), 1).at("LD_LIBRARY_PATH"), "/b/lib/ibverbs:/x/lib");
}

TEST(VerbsLayerEnv, LayersVerbsLoadsItWithoutAFaultAndNothingElseDoes) {
  const Scenario with = scenario_with({{"layers", {"verbs"}}});
  EXPECT_TRUE(with.layer_verbs);
  EXPECT_EQ(injection_env(context_for(with), 0).count("NCCL_IBVERBS_LIB"), 1U);
  const Scenario without = scenario_with(json::object());
  EXPECT_FALSE(without.layer_verbs);
  const auto env = injection_env(context_for(without), 0);
  EXPECT_EQ(env.count("NCCL_IBVERBS_LIB"), 0U);
  EXPECT_EQ(env.count("LD_LIBRARY_PATH"), 0U);
}

TEST(VerbsLayerEnv, NcclIbverbsLibIsReserved) {
  EXPECT_TRUE(is_reserved_env("NCCL_IBVERBS_LIB"));
}

}  // namespace
}  // namespace ncclfi::cli
