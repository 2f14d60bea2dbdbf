// Jobs across hosts: MASTER_ADDR from the scenario, the agents' launch (secret never in argv), the
// node-local spool, link-fault qdiscs and the rules for `nodes` and the link layer.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "agent_node.h"
#include "host_env.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "link_faults.h"
#include "ncclfi/event_log.h"
#include "ncclfi/params.h"
#include "scenario_rules.h"
#include "sleeper.h"

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

// torchrun across nodes: cpu-ring under torchrun, `nodes` 3 through a node launcher.
json torchrun_doc(json launcher, json env = json::object(), json faults = json::array()) {
  launcher["kind"] = "torchrun";
  json d = scenario_doc(launcher, env, faults);
  d["workload"] = {{"command", {"{bin_dir}/ncclfi-cpu-ring"}}, {"ranks", 6}, {"args", {"--iters", "9"}}};
  return d;
}

LaunchContext agents_context(const Scenario& s) {
  auto ctx = context(s);
  ctx.agent_addr = "node1:4000";
  ctx.agent_secret = "s3cr3t";
  ctx.agent_spool = "/tmp/ncclfi-hid-0";
  return ctx;
}

// The pointers of the problems a scenario document has ("" first when it loads).
std::vector<std::string> problem_pointers(const json& doc) {
  try {
    scenario_from_json(doc, "t.json");
  } catch (const ScenarioError& e) {
    std::vector<std::string> pointers;
    for (const auto& p : e.problems()) pointers.push_back(p.pointer);
    return pointers;
  }
  return {};
}

TEST(Multihost, TorchrunAcrossNodesIsOneTorchrunPerNodeThroughMpirun) {
  const Scenario s = scenario_from_json(torchrun_doc({{"nodes", 3},
                                                      {"max_restarts", 1},
                                                      {"extra_args", {"--monitor_interval", "1"}},
                                                      {"node_launcher", "mpirun"},
                                                      {"node_launcher_args", {"--hostfile", "{env:HOSTS}"}}}),
                                        "t.json");
  const auto ctx = agents_context(s);
  const auto launcher = make_launcher(s.launcher.kind);
  const auto specs = launcher->processes(ctx);
  ASSERT_EQ(specs.size(), 1u);
  const auto& argv = specs[0].argv;
  const auto torchrun = std::find(argv.begin(), argv.end(), "torchrun");
  ASSERT_NE(torchrun, argv.end());
  // mpirun places one torchrun per node of the hostfile; torchrun runs without the harness id and dies
  // with its parent (mpirun or the node's orted).
  EXPECT_EQ(std::vector<std::string>(argv.begin(), torchrun),
            (std::vector<std::string>{"mpirun", "--allow-run-as-root", "--oversubscribe", "--map-by",
                                      "ppr:1:node", "-np", "3", "--hostfile", "/etc/hostfile", "setpriv",
                                      "--pdeathsig", "KILL", "env", "-u", "NCCLFI_HARNESS_ID"}));
  EXPECT_FALSE(has(argv, "--tag-output"));  // its prefix would name the node, not the rank
  const auto workers = std::find(torchrun, argv.end(), "env");
  ASSERT_NE(workers, argv.end());
  EXPECT_EQ(std::vector<std::string>(torchrun, workers),
            (std::vector<std::string>{"torchrun", "--nnodes=3", "--nproc_per_node=2", "--max_restarts=1",
                                      "--rdzv_backend=c10d", "--rdzv_endpoint=" + host_name() + ":12345",
                                      "--rdzv_id=hid", "--no_python", "--monitor_interval", "1"}));
  // The workers: the injection variables and the harness id, each under `ncclfi agent --exec`.
  const std::vector<std::string> tail(workers, argv.end());
  EXPECT_TRUE(has(tail, "NCCLFI_HARNESS_ID=hid"));
  EXPECT_TRUE(has(tail, "NCCLFI_EVENTS=/tmp/ncclfi-hid-0/events.jsonl"));
  EXPECT_TRUE(has(tail, "NCCLFI_WORLD_SIZE=6"));
  for (const auto& a : tail) {
    EXPECT_NE(a.rfind("MASTER_ADDR=", 0), 0u) << "torchrun gives its workers MASTER_ADDR";
    EXPECT_NE(a.rfind("NCCLFI_RANK=", 0), 0u) << "each worker's rank is torchrun's RANK";
  }
  EXPECT_EQ(std::vector<std::string>(argv.end() - 7, argv.end()),
            (std::vector<std::string>{"/b/bin/ncclfi", "agent", "--exec", "--", "/b/bin/ncclfi-cpu-ring",
                                      "--iters", "9"}));
  for (const auto& a : argv) EXPECT_EQ(a.find("s3cr3t"), std::string::npos) << a;
  // mpirun itself keeps the id (the orphan guard finds it) and never the injection variables.
  EXPECT_EQ(specs[0].env.at("NCCLFI_HARNESS_ID"), "hid");
  EXPECT_EQ(specs[0].env.count("NCCLFI_EVENTS"), 0u);
  EXPECT_EQ(specs[0].env.count("NCCLFI_AGENT_SECRET"), 0u);
  // One agent per node the same way, with the node launcher's arguments and not torchrun's.
  const auto agents = launcher->agent_process(ctx);
  ASSERT_TRUE(agents.has_value());
  EXPECT_EQ(agents->argv[0], "mpirun");
  EXPECT_TRUE(has(agents->argv, "ppr:1:node"));
  EXPECT_TRUE(has(agents->argv, "/etc/hostfile"));
  EXPECT_FALSE(has(agents->argv, "--monitor_interval"));
  EXPECT_EQ(agents->argv.back(), "agent");
  EXPECT_EQ(agents->env.at("NCCLFI_AGENT_SECRET"), "s3cr3t");
  EXPECT_EQ(launcher->rank_of_line("[rank4]:[E] Watchdog caught"), 4);
  EXPECT_EQ(launcher->rank_of_line("[1,2]<stderr>:x"), -1);
}

TEST(Multihost, TorchrunAcrossNodesThroughSrunIsAStepOfItsOwn) {
  const Scenario s = scenario_from_json(
      torchrun_doc({{"nodes", 3}, {"node_launcher", "srun"}, {"node_launcher_args", {"--partition=debug"}}},
                   {{"MASTER_ADDR", "node2"}}),
      "t.json");
  const auto ctx = agents_context(s);
  const auto launcher = make_launcher(s.launcher.kind);
  const auto job = launcher->processes(ctx)[0];
  const auto torchrun = std::find(job.argv.begin(), job.argv.end(), "torchrun");
  ASSERT_NE(torchrun, job.argv.end());
  EXPECT_EQ(std::vector<std::string>(job.argv.begin(), torchrun),
            (std::vector<std::string>{"srun", "--nodes=3", "--ntasks-per-node=1",
                                      "--job-name=" + job.slurm_job_name, "--kill-on-bad-exit=0",
                                      "--partition=debug", "env", "-u", "NCCLFI_HARNESS_ID"}));
  EXPECT_EQ(job.slurm_job_name, "ncclfi-t-hid");              // scancelled if ncclfi dies
  EXPECT_TRUE(has(job.argv, "--rdzv_endpoint=node2:12345"));  // the scenario's MASTER_ADDR
  EXPECT_FALSE(has(job.argv, "MASTER_ADDR=node2"));
  const auto agents = launcher->agent_process(ctx);
  ASSERT_TRUE(agents.has_value());
  EXPECT_EQ(agents->argv[0], "srun");
  EXPECT_TRUE(has(agents->argv, "--ntasks-per-node=1"));
  EXPECT_TRUE(has(agents->argv, "--partition=debug"));
  EXPECT_NE(agents->slurm_job_name, job.slurm_job_name);
}

TEST(Multihost, TorchrunOnOneHostStartsNoAgents) {
  json d = torchrun_doc(json::object());
  const Scenario s = scenario_from_json(d, "t.json");
  EXPECT_FALSE(make_launcher(s.launcher.kind)->agent_process(context(s)).has_value());
  EXPECT_EQ(make_launcher(s.launcher.kind)->processes(context(s))[0].argv[0], "torchrun");
}

TEST(Multihost, TorchrunAcrossNodesNeedsANodeLauncher) {
  using V = std::vector<std::string>;
  EXPECT_EQ(problem_pointers(torchrun_doc({{"nodes", 3}})), V{"/launcher/node_launcher"});
  EXPECT_EQ(problem_pointers(torchrun_doc({{"nodes", 3}, {"node_launcher", "mpirun"}})), V{});
  EXPECT_EQ(problem_pointers(torchrun_doc({{"node_launcher", "mpirun"}})), V{"/launcher/nodes"});
  EXPECT_EQ(problem_pointers(torchrun_doc({{"nodes", 4}, {"node_launcher", "srun"}})), V{"/workload/ranks"});
  EXPECT_EQ(problem_pointers(torchrun_doc({{"node_launcher_args", {"-H", "a,b"}}})),
            V{"/launcher/node_launcher_args"});
  EXPECT_EQ(problem_pointers(scenario_doc({{"kind", "mpirun"}, {"nodes", 3}, {"node_launcher", "srun"}})),
            V{"/launcher/node_launcher"});
  // The schema: only launchers that place one process per node.
  EXPECT_EQ(problem_pointers(torchrun_doc({{"nodes", 3}, {"node_launcher", "pdsh"}})),
            V{"/launcher/node_launcher"});
  try {
    scenario_from_json(torchrun_doc({{"nodes", 3}}), "t.json");
    FAIL() << "torchrun across nodes without a node launcher was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(e.problems()[0].expected.find("\"mpirun\" or \"srun\""), std::string::npos) << e.what();
  }
  // With agents, link faults are allowed; without them not.
  const json rate = {{{"id", "slow"}, {"layer", "link"}, {"kind", "rate"}, {"params", {{"mbit", 1}}}}};
  EXPECT_EQ(problem_pointers(torchrun_doc({{"nodes", 3}, {"node_launcher", "mpirun"}}, json::object(), rate)),
            V{});
  EXPECT_EQ(problem_pointers(torchrun_doc(json::object(), json::object(), rate)), V{"/faults/0/layer"});
}

// A torchrun under mpirun carries the harness id only if something leaks it, and it always carries
// mpirun's OMPI_COMM_WORLD_RANK: only a process with the rank marker is one of the job's ranks.
TEST(Multihost, AgentsFindWorkersAndNeverTheirTorchrun) {
  auto spawn = test_support::start_sleeper;
  const std::string id = "multihost-test-" + std::to_string(getpid());
  const pid_t torchrun = spawn({"NCCLFI_HARNESS_ID=" + id, "OMPI_COMM_WORLD_RANK=0"});
  const pid_t worker = spawn(
      {"NCCLFI_HARNESS_ID=" + id, std::string(kRankMarkerVar) + "=6", "OMPI_COMM_WORLD_RANK=0", "RANK=1"});
  EXPECT_EQ(node_rank_pids(id), (std::map<int, std::vector<int>>{{1, {worker}}}));
  test_support::stop_sleepers({torchrun, worker});
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
