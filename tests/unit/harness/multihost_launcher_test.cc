// Jobs across hosts: MASTER_ADDR from the scenario, the agents' launch (secret never in argv), the
// node-local spool, link-fault qdiscs and the rules for `nodes` and the link layer.
#include <gtest/gtest.h>

#include <algorithm>

#include "link_faults.h"
#include "ncclfi/event_log.h"
#include "rank_launcher.h"
#include "scenario_rules.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

json scenario_doc(json launcher, json env = json::object(), json faults = json::array()) {
  return {{"name", "t"},
          {"summary", "s"},
          {"workload", {{"builtin", "cpu-ring"}, {"ranks", 8}, {"args", {"--timeout-s", "3"}}}},
          {"launcher", launcher},
          {"env", env},
          {"faults", faults},
          {"deadline_s", 30},
          {"expect", {{"outcome", faults.empty() ? "clean" : "detected"}}}};
}

LaunchContext context(const Scenario& s) {
  LaunchContext ctx;
  ctx.scenario = &s;
  ctx.install = {"/b/bin", "/b/lib", "/b/share/ncclfi"};
  ctx.run_dir = "/runs/t/1";
  ctx.log_dir = "/runs/t/1/attempt-0";
  ctx.plan_path = "/runs/t/1/plan.json";
  ctx.events_path = "/runs/t/1/events.jsonl";
  ctx.master_port = 12345;
  ctx.harness_id = "hid";
  ctx.parent_env = {{"PATH", "/usr/bin"}, {"HOSTS", "/etc/hostfile"}};
  return ctx;
}

bool has(const std::vector<std::string>& argv, const std::string& a) {
  return std::find(argv.begin(), argv.end(), a) != argv.end();
}

TEST(Multihost, MpirunKeepsTheScenariosMasterAddr) {
  const Scenario s =
      scenario_from_json(scenario_doc({{"kind", "mpirun"}}, {{"MASTER_ADDR", "node7"}}), "t.json");
  const auto argv = make_launcher(s.launcher.kind)->processes(context(s))[0].argv;
  EXPECT_TRUE(has(argv, "MASTER_ADDR=node7"));
  EXPECT_FALSE(has(argv, "MASTER_ADDR=127.0.0.1"));
}

TEST(Multihost, MpirunOnSeveralNodesDefaultsMasterAddrToThisHost) {
  const Scenario one = scenario_from_json(scenario_doc({{"kind", "mpirun"}}), "t.json");
  EXPECT_TRUE(
      has(make_launcher(one.launcher.kind)->processes(context(one))[0].argv, "MASTER_ADDR=127.0.0.1"));
  const Scenario s = scenario_from_json(scenario_doc({{"kind", "mpirun"}, {"nodes", 3}}), "t.json");
  EXPECT_TRUE(
      has(make_launcher(s.launcher.kind)->processes(context(s))[0].argv, "MASTER_ADDR=" + host_name()));
}

TEST(Multihost, MpirunAgentsOnePerNodeWithTheSecretOnlyInTheEnvironment) {
  const Scenario s = scenario_from_json(
      scenario_doc({{"kind", "mpirun"}, {"nodes", 3}, {"extra_args", {"--hostfile", "{env:HOSTS}"}}}),
      "t.json");
  auto ctx = context(s);
  ctx.agent_addr = "node1:4000";
  ctx.agent_secret = "s3cr3t";
  ctx.agent_spool = "/tmp/ncclfi-hid-0";
  const auto launcher = make_launcher(s.launcher.kind);
  const auto agents = launcher->agent_process(ctx);
  ASSERT_TRUE(agents.has_value());
  EXPECT_TRUE(has(agents->argv, "ppr:1:node"));
  EXPECT_TRUE(has(agents->argv, "/etc/hostfile"));        // extra_args placeholders replaced
  EXPECT_TRUE(has(agents->argv, "NCCLFI_AGENT_SECRET"));  // forwarded by name
  EXPECT_EQ(agents->argv.back(), "agent");
  for (const auto& a : agents->argv) EXPECT_EQ(a.find("s3cr3t"), std::string::npos) << a;
  EXPECT_EQ(agents->env.at("NCCLFI_AGENT_SECRET"), "s3cr3t");
  EXPECT_EQ(agents->env.at("NCCLFI_AGENT_ADDR"), "node1:4000");
  // The ranks never get the secret, and write to the node-local spool.
  const auto job = launcher->processes(ctx)[0];
  for (const auto& a : job.argv) EXPECT_EQ(a.find("s3cr3t"), std::string::npos) << a;
  EXPECT_EQ(job.env.count("NCCLFI_AGENT_SECRET"), 0u);
  EXPECT_TRUE(has(job.argv, "NCCLFI_EVENTS=/tmp/ncclfi-hid-0/events.jsonl"));
  EXPECT_TRUE(has(job.argv, "NCCLFI_RUN_DIR=/tmp/ncclfi-hid-0"));
  // Each rank runs under `ncclfi agent --exec`, which records how it ended.
  const auto exec = std::find(job.argv.begin(), job.argv.end(), "--exec");
  ASSERT_NE(exec, job.argv.end());
  EXPECT_EQ(*(exec - 2), "/b/bin/ncclfi");
  EXPECT_EQ(*(exec + 1), "--");
  EXPECT_EQ(*(exec + 2), "/b/bin/ncclfi-cpu-ring");
}

TEST(Multihost, SrunAgentsAreOneTaskPerNode) {
  const Scenario s = scenario_from_json(scenario_doc({{"kind", "srun"}, {"nodes", 2}}), "t.json");
  auto ctx = context(s);
  ctx.agent_addr = "n1:1";
  ctx.agent_secret = "x";
  ctx.agent_spool = "/tmp/s";
  const auto launcher = make_launcher(s.launcher.kind);
  EXPECT_TRUE(has(launcher->processes(ctx)[0].argv, "--nodes=2"));
  const auto agents = launcher->agent_process(ctx);
  ASSERT_TRUE(agents.has_value());
  EXPECT_TRUE(has(agents->argv, "--ntasks-per-node=1"));
  EXPECT_TRUE(has(agents->argv, "--nodes=2"));
  EXPECT_NE(agents->slurm_job_name, launcher->processes(ctx)[0].slurm_job_name);
}

TEST(Multihost, TorchrunAcrossNodesUsesC10dOnTheFirstNode) {
  json d = scenario_doc({{"kind", "torchrun"}, {"nodes", 2}}, {{"MASTER_ADDR", "node1"}});
  d["workload"] = {{"command", {"python3", "train.py"}}, {"ranks", 8}};
  const Scenario s = scenario_from_json(d, "t.json");
  const auto argv = make_launcher(s.launcher.kind)->processes(context(s))[0].argv;
  EXPECT_TRUE(has(argv, "--nnodes=2"));
  EXPECT_TRUE(has(argv, "--nproc-per-node=4"));
  EXPECT_TRUE(has(argv, "--rdzv-backend=c10d"));
  EXPECT_TRUE(has(argv, "--rdzv-endpoint=node1:12345"));
}

TEST(Multihost, NodesAndLinkFaultsNeedALauncherWithAgents) {
  EXPECT_THROW(scenario_from_json(scenario_doc({{"kind", "local"}, {"nodes", 2}}), "t.json"), ScenarioError);
  const json rate = {{{"id", "slow"}, {"layer", "link"}, {"kind", "rate"}, {"params", {{"mbit", 1}}}}};
  EXPECT_THROW(scenario_from_json(scenario_doc({{"kind", "mpirun"}}, json::object(), rate), "t.json"),
               ScenarioError);
  EXPECT_NO_THROW(
      scenario_from_json(scenario_doc({{"kind", "mpirun"}, {"nodes", 2}}, json::object(), rate), "t.json"));
}

TEST(Multihost, LinkFaultsBecomeTheirQdisc) {
  EXPECT_EQ(link_qdisc(LimitRate{1.5, 32}),
            (std::vector<std::string>{"tbf", "rate", "1500kbit", "burst", "32kb", "latency", "400ms"}));
  EXPECT_EQ(link_qdisc(Netem{Netem::What::kDelay, 20, 5}),
            (std::vector<std::string>{"netem", "delay", "20ms", "5ms"}));
  EXPECT_EQ(link_qdisc(Netem{Netem::What::kLoss, 5, 0}), (std::vector<std::string>{"netem", "loss", "5%"}));
  EXPECT_EQ(link_capability(Netem{Netem::What::kCorrupt, 1, 0}), "corrupt");
  EXPECT_EQ(link_capability(LimitRate{1, 32}), "rate");
}

}  // namespace
}  // namespace ncclfi::cli
