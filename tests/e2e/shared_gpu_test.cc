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
// the client form forwards stdin's command. FAKE_MPS_FAIL makes the daemon refuse to start. A job's
// process says `client PID` and reads its answer from reply-PID: like a real MPS server
// (docs/failure-signatures.md, section 8), a client that vanished without `bye PID` (killed) leaves an
// error that the next client to connect takes, with the server's own fatal-error lines on its output.
constexpr const char* kFakeMps = R"(#!/bin/sh
if [ "$1" = "-f" ]; then
  if [ -n "$FAKE_MPS_FAIL" ]; then echo "$FAKE_MPS_FAIL"; exit 1; fi
  mkfifo "$CUDA_MPS_PIPE_DIRECTORY/control" || exit 1
  echo "start $CUDA_MPS_PIPE_DIRECTORY" >> "$FAKE_MPS_LOG"
  last=""
  while true; do
    while read -r cmd arg; do  # every line of one opening: clients may write at once
      echo "$cmd" >> "$FAKE_MPS_LOG"
      case "$cmd" in
        quit) exit 0 ;;
        bye) if [ "$arg" = "$last" ]; then last=""; fi ;;
        client)
          reply=ok
          if [ -n "$last" ] && ! kill -0 "$last" 2>/dev/null; then
            echo "[2026-01-01 00:00:00.100 Server  4242] Client {PID: $arg, Context: 1} encountered a fatal GPU error."
            echo "[2026-01-01 00:00:00.100 Server  4242] Server is handling a fatal GPU error."
            reply=busy
          fi
          last=$arg
          echo "$reply" > "$CUDA_MPS_PIPE_DIRECTORY/reply-$arg" ;;
      esac
    done < "$CUDA_MPS_PIPE_DIRECTORY/control"
  done
fi
read -r cmd
echo "$cmd" > "$CUDA_MPS_PIPE_DIRECTORY/control"
)";

// Sourced by a job's processes: `mps_client PID` connects to the stand-in daemon as the process PID and
// prints its answer (ok or busy); `cuda_init PID` is a rank's CUDA start: a refused client prints what
// PyTorch printed on the GPU host and exits 1.
constexpr const char* kMpsClient = R"sh(mps_client() {
  echo "client $1" > "$CUDA_MPS_PIPE_DIRECTORY/control"
  i=0
  while [ ! -s "$CUDA_MPS_PIPE_DIRECTORY/reply-$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
  cat "$CUDA_MPS_PIPE_DIRECTORY/reply-$1"
}
cuda_init() {
  if [ "$(mps_client "$1")" != ok ]; then
    echo "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"
    exit 1
  fi
}
)sh";

// A stand-in torchrun (the host's own may not run): starts --nproc_per_node workers of the command after
// --no_python with RANK, LOCAL_RANK, WORLD_SIZE and TORCHELASTIC_RESTART_COUNT; when one fails it ends
// the others (SIGTERM) and, while --max_restarts allows, restarts the group with torchrun's own line.
constexpr const char* kFakeTorchrun = R"sh(#!/bin/sh
n=1; max=0
while [ $# -gt 0 ]; do
  case "$1" in
    --nproc_per_node=*) n=${1#*=} ;;
    --max_restarts=*) max=${1#*=} ;;
    --no_python) shift; break ;;
  esac
  shift
done
gen=0
while true; do
  pids=""; r=0
  while [ $r -lt $n ]; do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n TORCHELASTIC_RESTART_COUNT=$gen "$@" & pids="$pids $!"; r=$((r+1))
  done
  failed=0; running=$pids
  while [ -n "$running" ] && [ $failed = 0 ]; do
    sleep 0.05; still=""
    for p in $running; do
      if kill -0 $p 2>/dev/null; then still="$still $p"; elif ! wait $p; then failed=1; fi
    done
    running=$still
  done
  if [ $failed = 0 ]; then exit 0; fi
  for p in $pids; do kill -TERM $p 2>/dev/null; done
  wait
  if [ $gen -ge $max ]; then echo "ChildFailedError" >&2; exit 1; fi
  echo "[default] Worker group FAILED. $((max-gen))/$max attempts left; will restart worker group" >&2
  gen=$((gen+1))
done
)sh";

struct SharedGpuHost {
  TempDir dir;
  std::string bin = dir.path + "/fakebin";
  std::string mps_log = dir.path + "/mps.log";
  std::string client = dir.path + "/mps-client.sh";
  SharedGpuHost() {
    fs::create_directories(bin);
    const std::string tool = bin + "/nvidia-cuda-mps-control";
    std::ofstream(tool) << kFakeMps;
    chmod(tool.c_str(), 0755);
    std::ofstream(client) << kMpsClient;
  }
  std::string client_prelude() const { return ". " + client + "; "; }
  void add_torchrun() const {
    const std::string tool = bin + "/torchrun";
    std::ofstream(tool) << kFakeTorchrun;
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

// torchrun restarts its workers inside the job: the restarted generation goes to a daemon of its own
// (the preload reads TORCHELASTIC_RESTART_COUNT), so rank 1, SIGKILLed in generation 0 while it was a
// client, does not poison generation 1, and the run recovers.
TEST(SharedGpu, TorchrunsRestartedWorkersGetAFreshMpsDaemon) {
  if (!file_exists(std::string(NCCLFI_LIB_DIR) + "/libncclfi-preload.so")) GTEST_SKIP() << "no preload built";
  SharedGpuHost host;
  host.add_torchrun();
  json s = two_gpu_job("shared-torchrun-restart",
                       host.client_prelude() +
                           "echo gen=$TORCHELASTIC_RESTART_COUNT rank=$RANK mps=$CUDA_MPS_PIPE_DIRECTORY; "
                           "cuda_init $$; if [ $TORCHELASTIC_RESTART_COUNT = 0 ]; then exec sleep 30; fi; "
                           "echo \"bye $$\" > \"$CUDA_MPS_PIPE_DIRECTORY/control\"; "
                           "echo gen=$TORCHELASTIC_RESTART_COUNT rank=$RANK done");
  s["faults"] = {{{"id", "kill"},
                  {"layer", "proc"},
                  {"kind", "kill"},
                  {"target", {{"ranks", {1}}}},
                  {"trigger", {{"after_ms", 1500}}}}};
  s["launcher"] = {{"kind", "torchrun"}, {"max_restarts", 1}};
  s["deadline_s"] = 60;
  s["expect"] = {{"outcome", "recovered"}};
  const auto r = host.run(s);
  const std::string run = host.run_dir("shared-torchrun-restart");
  const std::string log = read_text(run + "/attempt-0/launcher.log");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << log;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string r_ = std::to_string(rank);
    EXPECT_NE(log.find("gen=0 rank=" + r_ + " mps=/"), std::string::npos) << log;
    EXPECT_NE(log.find("gen=1 rank=" + r_ + " done"), std::string::npos) << log;
  }
  // Generation 1 named its own daemon's pipe directory, which was started and told to quit.
  const auto gen1 = log.find("gen=1 rank=0 mps=");
  ASSERT_NE(gen1, std::string::npos) << log;
  EXPECT_NE(log.find("/g1", gen1), std::string::npos) << log;
  const std::string mps = read_text(host.mps_log);
  EXPECT_NE(mps.find("/g0\n"), std::string::npos) << mps;
  EXPECT_NE(mps.find("/g1\n"), std::string::npos) << mps;
  const json verdict = read_json(run + "/verdict.json");
  EXPECT_EQ(verdict["verdict"], "pass") << verdict["judgement"].dump(2);
  EXPECT_NE(verdict["gpu"]["mps"].get<std::string>().find("one for each of 2 generations"), std::string::npos)
      << verdict["gpu"].dump(2);
}

// A job that relaunches a rank itself, with no restart count to read, stays on the daemon whose client was
// killed: the relaunched rank is refused. That failure is shared-GPU mode's, not the job's: unknown, with
// the MPS server's lines, never fail.
TEST(SharedGpu, AFailureAfterAKillUnderMpsIsUnknownWithTheMpsReason) {
  if (!file_exists(std::string(NCCLFI_LIB_DIR) + "/libncclfi-preload.so")) GTEST_SKIP() << "no preload built";
  SharedGpuHost host;
  // The first launch of rank 0 connects and is SIGKILLed; the relaunch connects to the same daemon.
  const std::string rank = host.client_prelude() + "cuda_init $$; exec sleep 20";
  const std::string relaunch = host.client_prelude() + "cuda_init $$; echo relaunched rank ok";
  json s = two_gpu_job("shared-relaunch-poisoned", "RANK=0 /bin/sh -c '" + rank +
                                                       "' & pid=$!; sleep 0.5; kill -9 $pid; wait; "
                                                       "RANK=0 /bin/sh -c '" +
                                                       relaunch + "'");
  s["launcher"] = {{"kind", "command"}, {"per_rank", false}};
  s["expect"] = {{"outcome", "clean"}};
  const auto r = host.run(s);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // not a pass
  const std::string run = host.run_dir("shared-relaunch-poisoned");
  EXPECT_NE(read_text(run + "/attempt-0/launcher.log").find("busy or unavailable"), std::string::npos);
  const json verdict = read_json(run + "/verdict.json");
  EXPECT_EQ(verdict["verdict"], "unknown") << verdict["judgement"].dump(2);
  bool said = false;
  for (const auto& c : verdict["judgement"]["checks"]) {
    if (c["field"] != "shared_gpu") continue;
    said = true;
    EXPECT_EQ(c["answer"], "unknown");
    const std::string why = c["reason"];
    EXPECT_NE(why.find("shared-GPU mode"), std::string::npos) << why;
    EXPECT_NE(why.find("Server is handling a fatal GPU error."), std::string::npos) << why;
  }
  EXPECT_TRUE(said) << verdict["judgement"].dump(2);
}

}  // namespace
}  // namespace ncclfi::e2e
