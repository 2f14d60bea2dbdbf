// The signature catalogue (harness/model/signatures/ and the mechanisms' own lines): every entry is
// complete, classifies its own example, and, family by family, recognises the lines real software
// printed (in each release's format, quoted from the public reports each entry cites) while ordinary
// lines near them match nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "history_builder.h"
#include "judge.h"
#include "mechanisms.h"
#include "ncclfi_net/ib_completion_lines.h"
#include "observe.h"
#include "signature_family.h"

namespace ncclfi::harness {
namespace {

std::set<std::string> split_sites(std::string_view sites) {
  std::set<std::string> out;
  std::string one;
  std::istringstream in{std::string(sites)};
  while (std::getline(in, one, ',')) out.insert(one);
  return out;
}

TEST(SignatureCatalogue, EveryEntryIsCompleteAndSaysWhereItComesFrom) {
  std::set<std::string_view> ids;
  const auto& sites = signature_sites();
  for (const CatalogueEntry& entry : signature_catalogue()) {
    const SignatureLine& line = *entry.line;
    SCOPED_TRACE(std::string(line.id));
    EXPECT_TRUE(ids.insert(line.id).second) << "two lines with this id";
    EXPECT_EQ(LineRegex::check(line.regex), std::nullopt);
    EXPECT_FALSE(line.shown.empty());
    ASSERT_FALSE(line.example.empty());
    EXPECT_NE(line.example.find(line.must_contain), std::string_view::npos)
        << "the example lacks the literal";
    for (const std::string& site : split_sites(line.site))
      EXPECT_NE(std::find(sites.begin(), sites.end(), site), sites.end()) << "unknown site " << site;
    if (entry.role == SignatureRole::kDetection) {
      EXPECT_TRUE(is_known_mechanism(entry.label)) << entry.label;
    }
    if (entry.role == SignatureRole::kEvidence) {
      EXPECT_FALSE(entry.label.empty());
    }
  }
  // A family's line always says where its format comes from, the releases, the meaning and who prints it.
  size_t family_lines = 0;
  for (const SignatureFamily* family : signature_families()) {
    EXPECT_FALSE(family->title.empty()) << family->name;
    for (const SignatureLine& line : family->lines) {
      SCOPED_TRACE(std::string(line.id));
      EXPECT_FALSE(line.versions.empty());
      EXPECT_FALSE(line.cited.empty());
      EXPECT_FALSE(line.meaning.empty());
      EXPECT_FALSE(line.printed_by.empty());
      ++family_lines;
    }
  }
  EXPECT_GE(family_lines, 25U);
}

// Each entry's example is classified as that entry: a line that an earlier one shadows fails here.
TEST(SignatureCatalogue, EveryExampleIsClassifiedAsItsOwnEntry) {
  const LogClassifier classifier = LogClassifier::builtin();
  for (const CatalogueEntry& entry : signature_catalogue()) {
    const auto match = classifier.classify(entry.line->example);
    ASSERT_TRUE(match.has_value()) << entry.line->id << ": " << entry.line->example;
    EXPECT_EQ(match->pattern->name, entry.line->id) << entry.line->example;
    EXPECT_EQ(match->pattern->mechanism, entry.label) << entry.line->id;
  }
}

struct RealLine {
  const char* line;
  const char* id;  // the entry it must be classified as
};

// Lines as users pasted them (the reference says where), or, where no paste was found, as the format of
// that release prints them (marked "format").
const RealLine kRealLines[] = {
    // NCCL's IB transport, every wording since 2.3
    {"NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",  // NVIDIA/nccl#902
     "nccl.ib_completion_error"},
    {"transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 4, opcode 1, len 21938, vendor "
     "err 81",
     "nccl.ib_completion_error"},  // NVIDIA/nccl#214
    {"kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> "
     "with "
     "error 4, opcode 5327, len 5327, vendor err 81 (Send)",  // NVIDIA/nccl-tests#252
     "nccl.ib_completion_error_from_peer"},
    {"n1:1:2 [0] transport/net_ib.cc:1129 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<41522> with "
     "error "
     "12, opcode 0, len 0, vendor err 129",  // format, 2.10 to 2.17
     "nccl.ib_completion_error_from_peer"},
    {"hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
     "172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid "
     "::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221",  // NVIDIA/nccl#1814
     "nccl.ib_completion_status"},
    {"n1:1:2 [0] transport/net_ib.cc:2143 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<5000> with "
     "status=12 opcode=1 len=0 vendor err 129 (Send) hca mlx5_1",  // format, 2.22 to 2.28.3
     "nccl.ib_completion_status"},
    {"n1:1:2 [0] transport/net_ib.cc:3189 NCCL WARN NET/IB/GIN: Got completion from peer 10.0.0.2<5000> with "
     "status=12 opcode=1 len=0 vendor err 129 (Send) hca mlx5_1",  // format, GIN in 2.28.7 to 2.28.9
     "nccl.ib_completion_status"},
    {"n1:1:2 [0] transport/net_ib.cc:2543 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<5000> with "
     "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RDMA_WRITE(1) reqSize=65536 vendor_err=129 req_type=Send "
     "hca mlx5_1",  // format, 2.28.7 to 2.28.9
     "nccl.ib_completion_named"},
    {"n1:1:2 [0] transport/net_ib/p2p.cc:310 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<5000> with "
     "status=IBV_WC_LOC_PROT_ERR(4) opcode=IBV_WC_RECV(128) vendor_err=81  hca mlx5_0",  // format, 2.29 on
     "nccl.ib_completion_named"},
    {"n1:1:2 [0] transport/net_ib.cc:219 NCCL WARN NET/IB : mlx5_0:1 async fatal event on QP (0x55d0): "
     "local work queue catastrophic error",  // format, 2.23.4 on
     "nccl.ib_async_fatal"},
    // NCCL's sockets
    {"[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>",
     "nccl.socket_closed_by_peer"},  // NVIDIA/nccl#1612
    {"gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote "
     "peer "
     "gpu004.ds-a4-r02.abc.com<55693>",  // NVIDIA/nccl-tests#166
     "nccl.socket_closed_by_peer"},
    {"n2:5:6 [1] misc/socket.cc:523 NCCL WARN Net : Connection closed by remote peer 10.1.0.3<40122>",
     "nccl.net_closed_by_peer"},  // format, 2.10 to 2.15
    {"n2:5:6 [1] NCCL WARN Net : Connection closed by remote peer", "nccl.net_closed_by_peer"},  // 2.4 to 2.9
    {"socketProgressOpt: Call to recv from 10.119.24.53<49901> failed : Broken pipe",  // LlamaFactory#6849
     "nccl.socket_call_failed"},
    {"n2:5:6 [1] misc/socket.cc:65 NCCL WARN socketProgressOpt: Call to send to 10.0.0.2<4000> failed : "
     "Connection timed out",  // format, 2.24 to 2.28.9
     "nccl.socket_call_failed"},
    {"n2:5:6 [1] os/linux.cc:402 NCCL WARN ncclOsSocketProgressOpt: Call to recv from 10.0.0.2<4000> failed "
     ": "
     "No route to host",  // format, 2.29 on
     "nccl.socket_call_failed"},
    {"n2:5:6 [1] misc/socket.cc:503 NCCL WARN Net : Call to recv from 10.1.0.3<40122> failed : Connection "
     "reset "
     "by peer",  // format, 2.10 to 2.15
     "nccl.net_call_failed"},
    {"n2:5:6 [1] NCCL WARN Call to recv failed : Connection reset by peer",
     "nccl.net_call_failed"},  // 2.4 to 2.9
    {"ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> "
     "failed : "
     "Software caused connection abort",  // NVIDIA/nccl-tests#166
     "nccl.socket_connect_failed"},
    {"n2:5:6 [1] misc/socket.cc:601 NCCL WARN socketPollConnect: exceeded retries (34)",  // format, 2.16
                                                                                          // to 2.23
     "nccl.socket_connect_failed"},
    {"n2:5:6 [1] misc/socket.cc:640 NCCL WARN socketPollConnect: connect returned Connection refused, "
     "exceeded "
     "error retry count (35)",  // format, 2.24 to 2.26
     "nccl.socket_connect_failed"},
    {"n2:5:6 [1] misc/socket.cc:655 NCCL WARN socketPollConnect: connect to 192.0.2.2<39811> returned "
     "Connection "
     "refused, exceeded error retry count after 35 attempts",  // as the GPU host printed it
                                                               // (failure-signatures.md)
     "nccl.socket_connect_failed"},
    {"n2:5:6 [1] os/linux.cc:211 NCCL WARN ncclOsSocketPollConnect to 10.0.0.2<4000> failed with error "
     "Connection refused",  // format, 2.29 on
     "nccl.socket_connect_failed"},
    {"n1:4:4 [0] transport/net_socket.cc:266 NCCL WARN NET/Socket : socket progress error",
     "nccl.net_socket_progress_error"},
    // The libfabric plugin
    {"ip-10-0-0-1:77:88 [0] NCCL WARN NET/OFI Request completed with error. RC: 21. Error: unknown error",
     "ofi.request_completed_with_error"},  // aws/aws-ofi-nccl#161 (its title)
    {"n1:77:88 [0] NCCL WARN NET/OFI Request 0x7f5c38001c10 completed with error. RC: 5. Error: unknown "
     "error. "
     "Completed length: 0, Request: { buffer_index: 0, dev: 0, size: 0, state: CREATED, direction: SEND }",
     "ofi.request_completed_with_error"},  // format, 1.3 to 1.9
    {"n1:77:88 [0] NCCL WARN NET/OFI Request 0x7f5c38001c10 seq 42 completed with error. RC: 5. Error: 13 "
     "(Unresponsive remote (was previously responsive)). Completed length: 0, Request: { }",  // format, 1.17,
                                                                                              // rdma
     "ofi.request_completed_with_error"},
    {"n1:77:88 [0] NCCL WARN NET/OFI Request 0x7f5c38001c10 (RECV) completed with error: err: 5, flags: 0, "
     "prov_errno: 15, strerror: Unreachable remote - never received a response, len: 0",  // format, 1.21
     "ofi.request_completed_with_error"},
    {"n1:77:88 [0] NCCL WARN NET/OFI Request 0x7f5c38001c10 completed with error. RC: 5. Flags: 0. Error: 2 "
     "(UNDELIVERABLE). Completed length: 0, Request: { }",  // format, 1.19 on Slingshot (CXI)
     "ofi.request_completed_with_error"},
    // PyTorch's watchdog, every wording
    {"[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=96120, "
     "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25624887 milliseconds before timing out.",  // pytorch#118369
     "torch.watchdog_timeout"},
    {"[rank7]:[E126 01:17:58.183429932 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught collective "
     "operation "
     "timeout: WorkNCCL(SeqNum=14217, OpType=ALLGATHER, NumelIn=65536, NumelOut=524288, Timeout(ms)=600000) "
     "ran "
     "for 600002 milliseconds before timing out.",  // open_clip#1024, PyTorch 2.5.1
     "torch.watchdog_timeout"},
    {"[PG ID 0 PG GUID 0(default_pg) Rank 7] Exception (either an error or timeout) detected by watchdog at "
     "work: "
     "14217, last enqueued NCCL work: 14221, last completed NCCL work: 14216.",  // open_clip#1024
     "torch.watchdog_exception"},
    {"[rank3]:[E710 18:00:32.426302794 ProcessGroupNCCL.cpp:2395] [PG ID 0 PG GUID 0(default_pg) Rank 3]  "
     "failure "
     "detected by watchdog at work sequence id: 59958 PG status: last enqueued work: 59998, last completed "
     "work: "
     "59957",
     "torch.watchdog_failure"},
    {"[rank1]:[E ProcessGroupNCCL.cpp:577] [Rank 1] Some NCCL operations have failed or timed out. Due to "
     "the "
     "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
     "torch.watchdog_some_failed"},  // vllm#6042
    {"[E ProcessGroupNCCL.cpp:537] Some NCCL operations have failed or timed out. Due to the asynchronous "
     "nature "
     "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",  // older, no [Rank
                                                                                            // N]
     "torch.watchdog_some_failed"},
    {"[rank1]:[E ProcessGroupNCCL.cpp:583] [Rank 1] To avoid data inconsistency, we are taking the entire "
     "process "
     "down.",  // vllm#6042
     "torch.teardown"},
    {"[rank5]:[E207 19:37:09.983600771 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 5] "
     "Process "
     "group watchdog thread terminated with exception: NCCL error: remote process exited or there was a "
     "network "
     "error, NCCL version 2.21.5",  // LlamaFactory#6849
     "nccl.remote_error_async"},
    // NCCL's RAS
    {"  1 job process is considered dead (unreachable via the RAS network)", "ras.dead_processes"},
    {"  2 job processes are considered dead (unreachable via the RAS network)", "ras.dead_processes"},
    {"  Missing communicator data from 1 job process", "ras.missing_data"},
    {"  Missing communicator data from 3 ranks", "ras.missing_data"},
    {"  Asynchronous errors on 2 ranks", "ras.rank_errors"},
    {"n1:1:9 [0] NCCL INFO RAS declaring peer 10.0.0.3<28028> as DEAD; rasDeadPeersHash 0x1f",
     "ras.declaring_dead"},
    // The kernel's log
    {"NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus",
     "kernel.xid_fallen_off_bus"},  // NVSentinel#155
    {"[24128.834365] NVRM: Xid (PCI:0000:01:00): 31, Ch 00000003, engmask 00000101, intr 10000000",  // Bumblebee#677
     "kernel.xid"},
    {"[ 812.1] NVRM: Xid (PCI:0000:ca:00): 74, pid=3101, name=python3, NVLink: fatal error detected on link "
     "11",
     "kernel.xid_nvlink"},
    {"Feb 14 05:03:41 gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN",
     "kernel.mlx5_link_down"},
    {"[ 9021.5] mlx5_core 0000:ab:00.0 ens8np0: Link down", "kernel.mlx5_link_down"},
    // Launchers
    {"slurmstepd: error: *** STEP 4242.0 ON node2 CANCELLED AT 2026-12-02T10:00:00 DUE TO TIME LIMIT ***",
     "slurm.step_cancelled"},
    {"slurmstepd: error: *** JOB 4242 CANCELLED AT 2026-12-02T10:00:00 DUE TO NODE FAILURE ***",
     "slurm.step_cancelled"},
};

class RealLines : public ::testing::TestWithParam<RealLine> {};

TEST_P(RealLines, AreClassifiedAsTheirEntry) {
  static const LogClassifier classifier = LogClassifier::builtin();
  const RealLine& p = GetParam();
  const auto match = classifier.classify(p.line);
  ASSERT_TRUE(match.has_value()) << p.line;
  EXPECT_EQ(match->pattern->name, p.id) << p.line;
}

INSTANTIATE_TEST_SUITE_P(Families, RealLines, ::testing::ValuesIn(kRealLines));

// Lines that sit next to the failures above in the same logs and mean nothing went wrong.
TEST(SignatureCatalogue, NeighbouringLinesMatchNothing) {
  const LogClassifier classifier = LogClassifier::builtin();
  for (const char* line :
       {// NCCL's TRACE of a successful completion, its IB and socket INFO lines
        "n1:1:2 [0] NCCL TRACE Got completion from peer 10.0.0.2<5000> with status=0 opcode=0 len=4 wr_id=1 "
        "r=0x1 type=1 events={0,0,0,0}, i=0",
        "n1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>",
        "n1:1:1 [0] NCCL INFO RAS connection from peer 10.0.0.3<28028> that is considered dead!",
        "n1:1:1 [0] NCCL INFO NET/OFI Using Libfabric version 1.21",
        // the kernel: a port that comes up, a driver that loads
        "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE", "mlx5_core 0000:ab:00.0 ens8np0: Link up",
        "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build",
        // an ssh session ending, torchrun's agent at work, a RAS report with nothing wrong
        "kex_exchange_identification: Connection closed by remote host", "[default] Worker group RUNNING",
        "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
        "  Rank 0 has launched up to operation 33 -- GPU 0 managed by process 10170 on node 192.0.2.2"}) {
    const auto match = classifier.classify(line);
    EXPECT_FALSE(match.has_value()) << line << " matched " << (match ? match->pattern->name : "");
  }
  // A connect NCCL will retry is evidence (a root not listening yet, or one this rank cannot reach: how
  // many retries tell), never a failure by itself.
  const auto retry = classifier.classify(
      "n1:1:1 [0] NCCL INFO socketPollConnect: connect to 10.0.0.2<4000> returned Connection refused, "
      "retrying (1/34) after sleep for 100 msec");
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->pattern->name, "nccl.socket_connect_retry");
  EXPECT_EQ(retry->pattern->kind, LineKind::kEvidence);
  // 2.24 to 2.26 print the same line without the address (src/misc/socket.cc, socketConnectCheck).
  const auto older = classifier.classify(
      "n1:1:1 [0] NCCL INFO socketStartConnect: connect returned Connection refused, retrying (2/34) after "
      "sleep for 200 msec");
  ASSERT_TRUE(older.has_value());
  EXPECT_EQ(older->pattern->name, "nccl.socket_connect_retry");
}

// NCCL's IB port failover (NCCL_IB_RESILIENCY_PORT_FAILOVER=1, 2.29.7 and later): the lines of a failover
// that happened are evidence of a recovery (`ib_port_failover`), never a detection, in each release's
// wording (2.29.7 to 2.30.4 put the function's name after `NET/IB: `; 2.29.7's device line is shorter); the
// lines of one that could not happen are async_error detections; the INFO lines around them are nothing.
TEST(SignatureCatalogue, IbPortFailoverLinesAreARecoveryAndItsFailureADetection) {
  const LogClassifier classifier = LogClassifier::builtin();
  const std::pair<const char*, const char*> lines[] = {
      {"n1:1:2 [0] transport/net_ib/p2p_resiliency.cc:312 NCCL WARN NET/IB: "
       "ncclIbResiliencyHandleDeviceFailure: "
       "Device 1 marked as failed. (recv comm=0x55d0c2a4e000)",
       "nccl.ib_port_failover_device_failed"},  // 2.29.7
      {"n1:1:2 [0] transport/net_ib/p2p_resiliency.cc:325 NCCL WARN NET/IB: "
       "ncclIbResiliencyHandleDeviceFailure: "
       "Device 0 marked as failed. Initiating recovery? No (send comm=0x55d0c2a4e000, outstandingRecovery=0)",
       "nccl.ib_port_failover_device_failed"},  // 2.30.3
      {"n1:1:2 [0] NCCL INFO NET/IB: ncclIbResiliencyReplaceQps: Replacing QP: qpIndex=2 (qp_num=300, "
       "devIndex=0) to qpIndex=3 (qp_num=301, devIndex=1) on recv communicator (comm=0x55d0c2a4e000)",
       "nccl.ib_port_failover_qp_replaced"},
      {"n1:1:2 [0] transport/net_ib/p2p_resiliency.cc:50 NCCL WARN NET/IB: "
       "ncclIbResiliencyCheckErrorNotFatal: "
       "The error is fatal (Fatal error status in work completion). Cannot continue.",
       "nccl.ib_port_failover_fatal"},  // 2.29.7
      {"n1:1:2 [0] transport/net_ib/p2p_resiliency.cc:47 (ncclIbResiliencyCheckErrorNotFatal) NCCL WARN "
       "NET/IB: "
       "Fatal error. Detected 2 failed devices out of 2 devices on the send communicator "
       "(comm=0x55d0c2a4e000). "
       "No support for more than a single failed device.",
       "nccl.ib_port_failover_fatal"}};  // 2.30.7
  for (const auto& [line, id] : lines) {
    const auto match = classifier.classify(line);
    ASSERT_TRUE(match.has_value()) << line;
    EXPECT_EQ(match->pattern->name, id) << line;
  }
  const auto evidence = classifier.classify(lines[0].first);
  EXPECT_EQ(evidence->pattern->kind, LineKind::kEvidence);
  EXPECT_EQ(evidence->pattern->mechanism, "ib_port_failover");
  EXPECT_EQ(evidence->pattern->site, "nic");
  const auto fatal = classifier.classify(lines[3].first);
  EXPECT_EQ(fatal->pattern->kind, LineKind::kDetection);
  EXPECT_EQ(fatal->pattern->mechanism, "async_error");
  for (const char* line :
       {"n1:1:2 [0] NCCL INFO NET/IB: ncclIbResiliencyCheckErrorNotFatal: The error is not fatal. Trying to "
        "continue...",
        "n1:1:2 [0] NCCL INFO NET/IB: ncclIbResiliencyHandleDeviceFailure: Device 0 was already marked as "
        "failed.",
        "n1:1:2 [0] NCCL INFO NET/IB: ncclIbResiliencyInit: Resiliency is disabled on the send communicator "
        "(comm=0x55d0c2a4e000)"}) {
    const auto match = classifier.classify(line);
    EXPECT_FALSE(match.has_value()) << line << " matched " << (match ? match->pattern->name : "");
  }
}

// The net shim's IB persona writes NCCL's IB completion-error lines (ib_completion_lines.h): each
// release's line, printed as NCCL's logger prints it, is classified exactly as the real line of that
// release, and a real line of each era is classified as the entry the shim's line gets.
std::string as_nccl_prints(const net::NcclLogLine& line) {
  if (!line.warn) return "n1:11:12 [0] NCCL INFO " + line.text;
  return "n1:11:12 [0] " + line.file + ":" + std::to_string(line.line) + " NCCL WARN " + line.text;
}

struct ShimEra {
  net::NcclVersion version;
  const char* real_line;  // a real line of that release (kRealLines' or a user's paste)
};

TEST(SignatureCatalogue, TheNetShimsIbLinesClassifyAsTheRealOnes) {
  const ShimEra eras[] = {
      {{2, 9, 9}, "NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129"},
      {{2, 12, 12},
       "n1:1:2 [0] transport/net_ib.cc:1129 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<41522> with "
       "error 12, opcode 0, len 0, vendor err 129"},
      {{2, 18, 1},  // a user's paste of 2.18.1 (the line break of the paste removed)
       "node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer "
       "10.2.0.5<33092> with error 12, opcode 0, len 0, vendor err 129 (Recv)"},
      {{2, 21, 5},
       "hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
       "172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv)"},
      {{2, 27, 7},
       "n1:1:2 [0] transport/net_ib.cc:2143 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<5000> with "
       "status=12 opcode=1 len=0 vendor err 129 (Send) hca mlx5_1"},
      {{2, 28, 9},
       "n1:1:2 [0] transport/net_ib.cc:2543 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<5000> with "
       "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RDMA_WRITE(1) reqSize=65536 vendor_err=129 "
       "req_type=Send hca mlx5_1"},
      {{2, 30, 7},
       "n1:1:2 [0] transport/net_ib/p2p.cc:310 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<5000> "
       "with "
       "status=IBV_WC_LOC_PROT_ERR(4) opcode=IBV_WC_RECV(128) vendor_err=81  hca mlx5_0"},
  };
  const LogClassifier classifier = LogClassifier::builtin();
  for (const ShimEra& era : eras) {
    for (const bool send : {true, false}) {
      net::IbCompletionFailure failure;
      failure.peer = net::nccl_socket_string("10.0.0.2", 48123);
      failure.send = send;
      failure.bytes = 65536;
      for (const net::NcclLogLine& line : net::ib_completion_error_lines(era.version, failure)) {
        const std::string printed = as_nccl_prints(line);
        SCOPED_TRACE(printed);
        const auto shim = classifier.classify(printed);
        if (line.text.find("Got completion") == std::string::npos) {
          // The lines around it (2.29.7's "Got CQE with error", 2.30.7's HINTs) are not the failure's
          // evidence: they must not be taken for another failure either.
          if (shim) {
            EXPECT_EQ(shim->pattern->name.rfind("nccl.ib_", 0), std::string::npos) << shim->pattern->name;
          }
          continue;
        }
        const auto real = classifier.classify(era.real_line);
        ASSERT_TRUE(real.has_value()) << era.real_line;
        ASSERT_TRUE(shim.has_value());
        EXPECT_EQ(shim->pattern->name, real->pattern->name);
        EXPECT_EQ(shim->pattern->mechanism, real->pattern->mechanism);
        EXPECT_EQ(shim->pattern->mechanism, "async_error");
      }
    }
  }
}

// The port error the shim writes on the host of a dead NIC: NCCL's async-event WARN of each era, exactly,
// and the catalogue's line for it (evidence on that host, pointing at the NIC).
TEST(SignatureCatalogue, TheNetShimsPortErrorLineIsNcclsAsyncEventWarn) {
  const struct {
    net::NcclVersion version;
    const char* printed;
  } eras[] = {
      {{2, 18, 1}, "n1:11:12 [0] transport/net_ib.cc:95 NCCL WARN NET/IB : Got async event : port error"},
      {{2, 21, 5},
       "n1:11:12 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_3:1 Got async event : port error"},
      {{2, 28, 3},
       "n1:11:12 [0] transport/net_ib.cc:212 NCCL WARN NET/IB : mlx5_3:1 Got async error event: port error"},
      {{2, 28, 9},
       "n1:11:12 [0] transport/net_ib.cc:253 NCCL WARN NET/IB : mlx5_3:1 Got non-fatal async event: port "
       "error(10)"},
      {{2, 30, 7},
       "n1:11:12 [0] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_3:1 Got non-fatal async event: "
       "port error(10)"},
  };
  const LogClassifier classifier = LogClassifier::builtin();
  for (const auto& era : eras) {
    const auto lines = net::ib_port_error_lines(era.version, "mlx5_3", 1);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(as_nccl_prints(lines[0]), era.printed);
    const auto c = classifier.classify(era.printed);
    ASSERT_TRUE(c.has_value()) << era.printed;
    EXPECT_EQ(c->pattern->name, "nccl.ib_async_event");
  }
  // A fatal event stays the fatal line's.
  const auto fatal = classifier.classify(
      "n1:1:2 [0] transport/net_ib.cc:219 NCCL WARN NET/IB : mlx5_0:1 async fatal event on QP (0x55d0): "
      "local "
      "work queue catastrophic error");
  ASSERT_TRUE(fatal.has_value());
  EXPECT_EQ(fatal->pattern->name, "nccl.ib_async_fatal");
}

TEST(SignatureCatalogue, TheDocsHoldTheGeneratedCatalogue) {
  std::ifstream in(NCCLFI_SOURCE_DIR "/docs/failure-signatures.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string catalogue = signature_catalogue_markdown();
  EXPECT_NE(text.str().find(catalogue), std::string::npos)
      << "docs/failure-signatures.md is out of date: run scripts/update-doc-tables";
}

// A job that failed with no mechanism the catalogue knows, but with a line that names a site: the
// outcome's reason says what the logs show.
TEST(SignatureCatalogue, AnUnexplainedFailureNamesTheSitesTheLogsShow) {
  History h = testing::make_history(2);
  const LogClassifier classifier = LogClassifier::builtin();
  observe_log_line(
      h, classifier,
      OutputLine{testing::at(2), 1, 0, "stderr", "[ 9021.5] mlx5_core 0000:ab:00.0 ens8np0: Link down"});
  testing::add_exit(h, 3, 0, 1);
  testing::add_exit(h, 3, 1, 1);
  std::string reason;
  EXPECT_EQ(decide_outcome(h, 0.2, &reason), Outcome::kDetected);
  EXPECT_NE(reason.find("no mechanism recognised"), std::string::npos) << reason;
  EXPECT_NE(reason.find("the logs show kernel.mlx5_link_down on rank 1 (nic)"), std::string::npos) << reason;
}

}  // namespace
}  // namespace ncclfi::harness
