// Where a scenario's GPU ranks go: one GPU each, several on one GPU (shared-GPU mode), or skipped; and
// the variables that make each rank of a shared GPU a host of its own.
#include <gtest/gtest.h>

#include "gpu_placement.h"
#include "host_env.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "ncclfi/shared_gpu.h"

namespace ncclfi::cli {
namespace {

using nlohmann::json;

Scenario gpu_scenario(int ranks, int gpus, bool intra_node = false, const std::string& launcher = "local") {
  json requires_ = {{"gpus", gpus}};
  if (intra_node) requires_["intra_node_paths"] = true;
  json d = {{"name", "g"},
            {"summary", "s"},
            {"requires", requires_},
            {"workload", {{"builtin", "nccl-workload"}, {"ranks", ranks}}},
            {"launcher", {{"kind", launcher}}},
            {"deadline_s", 30},
            {"expect", {{"outcome", "clean"}}}};
  return scenario_from_json(d, "g.json");
}

TEST(GpuPlacement, EnoughGpusMeansOneGpuPerRank) {
  const auto p = place_on_gpus(gpu_scenario(2, 2), 2, GpuSharing::kAuto);
  EXPECT_TRUE(p.skip.empty());
  EXPECT_FALSE(p.shared);
  EXPECT_EQ(p.gpus, 2);
  EXPECT_EQ(p.describe(), "2 ranks on 2 GPUs");
}

TEST(GpuPlacement, TooFewGpusShareThemInAutoMode) {
  const auto one = place_on_gpus(gpu_scenario(4, 4), 1, GpuSharing::kAuto);
  EXPECT_TRUE(one.skip.empty()) << one.skip;
  EXPECT_TRUE(one.shared);
  EXPECT_EQ(one.gpus, 1);
  EXPECT_EQ(one.describe(), "4 ranks on 1 GPU (shared: a host per rank, network path)");
  const auto two = place_on_gpus(gpu_scenario(4, 4), 2, GpuSharing::kAuto);
  EXPECT_TRUE(two.shared);
  EXPECT_EQ(two.gpus, 2);  // spread over every visible GPU
}

TEST(GpuPlacement, NeverSharingSkipsWithTheCount) {
  const auto p = place_on_gpus(gpu_scenario(2, 2), 1, GpuSharing::kNever);
  EXPECT_EQ(p.skip, "needs 2 GPUs, 1 visible (shared-GPU mode is off)");
  EXPECT_FALSE(p.shared);
}

TEST(GpuPlacement, NoGpuAtAllIsASkipWhateverTheMode) {
  for (auto mode : {GpuSharing::kAuto, GpuSharing::kAlways, GpuSharing::kNever}) {
    EXPECT_EQ(place_on_gpus(gpu_scenario(2, 2), 0, mode).skip, "needs 2 GPUs, 0 visible");
  }
}

TEST(GpuPlacement, AlwaysPutsEveryRankOnOneGpu) {
  const auto p = place_on_gpus(gpu_scenario(2, 2), 8, GpuSharing::kAlways);
  EXPECT_TRUE(p.shared);
  EXPECT_EQ(p.gpus, 1);
}

TEST(GpuPlacement, IntraNodePathsAreNeverShared) {
  const auto needed = place_on_gpus(gpu_scenario(2, 2, true), 1, GpuSharing::kAuto);
  EXPECT_FALSE(needed.shared);
  EXPECT_NE(needed.skip.find("intra-node paths (P2P/NVLink)"), std::string::npos) << needed.skip;
  const auto asked = place_on_gpus(gpu_scenario(2, 2, true), 2, GpuSharing::kAlways);
  EXPECT_FALSE(asked.shared);
  EXPECT_NE(asked.skip.find("intra-node paths"), std::string::npos);
  EXPECT_TRUE(place_on_gpus(gpu_scenario(2, 2, true), 2, GpuSharing::kAuto).skip.empty());
}

TEST(GpuPlacement, CpuJobsHaveNoPlacement) {
  json d = {{"name", "c"},
            {"summary", "s"},
            {"workload", {{"builtin", "cpu-ring"}, {"ranks", 2}}},
            {"deadline_s", 30},
            {"expect", {{"outcome", "clean"}}}};
  const auto p = place_on_gpus(scenario_from_json(d, "c.json"), 0, GpuSharing::kAlways);
  EXPECT_FALSE(p.gpu_job);
  EXPECT_FALSE(p.shared);
  EXPECT_TRUE(p.skip.empty());
  EXPECT_EQ(p.describe(), "");
}

TEST(SharedGpuEnv, EachRankIsAHostOfItsOwnOnItsGpu) {
  const auto env = shared_gpu_rank_env(3, 2, "");
  EXPECT_EQ(env.at("NCCL_HOSTID"), "ncclfi-shared-3");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_EQ(env.at("LOCAL_RANK"), "0");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "1");
  // The GPUs ncclfi was given, not 0..n-1.
  EXPECT_EQ(shared_gpu_rank_env(2, 2, "4,6").at("CUDA_VISIBLE_DEVICES"), "4");
  EXPECT_EQ(shared_gpu_rank_env(1, 2, "GPU-aa,GPU-bb").at("CUDA_VISIBLE_DEVICES"), "GPU-bb");
  EXPECT_TRUE(shared_gpu_rank_env(-1, 2, "").empty());
  EXPECT_TRUE(shared_gpu_rank_env(0, 0, "").empty());
}

LaunchContext shared_context(const Scenario& s) {
  LaunchContext ctx;
  ctx.scenario = &s;
  ctx.install = {"/b/bin", "/b/lib", "/b/share/ncclfi"};
  ctx.run_dir = "/runs/g/1";
  ctx.log_dir = "/runs/g/1/attempt-0";
  ctx.plan_path = "/runs/g/1/plan.json";
  ctx.events_path = "/runs/g/1/events.jsonl";
  ctx.harness_id = "hid";
  ctx.parent_env = {{"PATH", "/usr/bin"}, {"CUDA_VISIBLE_DEVICES", "5"}};
  ctx.gpu = place_on_gpus(s, 1, GpuSharing::kAuto);
  ctx.mps_env = {{"CUDA_MPS_PIPE_DIRECTORY", "/tmp/ncclfi-mps-1"}};
  return ctx;
}

// Ranks that run as named nodes (the labs) give NCCL their node's name: NCCL_DEBUG=INFO prints
// "NCCL_HOSTID set by environment to ...", and a lab's logs must not name ncclfi (seen on an H200).
TEST(SharedGpuLaunch, NamedNodesAreTheirOwnHostIds) {
  Scenario s = gpu_scenario(2, 2);
  s.launcher.hostnames = {"gpu-node07", "gpu-node11"};
  const LaunchContext ctx = shared_context(s);
  const auto specs = make_launcher("local")->processes(ctx);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].env.at("NCCL_HOSTID"), "gpu-node07");
  EXPECT_EQ(specs[1].env.at("NCCL_HOSTID"), "gpu-node11");
}

TEST(SharedGpuLaunch, LocalRanksGetTheirHostIdGpuAndMps) {
  const Scenario s = gpu_scenario(2, 2);
  const LaunchContext ctx = shared_context(s);
  const auto specs = make_launcher("local")->processes(ctx);
  ASSERT_EQ(specs.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const auto& env = specs[static_cast<size_t>(r)].env;
    EXPECT_EQ(env.at("NCCL_HOSTID"), "ncclfi-shared-" + std::to_string(r));
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "5");
    EXPECT_EQ(env.at("LOCAL_RANK"), "0");  // not the rank: each rank is alone on its "node"
    EXPECT_EQ(env.at("RANK"), std::to_string(r));
    EXPECT_EQ(env.at("CUDA_MPS_PIPE_DIRECTORY"), "/tmp/ncclfi-mps-1");
    EXPECT_EQ(env.count(kSharedGpusVar), 0u);
  }
}

TEST(SharedGpuLaunch, LauncherStartedRanksGetThePreloadToApplyIt) {
  const Scenario s = gpu_scenario(2, 2, false, "mpirun");
  const LaunchContext ctx = shared_context(s);
  const auto env = injection_env(ctx, -1);
  EXPECT_EQ(env.at(kSharedGpusVar), "1");
  EXPECT_EQ(env.at(kSharedGpuListVar), "5");
  EXPECT_EQ(env.at("LD_PRELOAD"), "/b/lib/libncclfi-preload.so");
  EXPECT_EQ(env.count("NCCL_HOSTID"), 0u);  // the rank is not known yet: the preload sets it
}

TEST(SharedGpuLaunch, DedicatedModeAddsNothing) {
  const Scenario s = gpu_scenario(2, 2);
  LaunchContext ctx = shared_context(s);
  ctx.gpu = place_on_gpus(s, 2, GpuSharing::kAuto);
  const auto env = injection_env(ctx, 1);
  EXPECT_EQ(env.count("NCCL_HOSTID"), 0u);
  EXPECT_EQ(env.count(kSharedGpusVar), 0u);
}

}  // namespace
}  // namespace ncclfi::cli
