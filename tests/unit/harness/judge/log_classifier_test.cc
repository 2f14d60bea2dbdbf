// Every built-in classifier against the exact lines of docs/failure-signatures.md (and nccl-tests'
// printf formats), plus lines that must not match.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "history_builder.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {

struct Case {
  const char* line;
  LineKind kind;
  const char* mechanism;  // detection mechanism or evidence label; "" for restarts
};

class BuiltinClassifier : public ::testing::TestWithParam<Case> {};

TEST_P(BuiltinClassifier, ClassifiesLine) {
  static const LogClassifier c = LogClassifier::builtin();
  const auto& p = GetParam();
  auto m = c.classify(p.line);
  ASSERT_TRUE(m.has_value()) << p.line;
  EXPECT_EQ(m->pattern->kind, p.kind) << p.line << " matched " << m->pattern->name;
  EXPECT_EQ(m->pattern->mechanism, p.mechanism) << p.line << " matched " << m->pattern->name;
}

using K = LineKind;
INSTANTIATE_TEST_SUITE_P(
    FailureSignatures, BuiltinClassifier,
    ::testing::Values(
        // 2.2 step 1 (as observed on the GPU host and in the linked issues)
        Case{"[rank0]:[E1130 12:00:00.000000 1234 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught "
             "collective "
             "operation timeout: WorkNCCL(SeqNum=11, OpType=ALLREDUCE, NumelIn=1000, NumelOut=1000, "
             "Timeout(ms)=10000) ran for 10069 milliseconds before timing out.",
             K::kDetection, "torch_watchdog"},
        // step 2
        Case{"[PG ID 0 PG GUID 0(default_pg) Rank 1] failure detected by watchdog at work sequence id: 11 PG "
             "status: last enqueued work: 11, last completed work: 10",
             K::kDetection, "torch_watchdog"},
        // step 3, 5, 6
        Case{"Observed flight recorder dump signal from another rank via TCPStore.", K::kEvidence,
             "torch_dump"},
        // the watchdog's handling of the failure: its own line in every release since 1.8
        Case{"Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, "
             "subsequent GPU operations might run on corrupted/incomplete data.",
             K::kDetection, "torch_watchdog"},
        Case{"To avoid data inconsistency, we are taking the entire process down.", K::kEvidence,
             "torch_teardown"},
        Case{"terminate called after throwing an instance of 'c10::DistBackendError'", K::kEvidence,
             "torch_teardown"},
        // step 7
        Case{"[Rank 1] NCCL error: remote process exited or there was a network error", K::kDetection,
             "async_error"},
        Case{"NET/Socket : remote process exited or there was a network error", K::kDetection, "async_error"},
        // step 8 and the older heartbeat wording
        Case{"[rank0]:[F1130 12:00:00] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL's watchdog got stuck for "
             "480 "
             "seconds without making progress in monitoring enqueued collectives.",
             K::kDetection, "torch_heartbeat"},
        Case{"Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog "
             "hang.",
             K::kDetection, "torch_heartbeat"},
        Case{"[rank1]:[F1201 18:21:56.938416142 ProcessGroupNCCL.cpp:1653] [PG ID 0 PG GUID 0(default_pg) "
             "Rank 1] "
             "[PG ID 0 PG GUID 0(default_pg) Rank 1] Terminating the process after attempting to dump debug "
             "info, "
             "due to collective timeout or exception.",
             K::kDetection, "torch_heartbeat"},
        Case{"[Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info.",
             K::kDetection, "torch_heartbeat"},
        // 2.3: after an abort
        Case{"NCCL communicator was aborted on rank 3.", K::kEvidence, "nccl_comm_aborted"},
        // 2.3 / 2.5 torchrun
        Case{"E1130 12:01:10.000 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -6) "
             "local_rank: 0 (pid: 4242) of binary: /usr/bin/python3",
             K::kDetection, "launcher_teardown"},
        Case{"torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", K::kDetection,
             "launcher_teardown"},
        Case{"[default] Worker group FAILED. 3/3 attempts left; will restart worker group", K::kRestart, ""},
        // 3.4 NCCL error codes and text; PyTorch's and nccl-tests' wrappers
        Case{"torch.distributed.DistBackendError: NCCL error in: "
             "../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
             "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9",
             K::kDetection, "api_error"},
        Case{"host1: Test NCCL failure common.cu:1005 'unhandled system error (run with NCCL_DEBUG=INFO for "
             "details)'",
             K::kDetection, "api_error"},
        Case{"ncclfi-workload: ncclAllReduce failed: ncclSystemError", K::kDetection, "api_error"},
        Case{"call returned ncclInternalError", K::kDetection, "api_error"},
        Case{"internal error - please report this issue to the NCCL developers", K::kDetection, "api_error"},
        Case{"NCCL error: unhandled cuda error", K::kDetection, "api_error"},
        // 8: CUDA refusing the GPU (what PyTorch printed for a worker restarted onto a poisoned MPS
        // server; the runtime's and the driver's names of the code)
        Case{"RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", K::kEvidence,
             "cuda_unavailable"},
        Case{"cudaSetDevice(0): cudaErrorDevicesUnavailable", K::kEvidence, "cuda_unavailable"},
        Case{"CUDA_ERROR_MPS_SERVER_NOT_READY", K::kEvidence, "cuda_unavailable"},
        // NCCL WARN lines are evidence, not detections, unless they say that a request of the transport
        // failed: then NCCL reports ncclRemoteError asynchronously, and the line is that moment
        Case{"host1:1234:1300 [0] NCCL INFO x\thost1:1234:1300 [0] NCCL WARN socketProgress: Connection "
             "closed by "
             "remote peer host2<54321>",
             K::kDetection, "async_error"},
        Case{"host1:1234:1300 [1] NCCL WARN NET/IB: Got completion from peer 10.0.0.2<1234> with "
             "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) reqSize=0 vendor_err=129 req_type=Send "
             "hca "
             "mlx5_0",
             K::kDetection, "async_error"},
        Case{"host1:1234:1300 [1] NCCL WARN NET/IB : Got async event : port error", K::kEvidence,
             "ib_port_event"},
        Case{"host1:1234:1300 [1] NCCL WARN Bootstrap : no socket interface found", K::kEvidence,
             "nccl_warn"},
        // nccl-tests
        Case{"gpu-host-7: Test timeout (5s) common.cu:412", K::kDetection, "nccl_tests_timeout"},
        Case{"# Out of bounds values : 12 FAILED", K::kDetection, "verification"},
        Case{"     8388608       2097152     float     sum      -1   1234.5    6.80   12.74      3   1230.1  "
             "  6.82   "
             "12.79      0",
             K::kDetection, "verification"},
        Case{"     8388608       2097152     float     sum      -1   1234.5    6.80   12.74      0   1230.1  "
             "  6.82   "
             "12.79      5",
             K::kDetection, "verification"},
        // Open MPI
        Case{"mpirun noticed that process rank 1 with PID 777 on node host1 exited on signal 9 (Killed).",
             K::kDetection, "launcher_teardown"},
        Case{"mpirun detected that one or more processes exited with non-zero status, thus causing",
             K::kDetection, "launcher_teardown"},
        // Slurm (srun 22.05, seen in scenarios/slurm/srun-kill-rank.json's launcher log)
        Case{"srun: error: vm: task 3: Killed", K::kEvidence, "srun_report"},
        Case{"srun: error: vm: tasks 0-2: Exited with exit code 2", K::kEvidence, "srun_report"}));

TEST(BuiltinClassifierNegative, OrdinaryLinesMatchNothing) {
  const LogClassifier c = LogClassifier::builtin();
  for (const char* line :
       {"# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 12.7532",
        "     8388608       2097152     float     sum      -1   1234.5    6.80   12.74      0   1230.1    "
        "6.82   "
        "12.79      0",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
        "algbw   busbw "
        "#wrong",
        "host1:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", "step 10 loss 0.123",
        "ncclfi-cpu-ring: iteration 50 ok", "Stopping workers... Timeout = 30 sec."}) {
    auto m = c.classify(line);
    EXPECT_FALSE(m.has_value()) << line << " matched " << (m ? m->pattern->name : "");
  }
}

TEST(ScenarioPatterns, TriedBeforeBuiltinsInOrder) {
  LogClassifier c = LogClassifier::builtin();
  c.add_pattern("ras", "NCCL WARN .*custom", "scenario:0");
  c.add_pattern("verification", "custom", "scenario:1");
  auto m = c.classify("host NCCL WARN something custom");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pattern->name, "scenario:0");
  EXPECT_EQ(m->pattern->mechanism, "ras");
  m = c.classify("a custom line");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pattern->name, "scenario:1");
}

TEST(ScenarioPatterns, BadRegexAndUnknownMechanismAreRejected) {
  LogClassifier c;
  EXPECT_THROW(c.add_pattern("api_error", "([unclosed", "scenario:0"), std::invalid_argument);
  EXPECT_THROW(c.add_pattern("telepathy", "x", "scenario:1"), std::invalid_argument);
  try {
    c.add_pattern("api_error", "(", "scenario:7");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scenario:7"), std::string::npos);
  }
}

TEST(ObserveLogLine, DetectionEvidenceAndRestartUpdateHistory) {
  const LogClassifier c = LogClassifier::builtin();
  History h;
  OutputLine l{testing::at(3), 1, 0, "stderr", "[Rank 1] Watchdog caught collective operation timeout: x"};
  ASSERT_TRUE(observe_log_line(h, c, l));
  ASSERT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.detections[0].mechanism, "torch_watchdog");
  EXPECT_EQ(h.detections[0].rank, 1);
  EXPECT_EQ(h.detections[0].ts_ns, testing::at(3));
  EXPECT_EQ(h.events.back().source, "log");
  EXPECT_EQ(h.events.back().event, "detection");

  l.text = "h:1:1 [0] NCCL WARN Cuda failure 2 'out of memory'";
  ASSERT_TRUE(observe_log_line(h, c, l));
  EXPECT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.events.back().event, "log_evidence");

  l.text = "[default] Worker group FAILED. 2/3 attempts left; will restart worker group";
  ASSERT_TRUE(observe_log_line(h, c, l));
  EXPECT_EQ(h.torchrun_restarts, 1);
  EXPECT_EQ(h.events.back().event, "restart");

  l.text = "plain output";
  EXPECT_FALSE(observe_log_line(h, c, l));
  EXPECT_EQ(h.events.size(), 3u);
}

TEST(ObserveLogLine, ADetectionKeepsTheHarnessMonotonicTime) {
  // The judge measures detection times on the monotonic clock when the injection and the detection
  // carry it from one host: a log-line detection must carry the time the harness read it.
  History h;
  OutputLine l{
      testing::at(3), 0,       0, "stderr", "[Rank 0] Watchdog caught collective operation timeout: x",
      123'456'789,    "node-a"};
  ASSERT_TRUE(observe_log_line(h, LogClassifier::builtin(), l));
  ASSERT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.detections[0].mono_ns, 123'456'789);
  EXPECT_EQ(h.detections[0].host, "node-a");
  EXPECT_EQ(h.events.back().mono_ns, 123'456'789);
}

TEST(ObserveLogFile, UsesStampsWhenPresent) {
  auto path = testing::scratch_root() / "stamped.log";
  std::ofstream(path) << "hello\n@" << testing::at(7) << " host: Test timeout (5s) common.cu:1\n"
                      << "# Out of bounds values : 3 FAILED\n";
  History h;
  EXPECT_EQ(observe_log_file(h, LogClassifier::builtin(), path.string(), 0, 1, testing::at(9)), 3u);
  ASSERT_EQ(h.detections.size(), 2u);
  EXPECT_EQ(h.detections[0].mechanism, "nccl_tests_timeout");
  EXPECT_EQ(h.detections[0].ts_ns, testing::at(7));
  EXPECT_EQ(h.detections[0].attempt, 1);
  EXPECT_EQ(h.detections[1].ts_ns, testing::at(9));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ncclfi::harness
