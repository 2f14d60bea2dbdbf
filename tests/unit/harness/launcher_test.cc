// Launchers turn an attempt into process specs: env per rank, injection variables only for ranks.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "host_env.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "ncclfi/event_log.h"
#include "ncclfi/params.h"
#include "proc_scan.h"
#include "rank_process.h"
#include "sleeper.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

// Waits (at most 10 s) until `pid` runs `program`: after fork, /proc/PID/exe names the parent's
// executable until execve is done, and the environment the test checks is only there after it.
bool wait_for_exec(pid_t pid, const std::string& program) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < end) {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    if (!ec && std::filesystem::equivalent(exe, program, ec)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

Scenario scenario(const std::string& launcher, json workload, json faults = json::array()) {
  json d = {{"name", "t"},
            {"summary", "s"},
            {"workload", workload},
            {"launcher", {{"kind", launcher}}},
            {"env", {{"NCCL_DEBUG", "WARN"}}},
            {"faults", faults},
            {"deadline_s", 30},
            {"expect", {{"outcome", faults.empty() ? "clean" : "detected"}}}};
  return scenario_from_json(d, "t.json");
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
  ctx.parent_env = {{"PATH", "/usr/bin"}, {"LD_PRELOAD", ""}};
  return ctx;
}

TEST(Launcher, LocalSetsRendezvousAndInjectionPerRank) {
  const Scenario s = scenario("local", {{"builtin", "cpu-ring"}, {"ranks", 3}, {"args", {"--iters", "5"}}},
                              {{{"id", "d"}, {"layer", "net"}, {"kind", "drop"}}});
  const auto specs = make_launcher(s.launcher.kind)->processes(context(s));
  ASSERT_EQ(specs.size(), 3u);
  const auto& e = specs[2].env;
  EXPECT_EQ(specs[2].argv, (std::vector<std::string>{"/b/bin/ncclfi-cpu-ring", "--iters", "5"}));
  EXPECT_EQ(e.at("RANK"), "2");
  EXPECT_EQ(e.at("WORLD_SIZE"), "3");
  EXPECT_EQ(e.at("LOCAL_RANK"), "2");
  EXPECT_EQ(e.at("LOCAL_WORLD_SIZE"), "3");
  EXPECT_EQ(e.count("NCCLFI_NODE_RANKS"), 0u);  // no node names: no node is known
  EXPECT_EQ(e.at("MASTER_ADDR"), "127.0.0.1");
  EXPECT_EQ(e.at("MASTER_PORT"), "12345");
  EXPECT_EQ(e.at("NCCLFI_RANK"), "2");
  EXPECT_EQ(e.at("NCCLFI_WORLD_SIZE"), "3");
  EXPECT_EQ(e.at("NCCLFI_PLAN"), "/runs/t/1/plan.json");
  EXPECT_EQ(e.at("NCCLFI_EVENTS"), "/runs/t/1/events.jsonl");
  EXPECT_EQ(e.at("NCCLFI_ATTEMPT"), "0");
  EXPECT_EQ(e.at("NCCL_NET_PLUGIN"), "/b/lib/libnccl-net-ncclfi.so");
  EXPECT_EQ(e.at("NCCL_DEBUG"), "WARN");
  EXPECT_EQ(e.at("NCCLFI_HARNESS_ID"), "hid");
  EXPECT_EQ(e.at("PATH"), "/usr/bin");
  EXPECT_EQ(e.at("LD_PRELOAD"), "");  // no api layer: the preload is not loaded
  EXPECT_EQ(specs[2].log_path, "/runs/t/1/attempt-0/rank-2.log");
}

// Whether this host lets a process take a UTS namespace (directly as root, else in a user namespace).
bool uts_namespaces_allowed() {
  const pid_t child = fork();
  if (child == 0) _exit(unshare(CLONE_NEWUTS) == 0 || unshare(CLONE_NEWUSER | CLONE_NEWUTS) == 0 ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(Launcher, RanksThatShareANodeNameAreNumberedOnTheirNode) {
  json d = {{"name", "t"},
            {"summary", "s"},
            {"workload", {{"builtin", "cpu-ring"}, {"ranks", 4}}},
            {"launcher",
             {{"kind", "local"}, {"hostnames", {"gpu-node03", "gpu-node03", "gpu-node07", "gpu-node07"}}}},
            {"deadline_s", 30},
            {"expect", {{"outcome", "clean"}}}};
  const auto specs = make_launcher("local")->processes(context(scenario_from_json(d, "t.json")));
  ASSERT_EQ(specs.size(), 4u);
  const std::vector<std::string> local = {"0", "1", "0", "1"};
  const std::vector<std::string> node = {"0,1", "0,1", "2,3", "2,3"};
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(specs[r].env.at("RANK"), std::to_string(r));
    EXPECT_EQ(specs[r].env.at("LOCAL_RANK"), local[r]) << "rank " << r;
    EXPECT_EQ(specs[r].env.at("LOCAL_WORLD_SIZE"), "2");
    EXPECT_EQ(specs[r].env.at("NCCLFI_NODE_RANKS"), node[r]);
    EXPECT_EQ(specs[r].env.at("NCCL_HOSTID"), r < 2 ? "gpu-node03" : "gpu-node07");
  }
  // Names in any order: a node's ranks need not be neighbours.
  d["launcher"]["hostnames"] = {"a", "b", "a", "c"};
  const auto mixed = make_launcher("local")->processes(context(scenario_from_json(d, "t.json")));
  EXPECT_EQ(mixed[2].env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(mixed[2].env.at("NCCLFI_NODE_RANKS"), "0,2");
  EXPECT_EQ(mixed[3].env.at("LOCAL_WORLD_SIZE"), "1");
  EXPECT_EQ(mixed[3].env.at("NCCLFI_NODE_RANKS"), "3");
}

TEST(Launcher, EachRankRunsAsTheNodeItsHostnameNames) {
  json d = {{"name", "t"},
            {"summary", "s"},
            {"workload", {{"builtin", "cpu-ring"}, {"ranks", 2}}},
            {"launcher", {{"kind", "local"}, {"hostnames", {"gpu-node03", "gpu-node07"}}}},
            {"deadline_s", 30},
            {"expect", {{"outcome", "clean"}}}};
  const Scenario s = scenario_from_json(d, "t.json");
  const auto specs = make_launcher(s.launcher.kind)->processes(context(s));
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].hostname, "gpu-node03");
  EXPECT_EQ(specs[1].hostname, "gpu-node07");
  // One name per rank, and only where each rank is a process of its own.
  d["launcher"]["hostnames"] = {"gpu-node03"};
  EXPECT_THROW(scenario_from_json(d, "t.json"), ScenarioError);
  d["launcher"] = {{"kind", "mpirun"}, {"hostnames", {"a", "b"}}};
  d["workload"] = {{"builtin", "nccl-workload"}, {"ranks", 2}};
  EXPECT_THROW(scenario_from_json(d, "t.json"), ScenarioError);
  d["launcher"] = {{"kind", "local"}, {"hostnames", {"gpu_node 1", "b"}}};  // not a host name
  EXPECT_THROW(scenario_from_json(d, "t.json"), ScenarioError);

  // The process itself: gethostname() (here hostname(1)) returns the node's name.
  if (!uts_namespaces_allowed()) GTEST_SKIP() << "this host allows no UTS namespace";
  const std::string log = testing::TempDir() + "/hostname-" + std::to_string(getpid()) + ".log";
  ProcessSpec spec;
  spec.argv = {"hostname"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.log_path = log;
  spec.hostname = "gpu-node07";
  auto process = RankProcess::spawn(spec);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!process->poll() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(process->poll());
  EXPECT_EQ(process->exit_code(), 0);
  std::ifstream in(log);
  std::string name;
  std::getline(in, name);
  EXPECT_EQ(name, "gpu-node07");
  EXPECT_NE(host_name(), "gpu-node07");  // the harness keeps its own
  std::filesystem::remove(log);
}

TEST(Launcher, NoPlanOnCleanAttempts) {
  const Scenario s = scenario("local", {{"builtin", "nccl-workload"}, {"ranks", 2}},
                              {{{"id", "h"}, {"layer", "api"}, {"kind", "hang"}}});
  auto ctx = context(s);
  ctx.inject = false;
  const auto specs = make_launcher(s.launcher.kind)->processes(ctx);
  EXPECT_EQ(specs[0].env.count("NCCLFI_PLAN"), 0u);
  EXPECT_EQ(specs[0].env.at("LD_PRELOAD"), "/b/lib/libncclfi-preload.so");  // loaded, inert
}

TEST(Launcher, MpirunForwardsInjectionWithDashX) {
  const Scenario s = scenario("mpirun", {{"builtin", "nccl-workload"}, {"ranks", 4}},
                              {{{"id", "h"}, {"layer", "api"}, {"kind", "hang"}}});
  const auto specs = make_launcher(s.launcher.kind)->processes(context(s));
  ASSERT_EQ(specs.size(), 1u);
  const auto& argv = specs[0].argv;
  EXPECT_EQ(argv[0], "mpirun");
  auto has = [&](const std::string& a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); };
  EXPECT_TRUE(has("--allow-run-as-root"));
  EXPECT_TRUE(has("--oversubscribe"));
  EXPECT_TRUE(has("--tag-output"));
  EXPECT_TRUE(has("LD_PRELOAD=/b/lib/libncclfi-preload.so"));
  EXPECT_TRUE(has("NCCLFI_PLAN=/runs/t/1/plan.json"));
  EXPECT_EQ(specs[0].env.at("LD_PRELOAD"), "");  // not in mpirun's own environment
  EXPECT_EQ(argv.back(), "/b/bin/ncclfi-workload");
  EXPECT_EQ(make_launcher(s.launcher.kind)->rank_of_line("[1,3]<stderr>:NCCL WARN x"), 3);
}

TEST(Launcher, HydraGivesEachRankItsOwnSegment) {
  const Scenario s = scenario("hydra", {{"builtin", "cpu-ring"}, {"ranks", 3}, {"args", {"--iters", "5"}}},
                              {{{"id", "d"}, {"layer", "net"}, {"kind", "drop"}}});
  const auto specs = make_launcher(s.launcher.kind)->processes(context(s));
  ASSERT_EQ(specs.size(), 1u);
  const auto& argv = specs[0].argv;
  EXPECT_EQ(argv[0], "mpiexec.hydra");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), ":"), 2);  // three segments
  // The last segment is rank 2's: its own variables, then the program.
  const auto last = std::find(argv.rbegin(), argv.rend(), ":").base();
  auto value_of = [&](const std::string& name) {
    for (auto it = last; it + 2 < argv.end(); ++it) {
      if (*it == "-env" && *(it + 1) == name) return *(it + 2);
    }
    return std::string("(absent)");
  };
  EXPECT_EQ(value_of("RANK"), "2");
  EXPECT_EQ(value_of("NCCLFI_RANK"), "2");
  EXPECT_EQ(value_of("WORLD_SIZE"), "3");
  EXPECT_EQ(value_of("MASTER_PORT"), "12345");
  EXPECT_EQ(value_of("NCCL_NET_PLUGIN"), "/b/lib/libnccl-net-ncclfi.so");
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()),
            (std::vector<std::string>{"/b/bin/ncclfi-cpu-ring", "--iters", "5"}));
  EXPECT_EQ(specs[0].env.count("NCCL_NET_PLUGIN"), 0u);  // not in Hydra's own environment
  EXPECT_EQ(make_launcher(s.launcher.kind)->rank_of_line("[2] NCCL WARN x"), 2);
  EXPECT_EQ(make_launcher(s.launcher.kind)->rank_of_line("=   BAD TERMINATION"), -1);
}

TEST(Launcher, SrunPassesInjectionThroughEnvToTheTasksOnly) {
  const Scenario s = scenario("srun", {{"builtin", "cpu-ring"}, {"ranks", 4}, {"args", {"--iters", "5"}}},
                              {{{"id", "d"}, {"layer", "net"}, {"kind", "drop"}}});
  const auto specs = make_launcher(s.launcher.kind)->processes(context(s));
  ASSERT_EQ(specs.size(), 1u);
  const auto& argv = specs[0].argv;
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "srun");
  EXPECT_EQ(argv[1], "--ntasks=4");
  auto has = [&](const std::string& a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); };
  EXPECT_TRUE(has("--label"));
  EXPECT_TRUE(has("--kill-on-bad-exit=0"));  // a dead rank must leave its peers to their own detection
  const auto env_at = std::find(argv.begin(), argv.end(), "env");
  ASSERT_NE(env_at, argv.end());
  auto after_env = [&](const std::string& a) { return std::find(env_at, argv.end(), a) != argv.end(); };
  EXPECT_TRUE(after_env("NCCL_NET_PLUGIN=/b/lib/libnccl-net-ncclfi.so"));
  EXPECT_TRUE(after_env("NCCLFI_PLAN=/runs/t/1/plan.json"));
  EXPECT_TRUE(after_env("NCCLFI_HARNESS_ID=hid"));
  EXPECT_TRUE(after_env("MASTER_PORT=12345"));
  for (const auto& a : argv) EXPECT_NE(a.rfind("NCCLFI_RANK=", 0), 0u) << "ranks come from SLURM_PROCID";
  EXPECT_EQ(specs[0].env.count("NCCL_NET_PLUGIN"), 0u);  // not in srun's own environment
  EXPECT_EQ(specs[0].env.at("NCCLFI_HARNESS_ID"), "hid");
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()),
            (std::vector<std::string>{"/b/bin/ncclfi-cpu-ring", "--iters", "5"}));
  const auto launcher = make_launcher(s.launcher.kind);
  EXPECT_EQ(launcher->rank_of_line("2: ncclfi-cpu-ring: watchdog fired"), 2);
  EXPECT_EQ(launcher->rank_of_line("srun: error: vm: task 3: Killed"), -1);
}

// Proc faults find a launcher's ranks by their environment. Inside a Slurm allocation every process
// inherits SLURM_PROCID=0, so a torchrun worker's RANK must win over it.
TEST(Launcher, RankPidsPreferRankOverAnInheritedSlurmProcid) {
  auto spawn = test_support::start_sleeper;
  const std::string id = "launcher-test-" + std::to_string(getpid());
  const std::string marker = std::string(kRankMarkerVar) + "=4";  // the launchers give every rank this
  const pid_t torch_worker = spawn({"NCCLFI_HARNESS_ID=" + id, marker, "SLURM_PROCID=0", "RANK=2"});
  const pid_t srun_task = spawn({"NCCLFI_HARNESS_ID=" + id, marker, "SLURM_PROCID=3"});
  const pid_t stranger = spawn({"NCCLFI_HARNESS_ID=other", marker, "RANK=2"});
  // torchrun itself in the allocation: the harness id, an inherited SLURM_PROCID, no injection variables.
  const pid_t torchrun = spawn({"NCCLFI_HARNESS_ID=" + id, "SLURM_PROCID=0"});
  for (pid_t p : {torch_worker, srun_task, stranger, torchrun})
    ASSERT_TRUE(wait_for_exec(p, "/bin/sleep")) << p;
  const auto ranks = job_rank_pids(id);
  EXPECT_EQ(ranks, (std::map<int, std::vector<int>>{{2, {torch_worker}}, {3, {srun_task}}}));
  test_support::stop_sleepers({torch_worker, srun_task, stranger, torchrun});
}

TEST(Launcher, TorchrunKeepsInjectionOffTheAgent) {
  const Scenario s = scenario("torchrun",
                              {{"command", {"python3", "{data_dir}/workloads/torch/ddp_train.py"}},
                               {"ranks", 2},
                               {"args", {"--steps", "5"}}},
                              {{{"id", "h"}, {"layer", "api"}, {"kind", "hang"}}});
  const auto specs = make_launcher(s.launcher.kind)->processes(context(s));
  ASSERT_EQ(specs.size(), 1u);
  const auto& argv = specs[0].argv;
  EXPECT_EQ(argv[0], "torchrun");
  const auto env_at = std::find(argv.begin(), argv.end(), "env");
  ASSERT_NE(env_at, argv.end());
  // torchrun's options with underscores, which PyTorch 1.13 needs and 2.x accepts, before the workers'.
  EXPECT_EQ(std::vector<std::string>(argv.begin(), env_at),
            (std::vector<std::string>{"torchrun", "--nnodes=1", "--nproc_per_node=2", "--max_restarts=0",
                                      "--rdzv_backend=c10d", "--rdzv_endpoint=127.0.0.1:12345",
                                      "--rdzv_id=hid", "--no_python"}));
  EXPECT_NE(std::find(env_at, argv.end(), "LD_PRELOAD=/b/lib/libncclfi-preload.so"), argv.end());
  EXPECT_NE(std::find(env_at, argv.end(), "/b/share/ncclfi/workloads/torch/ddp_train.py"), argv.end());
  EXPECT_EQ(specs[0].env.at("LD_PRELOAD"), "");
  EXPECT_EQ(specs[0].env.at("NCCLFI_HARNESS_ID"), "hid");  // one host: the orphan guard finds torchrun by it
  EXPECT_EQ(specs[0].env.at("NCCL_DEBUG"), "WARN");        // the scenario's env is torchrun's own too
  EXPECT_EQ(make_launcher(s.launcher.kind)->rank_of_line("[rank1]:[E] Watchdog caught"), 1);
}

TEST(Launcher, CommandPlaceholders) {
  const Scenario s = scenario(
      "command", {{"command", {"run-{rank}-of-{world_size}", "{run_dir}/x", "{env:PATH}"}}, {"ranks", 2}});
  const auto specs = make_launcher(s.launcher.kind)->processes(context(s));
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[1].argv, (std::vector<std::string>{"run-1-of-2", "/runs/t/1/x", "/usr/bin"}));
  EXPECT_EQ(substitute_placeholders("{unknown}", context(s), 0), "{unknown}");
}

// ncclfi finds everything from where its executable is; the environment overrides, nothing compiled in.
const char* no_env(const char*) {
  return nullptr;
}

TEST(Installation, FromTheExecutablesPrefix) {
  const auto inst = Installation::for_executable("/opt/x/bin/ncclfi", no_env);
  EXPECT_EQ(inst.bin_dir, "/opt/x/bin");
  EXPECT_EQ(inst.lib_dir, "/opt/x/lib");
  EXPECT_EQ(inst.data_dir, "/opt/x/share/ncclfi");
}

// An installed tree keeps the libraries private in PREFIX/lib/ncclfi; a build tree has them in PREFIX/lib.
TEST(Installation, LibrariesInLibNcclfiWhenThePrefixHasIt) {
  const auto prefix = std::filesystem::temp_directory_path() / ("ncclfi-install-" + std::to_string(getpid()));
  std::filesystem::create_directories(prefix / "bin");
  const std::string exe = (prefix / "bin" / "ncclfi").string();
  EXPECT_EQ(Installation::for_executable(exe, no_env).lib_dir, (prefix / "lib").string());
  std::filesystem::create_directories(prefix / "lib" / "ncclfi");
  EXPECT_EQ(Installation::for_executable(exe, no_env).lib_dir, (prefix / "lib" / "ncclfi").string());
  std::filesystem::remove_all(prefix);
}

TEST(Installation, EnvironmentOverridesThePrefixAndTheDataDir) {
  const auto inst = Installation::for_executable("/opt/x/bin/ncclfi", [](const char* name) -> const char* {
    if (std::string(name) == "NCCLFI_BUILD_DIR") return "/elsewhere";
    if (std::string(name) == "NCCLFI_DATA_DIR") return "/data";
    return nullptr;
  });
  EXPECT_EQ(inst.bin_dir, "/elsewhere/bin");
  EXPECT_EQ(inst.lib_dir, "/elsewhere/lib");
  EXPECT_EQ(inst.data_dir, "/data");
}

TEST(Installation, DataDirPlaceholder) {
  const Scenario s = scenario("command", {{"command", {"{data_dir}/scenarios", "{bin_dir}"}}, {"ranks", 1}});
  const auto specs = make_launcher(s.launcher.kind)->processes(context(s));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].argv, (std::vector<std::string>{"/b/share/ncclfi/scenarios", "/b/bin"}));
}

TEST(Launcher, FreePortIsUsable) {
  const int port = pick_free_port();
  EXPECT_GT(port, 1024);
  EXPECT_LT(port, 65536);
}

}  // namespace
}  // namespace ncclfi::cli
