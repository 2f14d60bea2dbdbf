// `net_wrap`: the plugin the net shim wraps reaches every rank as NCCLFI_NET_INNER (through mpirun's -x on
// other nodes too), only where the shim is loaded; a scenario's env may not set it, and the error says where
// it goes instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "host_env.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "quiet_net_plugin.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

json doc_with(const json& extra) {
  json d = {{"name", "w"},
            {"summary", "s"},
            {"workload", {{"builtin", "nccl-workload"}, {"ranks", 2}}},
            {"launcher", {{"kind", "local"}}},
            {"deadline_s", 30},
            {"expect", {{"outcome", "clean"}}}};
  d.update(extra);
  return d;
}

const json kNetDrop = {
    {"faults", {{{"id", "d"}, {"layer", "net"}, {"kind", "drop"}, {"target", {{"ranks", {1}}}}}}}};

std::vector<ScenarioError::Problem> problems_of(const json& doc) {
  try {
    scenario_from_json(doc, "w.json");
  } catch (const ScenarioError& e) {
    return e.problems();
  }
  return {};
}

LaunchContext context_for(const Scenario& s) {
  LaunchContext ctx;
  ctx.scenario = &s;
  ctx.install = {"/b/bin", "/b/lib", "/b/share/ncclfi"};
  ctx.run_dir = "/runs/w/1";
  ctx.plan_path = "/runs/w/1/plan.json";
  ctx.events_path = "/runs/w/1/events.jsonl";
  return ctx;
}

// Drills and labs run their ranks quiet: NCCLFI_QUIET=1, and NCCL selects the shim by the name it then
// gives itself, NCCL's "IB". Other scenarios keep "ncclfi" and no quiet.
TEST(NetWrap, DrillsAndLabsRunQuietWithTheShimCalledIb) {
  const Scenario plain = scenario_from_json(doc_with(kNetDrop), "w.json");
  auto env = injection_env(context_for(plain), 0);
  EXPECT_EQ(env.count("NCCLFI_QUIET"), 0U);
  EXPECT_EQ(env.at("NCCL_NET"), "ncclfi");

  json drill = kNetDrop;
  drill["tags"] = {"drill", "cpu"};
  const Scenario d = scenario_from_json(doc_with(drill), "w.json");
  env = injection_env(context_for(d), 0);
  EXPECT_EQ(env.at("NCCLFI_QUIET"), "1");
  EXPECT_EQ(env.at("NCCL_NET"), "IB");

  LaunchContext lab = context_for(plain);  // `ncclfi lab start` sets NCCLFI_QUIET in its own environment
  lab.parent_env["NCCLFI_QUIET"] = "1";
  env = injection_env(lab, 0);
  EXPECT_EQ(env.at("NCCLFI_QUIET"), "1");
  EXPECT_EQ(env.at("NCCL_NET"), "IB");

  lab.parent_env["NCCLFI_QUIET"] = "0";
  EXPECT_FALSE(ranks_run_quiet(lab));
}

// `ncclfi timeouts` runs its nic_down cells with the shim in its IB persona: NCCLFI_NET_PERSONA=ib, and
// NCCL_NET=IB so NCCL still selects the shim by the name it then has (a scenario's own NCCL_NET is kept).
TEST(NetWrap, TheIbPersonaOfTheTimeoutMatrixSelectsTheShimAsIb) {
  Scenario s = scenario_from_json(doc_with(kNetDrop), "w.json");
  EXPECT_EQ(injection_env(context_for(s), 0).count("NCCLFI_NET_PERSONA"), 0U);
  s.ib_persona = true;
  auto env = injection_env(context_for(s), 0);
  EXPECT_EQ(env.at("NCCLFI_NET_PERSONA"), "ib");
  EXPECT_EQ(env.at("NCCL_NET"), "IB");
  s.env["NCCL_NET"] = "Socket";
  EXPECT_EQ(injection_env(context_for(s), 0).at("NCCL_NET"), "Socket");
}

TEST(NetWrap, ThePluginReachesEveryRankBesideTheShim) {
  json extra = kNetDrop;
  extra["net_wrap"] = "ib";
  const Scenario s = scenario_from_json(doc_with(extra), "w.json");
  for (int rank : {0, 1}) {
    const auto env = injection_env(context_for(s), rank);
    EXPECT_EQ(env.at("NCCLFI_NET_INNER"), "ib");
    EXPECT_EQ(env.at("NCCL_NET_PLUGIN"), "/b/lib/libnccl-net-ncclfi.so");
  }
}

TEST(NetWrap, MpirunForwardsItToOtherNodes) {
  json extra = kNetDrop;
  extra["net_wrap"] = "/opt/ib/libnccl-net-ib.so";
  extra["launcher"] = {{"kind", "mpirun"}};
  const Scenario s = scenario_from_json(doc_with(extra), "w.json");
  const auto specs = make_launcher("mpirun")->processes(context_for(s));
  ASSERT_EQ(specs.size(), 1U);
  const auto& argv = specs[0].argv;
  const auto it = std::find(argv.begin(), argv.end(), "NCCLFI_NET_INNER=/opt/ib/libnccl-net-ib.so");
  ASSERT_NE(it, argv.end());
  EXPECT_EQ(*(it - 1), "-x");
}

TEST(NetWrap, WithoutItTheShimUsesItsOwnTransport) {
  const Scenario s = scenario_from_json(doc_with(kNetDrop), "w.json");
  EXPECT_EQ(injection_env(context_for(s), 0).count("NCCLFI_NET_INNER"), 0U);
}

TEST(NetWrap, WithoutTheShimItIsAnError) {
  const auto problems = problems_of(doc_with({{"net_wrap", "ib"}}));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].pointer, "/net_wrap");
  EXPECT_NE(problems[0].expected.find("net fault"), std::string::npos);
  // "net" in layers loads the shim with no fault armed: then it wraps.
  EXPECT_TRUE(problems_of(doc_with({{"net_wrap", "ib"}, {"layers", {"net"}}})).empty());
}

TEST(NetWrap, TheVariableInEnvIsRefusedAndTheErrorNamesNetWrap) {
  json extra = kNetDrop;
  extra["env"] = {{"NCCLFI_NET_INNER", "ib"}};
  const auto problems = problems_of(doc_with(extra));
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].pointer, "/env/NCCLFI_NET_INNER");
  EXPECT_NE(problems[0].expected.find("net_wrap"), std::string::npos);
}

TEST(NetWrap, AnEmptyOrSpacedValueIsAnError) {
  for (const char* bad : {"", "lib ib.so"}) {
    json extra = kNetDrop;
    extra["net_wrap"] = bad;
    const auto problems = problems_of(doc_with(extra));
    ASSERT_FALSE(problems.empty()) << bad;
    EXPECT_EQ(problems[0].pointer, "/net_wrap") << bad;
  }
}

// Quiet runs on this host: NCCL finds the shim as libnccl-net.so in a directory whose path names nothing
// of ncclfi, searched first, and no NCCL_NET_PLUGIN (NCCL prints that variable's value and the path it
// loaded). The directory holds exactly that link, and goes with the run.
TEST(NetWrap, AQuietLocalRunLoadsTheShimUnderNcclsDefaultName) {
  json lab = kNetDrop;
  lab["env"] = {{"LD_LIBRARY_PATH", "/opt/x/lib"}};
  const std::map<std::string, std::string> quiet = {{"NCCLFI_QUIET", "1"}};  // what `lab start` sets
  const Scenario s = scenario_from_json(doc_with(lab), "w.json");
  const Installation install{"/b/bin", "/b/lib", "/b/share/ncclfi"};
  std::string dir;
  {
    const QuietNetPlugin plugin(s, install, quiet);
    dir = plugin.dir();
    ASSERT_FALSE(dir.empty());
    EXPECT_EQ(dir.find("ncclfi"), std::string::npos) << dir;
    EXPECT_EQ(std::filesystem::read_symlink(dir + "/libnccl-net.so"), "/b/lib/libnccl-net-ncclfi.so");
    EXPECT_EQ(std::filesystem::status(dir).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
    LaunchContext ctx = context_for(s);
    ctx.net_plugin_dir = dir;
    const auto env = injection_env(ctx, 0);
    EXPECT_EQ(env.count("NCCL_NET_PLUGIN"), 0U);
    EXPECT_EQ(env.at("LD_LIBRARY_PATH"), dir + ":/opt/x/lib");
  }
  EXPECT_FALSE(std::filesystem::exists(dir)) << "the directory outlived the run";

  // Not quiet, or ranks on other hosts: NCCL_NET_PLUGIN names the shim, and no directory is made.
  const Scenario plain = scenario_from_json(doc_with(kNetDrop), "w.json");
  EXPECT_TRUE(QuietNetPlugin(plain, install, {}).dir().empty());
  EXPECT_FALSE(QuietNetPlugin(plain, install, quiet).dir().empty());
  EXPECT_EQ(injection_env(context_for(plain), 0).at("NCCL_NET_PLUGIN"), "/b/lib/libnccl-net-ncclfi.so");
  json remote = lab;
  remote["launcher"] = {{"kind", "mpirun"}};
  EXPECT_TRUE(QuietNetPlugin(scenario_from_json(doc_with(remote), "w.json"), install, quiet).dir().empty());
}

}  // namespace
}  // namespace ncclfi::cli
