// Shared-GPU mode end to end on a host without GPUs: NCCLFI_VISIBLE_GPUS=1 makes ncclfi believe in one
// GPU, and a stand-in `nvidia-cuda-mps-control` on PATH plays the MPS daemon (it serves a control FIFO
// until `quit` arrives, and logs what it was told). The ranks are shell commands that print the
// variables shared mode gives them; no CUDA is involved. What runs on a real GPU is in bench/README.md.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Serves $CUDA_MPS_PIPE_DIRECTORY/control until `quit` (the real daemon's socket has the same name);
// the client form forwards stdin's command. FAKE_MPS_FAIL makes the daemon refuse to start.
constexpr const char* kFakeMps = R"(#!/bin/sh
if [ "$1" = "-f" ]; then
  if [ -n "$FAKE_MPS_FAIL" ]; then echo "$FAKE_MPS_FAIL"; exit 1; fi
  mkfifo "$CUDA_MPS_PIPE_DIRECTORY/control" || exit 1
  echo "start $CUDA_MPS_PIPE_DIRECTORY" >> "$FAKE_MPS_LOG"
  while true; do
    read -r cmd < "$CUDA_MPS_PIPE_DIRECTORY/control"
    echo "$cmd" >> "$FAKE_MPS_LOG"
    if [ "$cmd" = quit ]; then exit 0; fi
  done
fi
read -r cmd
echo "$cmd" > "$CUDA_MPS_PIPE_DIRECTORY/control"
)";

struct SharedGpuHost {
  TempDir dir;
  std::string bin = dir.path + "/fakebin";
  std::string mps_log = dir.path + "/mps.log";
  SharedGpuHost() {
    fs::create_directories(bin);
    const std::string tool = bin + "/nvidia-cuda-mps-control";
    std::ofstream(tool) << kFakeMps;
    chmod(tool.c_str(), 0755);
  }
  CliResult run(const json& scenario, std::vector<std::string> extra = {}, const std::string& fail = "") {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "PATH=" + bin + ":/usr/bin:/bin",
                                     "NCCLFI_VISIBLE_GPUS=1",
                                     "FAKE_MPS_LOG=" + mps_log,
                                     "FAKE_MPS_FAIL=" + fail,
                                     NCCLFI_CLI,
                                     "run",
                                     write_scenario(dir.path, scenario),
                                     "--out",
                                     dir.path + "/runs"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_program(argv, 90);
  }
  std::string run_dir(const std::string& name) const {
    return fs::canonical(fs::path(dir.path) / "runs" / name / "latest").string();
  }
};

// Each rank prints the variables that shared mode sets.
constexpr const char* kPrintEnv =
    "echo host=$NCCL_HOSTID cvd=$CUDA_VISIBLE_DEVICES local=$LOCAL_RANK mps=${CUDA_MPS_PIPE_DIRECTORY:-none}";

json two_gpu_job(const std::string& name, const std::string& shell) {
  json s = shell_scenario(name, 2, shell, {{"outcome", "clean"}});
  s["requires"] = {{"gpus", 2}};
  return s;
}

TEST(SharedGpu, TwoRanksOnOneGpuAreTwoHostsWithOurOwnMpsDaemon) {
  SharedGpuHost host;
  const auto r = host.run(two_gpu_job("shared-two", kPrintEnv));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string run = host.run_dir("shared-two");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string log = read_text(run + "/attempt-0/rank-" + std::to_string(rank) + ".log");
    EXPECT_NE(log.find("host=ncclfi-shared-" + std::to_string(rank) + " cvd=0 local=0 mps=/"),
              std::string::npos)
        << log;
  }
  const json verdict = read_json(run + "/verdict.json");
  EXPECT_EQ(verdict["gpu"]["shared"], true) << verdict.dump(2);
  EXPECT_EQ(verdict["gpu"]["placement"], "2 ranks on 1 GPU (shared: a host per rank, network path)");
  EXPECT_EQ(verdict["gpu"]["mps"], "own daemon per attempt");
  // The daemon was started and told to quit, and its pipe directory is gone.
  const std::string mps = read_text(host.mps_log);
  const auto start = mps.find("start ");
  ASSERT_NE(start, std::string::npos) << mps;
  EXPECT_NE(mps.find("quit", start), std::string::npos) << mps;
  const std::string pipe_dir = mps.substr(start + 6, mps.find('\n', start) - start - 6);
  EXPECT_FALSE(fs::exists(pipe_dir)) << pipe_dir;
  EXPECT_NE(r.err.find("MPS: own daemon per attempt"), std::string::npos) << r.err;
}

TEST(SharedGpu, EveryAttemptGetsAFreshDaemon) {
  SharedGpuHost host;
  json s = two_gpu_job("shared-restarts", "exit 1");
  s["restart"] = {{"max", 2}, {"backoff_s", 0.05}};
  const auto r = host.run(s);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // every attempt failed: not clean
  const std::string mps = read_text(host.mps_log);
  size_t starts = 0, quits = 0;
  for (size_t at = 0; (at = mps.find("start ", at)) != std::string::npos; ++at) ++starts;
  for (size_t at = 0; (at = mps.find("quit", at)) != std::string::npos; ++at) ++quits;
  EXPECT_EQ(starts, 3u) << mps;  // three attempts
  EXPECT_EQ(quits, 3u) << mps;
}

TEST(SharedGpu, NoMpsIsSaidAndTheRanksStillRun) {
  SharedGpuHost host;
  const auto r = host.run(two_gpu_job("shared-no-mps", kPrintEnv), {}, "the GPU is in exclusive mode");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json verdict = read_json(host.run_dir("shared-no-mps") + "/verdict.json");
  const std::string mps = verdict["gpu"]["mps"];
  EXPECT_NE(mps.find("nvidia-cuda-mps-control exited: the GPU is in exclusive mode"), std::string::npos)
      << mps;
  EXPECT_NE(mps.find("time-slice"), std::string::npos) << mps;
  EXPECT_NE(read_text(host.run_dir("shared-no-mps") + "/attempt-0/rank-1.log").find("mps=none"),
            std::string::npos);
}

TEST(SharedGpu, MpsCanBeTurnedOff) {
  SharedGpuHost host;
  const auto r = host.run(two_gpu_job("shared-mps-off", kPrintEnv), {"--mps", "never"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(file_exists(host.mps_log));
  const json verdict = read_json(host.run_dir("shared-mps-off") + "/verdict.json");
  EXPECT_NE(verdict["gpu"]["mps"].get<std::string>().find("--mps never"), std::string::npos);
}

TEST(SharedGpu, ScenariosNeedingIntraNodePathsAreSkipped) {
  SharedGpuHost host;
  json s = two_gpu_job("needs-nvlink", kPrintEnv);
  s["requires"]["intra_node_paths"] = true;
  const auto r = host.run(s);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("needs-nvlink: skipped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("intra-node paths (P2P/NVLink)"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(host.mps_log));
}

TEST(SharedGpu, SharingNeverSkipsWhatDoesNotFit) {
  SharedGpuHost host;
  const auto r = host.run(two_gpu_job("no-sharing", kPrintEnv), {"--gpu-sharing", "never"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("needs 2 GPUs, 1 visible (shared-GPU mode is off)"), std::string::npos) << r.err;
}

// A launcher that starts the ranks itself (here one shell standing for torchrun) hands them the preload,
// which makes each a host of its own before its main runs: the child shells see the variables.
TEST(SharedGpu, RanksStartedByALauncherGetTheirVariablesFromThePreload) {
  if (!file_exists(std::string(NCCLFI_LIB_DIR) + "/libncclfi-preload.so")) GTEST_SKIP() << "no preload built";
  SharedGpuHost host;
  json s = two_gpu_job(
      "shared-launcher",
      "for r in 0 1; do RANK=$r /bin/sh -c 'echo child $RANK: host=$NCCL_HOSTID cvd=$CUDA_VISIBLE_DEVICES "
      "local=$LOCAL_RANK'; done");
  s["launcher"] = {{"kind", "command"}, {"per_rank", false}};
  s["workload"]["ranks"] = 2;
  const auto r = host.run(s, {"--mps", "never"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string log = read_text(host.run_dir("shared-launcher") + "/attempt-0/launcher.log");
  EXPECT_NE(log.find("child 0: host=ncclfi-shared-0 cvd=0 local=0"), std::string::npos) << log;
  EXPECT_NE(log.find("child 1: host=ncclfi-shared-1 cvd=0 local=0"), std::string::npos) << log;
}

}  // namespace
}  // namespace ncclfi::e2e
