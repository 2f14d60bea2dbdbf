// `ncclfi diagnose` on hand-made logs of jobs ncclfi never ran (tests/data/diagnose/): lines as NCCL,
// PyTorch, torchrun and the kernel print them.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "diagnosis.h"
#include "line_attribution.h"
#include "link_test.h"
#include "log_reader.h"

namespace ncclfi::diagnose {
namespace {

const std::string kData = NCCLFI_SOURCE_DIR "/tests/data/diagnose/";

Diagnosis diagnose_case(const std::string& name) {
  return diagnose(collect_inputs({kData + name}));
}

bool has_reason_at(const Candidate& c, const std::string& where) {
  return std::any_of(c.reasons.begin(), c.reasons.end(),
                     [&](const std::string& r) { return r.find(where) != std::string::npos; });
}

TEST(DiagnoseAttribution, LaunchersPrefixesNameTheRank) {
  EXPECT_EQ(attribute_line("[default3]:[rank3]:[E1202 18:35:14.055222841 ProcessGroupNCCL.cpp:616] x").rank,
            3);
  EXPECT_EQ(attribute_line("[1,3]<stderr>:n1:1:2 [0] NCCL WARN x").rank, 3);
  EXPECT_EQ(attribute_line("[1,3]<stderr>:n1:1:2 [0] NCCL WARN x").host, "n1");
  EXPECT_EQ(attribute_line("3: hello").rank, 3);
  EXPECT_EQ(attribute_line("[E ProcessGroupNCCL.cpp:458] [Rank 5] Watchdog caught").rank, 5);
  // NCCL's device index is no rank.
  EXPECT_EQ(attribute_line("[0] misc/socket.cc:71 NCCL WARN socketProgress: x").rank, -1);
  EXPECT_EQ(attribute_line("Dec  2 18:35:00 node2 kernel: [ 9521.5] mlx5_core x").host, "node2");
  // NCCL 2.26.2 and later stamp a WARN line before its host: the host and the time are both read.
  const LineOrigin stamped =
      attribute_line("[2026-12-02 18:35:14] node3:2201:2290 [0] transport/net_ib.cc:2094 NCCL WARN x");
  EXPECT_EQ(stamped.host, "node3");
  ASSERT_TRUE(stamped.time.has_value());
  EXPECT_EQ(format_time(*stamped.time), "12-02 18:35:14.000");
  EXPECT_EQ(attribute_line("[2026-12-02 18:35:14.123] [1,2]<stderr>:x").host, "");
}

TEST(DiagnoseAttribution, TimeStampsOrderAcrossFormats) {
  const auto glog = parse_time("[E1202 18:35:14.055222841 ProcessGroupNCCL.cpp:616]");
  const auto python = parse_time("E1202 18:35:14.495000 1234 torch/distributed/elastic/api.py:882] x");
  const auto iso = parse_time("2026-12-02T18:35:15 something");
  const auto logging = parse_time("2026-12-02 18:35:13,001 INFO x");
  const auto syslog = parse_time("Dec  2 18:35:16 node2 kernel: x");
  ASSERT_TRUE(glog && python && iso && logging && syslog);
  EXPECT_LT(*logging, *glog);
  EXPECT_LT(*glog, *python);
  EXPECT_LT(*python, *iso);
  EXPECT_LT(*iso, *syslog);
  EXPECT_EQ(format_time(*glog), "12-02 18:35:14.055");
  EXPECT_FALSE(parse_time("step 1200 loss 2.3121").has_value());
}

TEST(DiagnoseAttribution, FileNamesAndAddresses) {
  EXPECT_EQ(rank_from_file_name("rank-3.log"), 3);
  EXPECT_EQ(rank_from_file_name("rank3.txt"), 3);
  EXPECT_EQ(rank_from_file_name("rank_12.out"), 12);
  EXPECT_EQ(rank_from_file_name("job-r3.out"), 3);
  EXPECT_EQ(rank_from_file_name("rank.3"), 3);  // Open MPI's --output-filename folder
  EXPECT_EQ(rank_from_file_name("output-node2-rank-5.log"), 5);
  EXPECT_EQ(rank_from_file_name("node2-kern.log"), -1);
  EXPECT_EQ(host_from_file_name("output-node2-rank-5.log"), "node2");
  EXPECT_EQ(peer_address("NCCL WARN socketProgress: Connection closed by remote peer 10.0.0.3<36138>"),
            "10.0.0.3");
  EXPECT_EQ(peer_address("NET/IB: Got completion from peer 10.0.0.2<5000> with status=12"), "10.0.0.2");
  EXPECT_EQ(peer_address("socketStartConnect: Connect to 10.0.0.2<45763> failed"), "10.0.0.2");
  EXPECT_EQ(peer_address("RAS declaring peer 10.0.0.3<28028> as DEAD"), "10.0.0.3");
  EXPECT_EQ(own_address("n1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"), "10.0.0.1");
  EXPECT_EQ(own_address("NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ens8np0:10.0.0.2<0>"), "10.0.0.2");
}

TEST(DiagnosePointers, PrintedByDecidesWhomALinePointsAt) {
  EXPECT_EQ(pointer_of("kernel.mlx5_link_down"), Pointer::kPrinter);
  EXPECT_EQ(pointer_of("kernel.xid"), Pointer::kPrinter);
  EXPECT_EQ(pointer_of("perfquery.xmit_wait"), Pointer::kPrinter);  // the operator tools, on their node
  EXPECT_EQ(pointer_of("ibstat.port_down"), Pointer::kPrinter);
  EXPECT_EQ(pointer_of("nccl.ib_async_fatal"), Pointer::kPrinter);
  EXPECT_EQ(pointer_of("nccl.ib_async_event"), Pointer::kPrinter);
  EXPECT_EQ(pointer_of("nccl.socket_closed_by_peer"), Pointer::kPeer);
  EXPECT_EQ(pointer_of("ras.declaring_dead"), Pointer::kPeer);
  EXPECT_EQ(pointer_of("nccl.ib_completion_named"), Pointer::kEitherEnd);
  EXPECT_EQ(pointer_of("torch.watchdog_timeout"), Pointer::kNone);
  EXPECT_EQ(pointer_of("torchrun.worker_failed"), Pointer::kNamed);
}

// A 4-rank torchrun job on two nodes; node2's NIC went down.
TEST(Diagnose, NodeTwosDeadNicIsTheCulprit) {
  const Diagnosis d = diagnose_case("nic-down");
  ASSERT_TRUE(d.failure);
  EXPECT_EQ(d.culprit_host, "node2");
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(d.site, "nic");
  EXPECT_EQ(d.lost_peer_ranks, (std::vector<int>{0, 1}));
  EXPECT_GT(d.confidence, 0.3);
  EXPECT_LE(d.confidence, 1.0);
  ASSERT_TRUE(d.first_failure.has_value());
  EXPECT_EQ(d.first_failure->rank, 2);
  EXPECT_EQ(d.first_failure->host, "node2");
  EXPECT_EQ(d.first_failure->pattern, "nccl.ib_completion_named");
  EXPECT_EQ(d.first_failure->file, "node2.log");
  EXPECT_TRUE(d.timestamps);
  EXPECT_TRUE(has_reason_at(d.candidates.front(), "node2-kern.log:3"));
  EXPECT_EQ(d.address_hosts.at("10.0.0.1"), "node1");
  EXPECT_FALSE(d.what_would_decide.empty());
  const std::string text = diagnosis_text(d);
  EXPECT_NE(text.find("Culprit:    host node2 (ranks 2, 3)"), std::string::npos) << text;
}

// Rank 1 of a one-node torchrun job was SIGKILLed; rank 0's socket to it closed.
TEST(Diagnose, TheKilledRankIsTheCulprit) {
  const Diagnosis d = diagnose_case("dead-rank");
  ASSERT_TRUE(d.failure);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.culprit_host, "gpu-a");
  EXPECT_EQ(d.site, "dead_rank");
  EXPECT_EQ(d.symptom, "crashed or died");
  EXPECT_EQ(d.lost_peer_ranks, (std::vector<int>{0}));
  EXPECT_TRUE(has_reason_at(d.candidates.front(), "train.log:13"));  // closed by remote peer
  EXPECT_TRUE(has_reason_at(d.candidates.front(), "train.log:17"));  // exitcode: -9
  ASSERT_TRUE(d.first_failure.has_value());
  EXPECT_EQ(d.first_failure->rank, 0);
  EXPECT_EQ(d.first_failure->line, 13U);
}

TEST(Diagnose, CleanTrainingOutputShowsNoFailure) {
  const Diagnosis d = diagnose_case("clean");
  EXPECT_FALSE(d.failure);
  EXPECT_EQ(d.files, 1U);
  EXPECT_NE(diagnosis_text(d).find("No failure"), std::string::npos);
  EXPECT_FALSE(diagnosis_json(d)["failure"].get<bool>());
}

TEST(Diagnose, ReportsQuoteLinesSafely) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ncclfi-diagnose-unsafe";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "rank-0.log");
    out << "n1:1:2 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
           "10.0.0.2<5000>\x1b]0;owned\x07\n";
  }
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  const std::string text = diagnosis_text(d);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_TRUE(d.failure);
  std::filesystem::remove_all(dir);
}

// docs/diagnose.md shows the report of the NIC case as it really prints.
TEST(Diagnose, TheDocsShowTheNicCaseAsItPrints) {
  std::ifstream in(NCCLFI_SOURCE_DIR "/docs/diagnose.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = diagnosis_text(diagnose_case("nic-down"));
  EXPECT_NE(doc.str().find(text), std::string::npos) << "docs/diagnose.md is out of date; it should hold:\n"
                                                     << text;
}

// A run directory of ncclfi: its attempts' logs, never its plan, events, verdict or baselines.
TEST(Diagnose, ARunDirectoryIsReadFromItsAttemptsOnly) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ncclfi-diagnose-run";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "attempt-0");
  std::filesystem::create_directories(dir / "baseline-0");
  const std::string lost =
      "n1:1:2 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
      "10.0.0.2<5000>\n";
  for (const char* record : {"verdict.json", "plan.json", "events.jsonl"})
    std::ofstream(dir / record) << lost;
  std::ofstream(dir / "baseline-0" / "rank-0.log") << lost;
  std::ofstream(dir / "attempt-0" / "rank-0.log")
      << "n1:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      << lost;
  std::ofstream(dir / "attempt-0" / "rank-1.log")
      << "n2:3:4 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n";
  const InputSet inputs = collect_inputs({dir.string()});
  EXPECT_TRUE(inputs.run_dir);
  ASSERT_EQ(inputs.files.size(), 2U);
  EXPECT_EQ(inputs.files[0].shown, "attempt-0/rank-0.log");
  EXPECT_EQ(inputs.files[0].attempt, 0);
  const Diagnosis d = diagnose(inputs);
  ASSERT_EQ(d.evidence.size(), 1U);
  EXPECT_EQ(d.culprit_host, "n2");
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.lost_peer_ranks, (std::vector<int>{0}));
  EXPECT_FALSE(d.timestamps);
  std::filesystem::remove_all(dir);
}

// Two ranks went quiet while a third failed: nothing tells them apart, and the report says so.
TEST(Diagnose, TiedCandidatesAreUndecided) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ncclfi-diagnose-tie";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "rank-0.log")
      << "RuntimeError: NCCL error: remote process exited or there was a network error\n";
  std::ofstream(dir / "rank-1.log") << "";
  std::ofstream(dir / "rank-2.log") << "";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  ASSERT_TRUE(d.failure);
  EXPECT_EQ(d.tied_units, (std::vector<std::string>{"rank 1", "rank 2"}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1, 2}));
  EXPECT_EQ(d.hang_candidates, (std::vector<int>{1, 2}));
  EXPECT_NE(diagnosis_text(d).find("undecided between rank 1, rank 2 (tied)"), std::string::npos)
      << diagnosis_text(d);
  EXPECT_LT(d.confidence, 0.5);
  std::filesystem::remove_all(dir);
}

// NCCL's IB completion error at NCCL_DEBUG=WARN, as NCCL 2.28 prints it, naming `peer`.
std::string ib_completion(int pid, const std::string& peer) {
  return "vm:" + std::to_string(pid) + ":" + std::to_string(pid) +
         " [0] transport/net_ib/p2p.cc:690 NCCL WARN NET/IB: Got completion from peer " + peer +
         "<41389> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129  hca mlx5_0\n";
}

std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// NCCL's bootstrap retrying its connect to the root, as misc/socket.cc logs it at NCCL_DEBUG=INFO.
std::string connect_retries(const std::string& host, int pid, int up_to) {
  std::string text =
      host + ":" + std::to_string(pid) + ":" + std::to_string(pid) +
      " [0] NCCL INFO [Rank 1] ncclCommInitRankConfig comm 0x55 rank 1 nranks 4 - Init START\n";
  for (int n = 1; n <= up_to; ++n)
    text += host + ":" + std::to_string(pid) + ":" + std::to_string(pid) +
            " [0] NCCL INFO socketStartConnect: connect to 10.0.0.1<29500> returned Connection refused, "
            "retrying (" +
            std::to_string(n) + "/34) after sleep for " + std::to_string(100 * n) + " msec\n";
  return text;
}
std::string init_start(const std::string& host, int pid, int rank) {
  return host + ":" + std::to_string(pid) + ":" + std::to_string(pid) + " [0] NCCL INFO [Rank " +
         std::to_string(rank) + "] ncclCommInitRankConfig comm 0x55 rank " + std::to_string(rank) +
         " nranks 4 - Init START\n";
}

// One rank that cannot reach the bootstrap root retries until the time limit, while the others reached
// it and wait in their init: the rank kept out is the culprit, at the bootstrap, and the job failed to
// start; a missing watchdog is not the finding (none covers init). Where the root is not there for any
// rank, every other rank retries alike and no one is named as kept out.
TEST(Diagnose, ARankKeptOutOfTheBootstrapIsNamedWhileTheOthersWaitInInit) {
  const auto dir = fresh_dir("ncclfi-diagnose-kept-out");
  std::ofstream(dir / "rank-0.log") << init_start("node1", 100, 0);
  std::ofstream(dir / "rank-1.log") << connect_retries("node2", 101, 9);
  std::ofstream(dir / "rank-2.log") << init_start("node3", 102, 2);
  std::ofstream(dir / "rank-3.log") << init_start("node4", 103, 3);
  std::ofstream(dir / "srun.err")
      << "slurmstepd: error: *** STEP 1.0 ON node1 CANCELLED AT 2026-12-04T13:10:07 DUE TO TIME LIMIT ***\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1})) << diagnosis_text(d);
  EXPECT_EQ(d.kept_out_of_bootstrap, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "bootstrap") << diagnosis_text(d);
  EXPECT_EQ(d.symptom, "failed to start");
  EXPECT_TRUE(d.hang_candidates.empty()) << "the waiting ranks are explained";

  // Two retries are a root not yet listening, not a rank kept out.
  std::ofstream(dir / "rank-1.log") << connect_retries("node2", 101, 2) << init_start("node2", 101, 1);
  EXPECT_TRUE(diagnose(collect_inputs({dir.string()})).kept_out_of_bootstrap.empty());

  // Every rank but the root retries: the root is not listening, which no one rank's side explains.
  std::ofstream(dir / "rank-1.log") << connect_retries("node2", 101, 9);
  std::ofstream(dir / "rank-2.log") << connect_retries("node3", 102, 9);
  std::ofstream(dir / "rank-3.log") << connect_retries("node4", 103, 9);
  EXPECT_TRUE(diagnose(collect_inputs({dir.string()})).kept_out_of_bootstrap.empty());
  std::filesystem::remove_all(dir);
}

// A dead NIC, as the net shim's IB persona leaves it (and a real one does): both ends of its connections
// fail with RETRY_EXC_ERR, naming each other, so the completion errors alone tie; the port error that
// only the dead NIC's host prints decides it.
TEST(Diagnose, ThePortErrorTellsTheDeadNicFromThePeerThatLostIt) {
  const auto dir = fresh_dir("ncclfi-diagnose-port-error");
  std::ofstream(dir / "rank-0.log") << ib_completion(100, "127.0.0.2");
  std::ofstream(dir / "rank-1.log") << ib_completion(101, "127.0.0.1");
  const Diagnosis tie = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(tie.culprit_ranks, (std::vector<int>{0, 1}));
  std::ofstream(dir / "rank-1.log")
      << "vm:101:101 [0] transport/net_ib.cc:253 NCCL WARN NET/IB : mlx5_1:1 Got non-fatal async event: port "
         "error(10)\n"
      << ib_completion(101, "127.0.0.1");
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "nic");
  EXPECT_TRUE(d.tied_sites.empty());
  std::filesystem::remove_all(dir);
}

// Each rank a node with NCCL_DEBUG=INFO's IB init line (its address), then the lines given.
void write_ib_ranks(const std::filesystem::path& dir, const std::vector<std::string>& lines) {
  for (size_t r = 0; r < lines.size(); ++r) {
    const int pid = 100 + static_cast<int>(r);
    std::ofstream(dir / ("rank-" + std::to_string(r) + ".log"))
        << "node" << r << ":" << pid << ":" << pid << " [0] NCCL INFO NET/IB : Using [0]mlx5_" << r
        << ":1/IB [RO]; OOB lo:127.0.0." << r + 1 << "<0>\n"
        << lines[r];
  }
}

std::string completion_on(int rank, int peer) {
  const int pid = 100 + rank;
  return "node" + std::to_string(rank) + ":" + std::to_string(pid) + ":" + std::to_string(pid) +
         " [0] transport/net_ib/p2p.cc:690 NCCL WARN NET/IB: Got completion from peer 127.0.0." +
         std::to_string(peer + 1) +
         "<41389> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) "
         "vendor_err=129  hca mlx5_0\n";
}

// Two ranks per node, each with an HCA and an address of its own: a peer's completion error names the
// one rank that announced the address, not the node of two ranks it runs on.
TEST(Diagnose, AnAddressOneRankAnnouncedNamesThatRankOnANodeOfTwo) {
  const auto dir = fresh_dir("ncclfi-diagnose-two-per-node");
  const auto init = [](int r) {
    const int pid = 100 + r;
    const std::string node = r < 2 ? "gpu-node05" : "gpu-node12";
    return node + ":" + std::to_string(pid) + ":" + std::to_string(pid) + " [" + std::to_string(r % 2) +
           "] NCCL INFO NET/IB : Using [0]mlx5_" + std::to_string(r % 2) + ":1/IB [RO]; OOB lo:127.0.0." +
           std::to_string(r + 1) + "<0>\n";
  };
  const auto completion = [](int r, int peer) {
    const int pid = 100 + r;
    const std::string node = r < 2 ? "gpu-node05" : "gpu-node12";
    return node + ":" + std::to_string(pid) + ":" + std::to_string(pid) +
           " [0] transport/net_ib.cc:2546 NCCL WARN NET/IB: Got completion from peer 127.0.0." +
           std::to_string(peer + 1) +
           "<41389> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) "
           "reqSize=0 vendor_err=129 req_type=Recv hca mlx5_0\n";
  };
  std::ofstream(dir / "rank-0.log") << init(0);
  std::ofstream(dir / "rank-1.log")
      << init(1)
      << "gpu-node05:101:101 [1] transport/net_ib.cc:253 NCCL WARN NET/IB : mlx5_1:1 "
         "Got non-fatal async event: port error(10)\n"
      << completion(1, 2);
  std::ofstream(dir / "rank-2.log") << init(2) << completion(2, 1);
  std::ofstream(dir / "rank-3.log") << init(3);
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "nic");
  const auto named = std::find_if(d.evidence.begin(), d.evidence.end(),
                                  [](const Evidence& e) { return e.rank == 2 && e.peer == "127.0.0.2"; });
  ASSERT_NE(named, d.evidence.end());
  EXPECT_EQ(named->target, "rank 1");
  std::filesystem::remove_all(dir);
}

// A node's tools list its devices block by block; each line belongs to the block above it.
TEST(DiagnoseAttribution, EachLineOfANodesToolOutputBelongsToTheDeviceItsBlockNames) {
  const auto blocks = [](const std::vector<std::string>& lines) {
    DeviceBlocks devices;
    std::vector<int> out;
    for (const auto& l : lines) out.push_back(devices.next(l));
    return out;
  };
  EXPECT_EQ(blocks({"CA 'mlx5_0'", "\t\tState: Active", "CA 'mlx5_1'", "\t\tState: Down"}),
            (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(blocks({"$ perfquery -C mlx5_1 -P 1", "LinkDownedCounter:...............1"}),
            (std::vector<int>{1, 1}));
  EXPECT_EQ(
      blocks({"$ nvidia-smi nvlink -s", "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)", "\t Link 4: <inactive>",
              "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)", "\t Link 4: 26.562 GB/s"}),
      (std::vector<int>{-1, 0, 0, 1, 1}));
  // nvidia-smi -q and lspci name a bus, not an index: the n-th GPU block in bus order is GPU n.
  EXPECT_EQ(blocks({"Attached GPUs                             : 2", "GPU 00000000:18:00.0",
                    "                Current                   : 16x", "GPU 00000000:2A:00.0",
                    "                Current                   : 4x"}),
            (std::vector<int>{-1, 0, 0, 1, 1}));
  EXPECT_EQ(
      blocks({"18:00.0 3D controller: NVIDIA Corporation GH100", "\t\tLnkSta:\tSpeed 32GT/s", "",
              "2a:00.0 3D controller: NVIDIA Corporation GH100", "\t\tLnkSta:\tSpeed 8GT/s (downgraded)"}),
      (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(blocks({"[Fri Dec  4 16:13:26 2026] mlx5_core 0000:1b:00.0: Port module event[error]: module 0"}),
            (std::vector<int>{-1}));
}

// On a node of two ranks, the port that went down in ibstat is the second HCA's: rank 1 (local rank 1),
// not both ranks of the node.
TEST(Diagnose, ANodesDownPortNamesTheRankWhoseHcaItIs) {
  const auto dir = fresh_dir("ncclfi-diagnose-node-device");
  for (int r = 0; r < 4; ++r) {
    const int pid = 100 + r;
    std::ofstream(dir / ("rank-" + std::to_string(r) + ".log"))
        << (r < 2 ? "gpu-node05" : "gpu-node12") << ":" << pid << ":" << pid << " [" << r % 2
        << "] NCCL INFO comm 0x55 rank " << r << " nRanks 4 nNodes 2 localRanks 2 localRank " << r % 2
        << " MNNVL 0\n"
        << (r == 0 ? "cpu-ring: watchdog: allreduce seq 2 did not complete within 10.000000 s (waited 10.001 "
                     "s; ring "
                     "step 1 of 6 waits to receive from rank 3)\n"
                   : "");
  }
  std::filesystem::create_directories(dir / "nodes" / "gpu-node05");
  std::ofstream(dir / "nodes" / "gpu-node05" / "ibstat.txt")
      << "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n"
      << "CA 'mlx5_1'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  const auto down = std::find_if(d.evidence.begin(), d.evidence.end(),
                                 [](const Evidence& e) { return e.pattern == "ibstat.port_down"; });
  ASSERT_NE(down, d.evidence.end());
  EXPECT_EQ(down->device, 1);
  EXPECT_EQ(down->target, "rank 1");
  std::filesystem::remove_all(dir);
}

// One edge is a chain when its end's own call failed: rank 1's send returned the error, rank 2 lost its
// connection from rank 1, and the ranks beside them (NVLink peers) only waited for their watchdogs. A
// rank named by one peer that only waited for its watchdog is no such end.
TEST(Diagnose, OneLostConnectionEndsAtTheRankWhoseOwnCallFailed) {
  const auto dir = fresh_dir("ncclfi-diagnose-one-edge");
  const std::string watchdog =
      "cpu-ring: watchdog: allreduce seq 5 did not complete within 10.000000 s (waited 10.000 s; ring step 2 "
      "of 6 waits to receive from rank 3)\n";
  write_ib_ranks(dir,
                 {watchdog, "cpu-ring: net plugin call isend failed with ncclResult_t 6 (ncclRemoteError)\n",
                  completion_on(2, 1), watchdog});
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  write_ib_ranks(dir, {watchdog, watchdog, completion_on(2, 1), watchdog});
  const Diagnosis waited = diagnose(collect_inputs({dir.string()}));
  for (const Candidate& c : waited.candidates)
    EXPECT_FALSE(has_reason_at(c, "the chain of lost connections"));
  std::filesystem::remove_all(dir);
}

// A ring where rank 2's own send failed at once: rank 3 lost its connection from 2, rank 0 from 3, rank 1
// from 0. The addresses tie every line to a node; rank 2 is named and names no one: the chain ends there.
TEST(Diagnose, TheChainOfLostConnectionsEndsAtTheRankWhoseCallFailed) {
  const auto dir = fresh_dir("ncclfi-diagnose-chain");
  const std::string lost =
      "cpu-ring: net plugin call test(recv) failed with ncclResult_t 6 (ncclRemoteError)\n";
  write_ib_ranks(dir, {completion_on(0, 3) + lost, completion_on(1, 0) + lost,
                       "cpu-ring: net plugin call isend failed with ncclResult_t 6 (ncclRemoteError)\n",
                       completion_on(3, 2) + lost});
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2})) << diagnosis_text(d);
  // Without the addresses (NCCL_DEBUG=WARN) nothing ties an address to a rank: no chain, no such claim.
  for (int r = 0; r < 4; ++r) {
    const auto path = dir / ("rank-" + std::to_string(r) + ".log");
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    const std::string all = text.str();
    std::ofstream(path) << all.substr(all.find('\n') + 1);
  }
  EXPECT_NE(diagnose(collect_inputs({dir.string()})).culprit_ranks, (std::vector<int>{2}));
  std::filesystem::remove_all(dir);
}

// One rank's all_reduce returned the error; the others learned of it through ncclCommGetAsyncError and a
// closed socket: the error began in that rank's call.
TEST(Diagnose, TheRankWhoseOwnCallReturnedTheErrorIsWhereItBegan) {
  const auto dir = fresh_dir("ncclfi-diagnose-returned");
  const std::string async =
      "workload: rank R: ncclCommGetAsyncError: remote process exited or there was a network error (6): "
      "aborting\n";
  auto peer = [&](int r) {
    std::string line = async;
    line.replace(line.find('R'), 1, std::to_string(r));
    return line + "[2026-12-03 21:38:24] node" + std::to_string(r) +
           ":9668:9715 [0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer \n";
  };
  std::ofstream(dir / "rank-0.log") << peer(0);
  std::ofstream(dir / "rank-1.log") << peer(1);
  std::ofstream(dir / "rank-2.log") << "workload: rank 2: all_reduce (seq 19) returned remote process exited "
                                       "or there was a network error (6)\n";
  std::ofstream(dir / "rank-3.log") << peer(3);
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2})) << diagnosis_text(d);
  // Two ranks whose calls returned it: nothing says which began it.
  std::ofstream(dir / "rank-3.log") << "workload: rank 3: all_reduce (seq 19) returned remote process exited "
                                       "or there was a network error (6)\n";
  EXPECT_TRUE(diagnose(collect_inputs({dir.string()})).culprit_ranks.empty() ||
              diagnose(collect_inputs({dir.string()})).culprit_ranks.size() > 1);
  // A rank that printed no failure (killed, its node gone) may be where it began: rank 2's call returning
  // the error first is its peers seeing it leave, and srun's `Killed` names rank 3. (As on a GPU: rank 2's
  // connection to the killed rank closed too.)
  std::ofstream(dir / "rank-2.log") << "workload: rank 2: all_reduce (seq 19) returned remote process exited "
                                       "or there was a network error (6)\n"
                                    << peer(2).substr(peer(2).find('\n') + 1);
  std::ofstream(dir / "rank-3.log") << "step 260\n";
  std::ofstream(dir / "srun.err") << "srun: error: node3: task 3: Killed\n";
  const Diagnosis killed = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(killed.culprit_ranks, (std::vector<int>{3})) << diagnosis_text(killed);
  EXPECT_EQ(killed.site, "dead_rank");
  std::filesystem::remove_all(dir);
}

// Every watchdog fired on the same all_reduce; one rank's found it still inside the NCCL call, the others'
// on the GPU stream: that rank never handed its part over. Two ranks: one in the call against one on the
// stream is enough.
TEST(Diagnose, TheRankStuckInsideTheNcclCallIsTheHungOne) {
  const auto dir = fresh_dir("ncclfi-diagnose-stuck");
  auto dog = [](int r, const char* where) {
    return "workload: rank " + std::to_string(r) +
           ": watchdog: all_reduce (seq 49) made no progress for 5000 ms (timeout 5 s, waiting in " + where +
           "): aborting the communicator\n";
  };
  std::ofstream(dir / "rank-0.log") << dog(0, "the GPU stream");
  std::ofstream(dir / "rank-1.log") << dog(1, "the NCCL call");
  const Diagnosis two = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(two.culprit_ranks, (std::vector<int>{1})) << diagnosis_text(two);
  EXPECT_EQ(two.site, "host_hang");
  std::ofstream(dir / "rank-2.log") << dog(2, "the GPU stream");
  std::ofstream(dir / "rank-3.log") << dog(3, "the GPU stream");
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).culprit_ranks, (std::vector<int>{1}));
  // Every rank in the call: nothing stands out.
  for (int r = 0; r < 4; ++r)
    std::ofstream(dir / ("rank-" + std::to_string(r) + ".log")) << dog(r, "the NCCL call");
  EXPECT_TRUE(diagnose(collect_inputs({dir.string()})).stuck_in_call.empty());
  std::filesystem::remove_all(dir);
}

// A rank that repeats a line does not outweigh one that prints a line once: a NaN loss at every step on
// every rank, against one Xid 74 on one node, leaves the site to the Xid.
TEST(Diagnose, ARepeatedLineCountsOnce) {
  const auto dir = fresh_dir("ncclfi-diagnose-repeats");
  for (int r = 0; r < 2; ++r) {
    std::ofstream out(dir / ("rank-" + std::to_string(r) + ".log"));
    out << "node" << r << ":10" << r << ":10" << r << " [0] NCCL INFO comm 0x55 rank " << r
        << " nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n";
    for (int step = 0; step < 40; ++step)
      out << "[rank " << r << "] step " << step << " loss nan step_time 3.2 ms\n";
  }
  std::filesystem::create_directories(dir / "nodes" / "node1");
  std::ofstream(dir / "nodes" / "node1" / "dmesg.txt")
      << "[Thu Dec  3 10:00:00 2026] NVRM: Xid (PCI:0000:18:00): 74, pid='<unknown>', name=<unknown>, "
         "NVLink: "
         "fatal error detected on link 4(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.site, "nvlink") << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  std::filesystem::remove_all(dir);
}

// A rank killed at start, before anyone printed a line the catalogue knows: srun's word that its task was
// killed is the failure, and names the rank.
TEST(Diagnose, ATaskSrunSawKilledIsAFailureEvenWithNothingElse) {
  const auto dir = fresh_dir("ncclfi-diagnose-killed-at-start");
  std::ofstream(dir / "rank-0.log") << "cpu-ring: rendezvous: rendezvous: a peer closed its connection\n";
  std::ofstream(dir / "rank-1.log") << "";
  std::ofstream(dir / "srun.err") << "srun: error: node1: task 1: Killed\n"
                                  << "srun: error: node0: task 0: Exited with exit code 6\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_TRUE(d.failure);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1})) << diagnosis_text(d);
  EXPECT_EQ(d.site, "dead_rank");
  std::filesystem::remove_all(dir);
}

// The same NIC fails in two launches and the third runs clean: the link came back, so it flaps (a dead
// NIC stays dead). With a failed last launch, or a single launch, it stays a NIC.
TEST(Diagnose, ANicThatFailsAndComesBackIsAFlappingLink) {
  const auto dir = fresh_dir("ncclfi-diagnose-flap");
  const std::string port_error =
      "vm:101:101 [0] transport/net_ib.cc:253 NCCL WARN NET/IB : mlx5_1:1 Got non-fatal async event: port "
      "error(10)\n";
  for (const char* attempt : {"attempt-0", "attempt-1", "attempt-2"}) {
    std::filesystem::create_directories(dir / "training" / attempt);
    const bool failed = std::string(attempt) != "attempt-2";
    std::ofstream(dir / "training" / attempt / "rank-0.log")
        << (failed ? ib_completion(100, "127.0.0.2") : "");
    std::ofstream(dir / "training" / attempt / "rank-1.log")
        << (failed ? port_error + ib_completion(101, "127.0.0.1") : "");
  }
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "degraded_link");
  EXPECT_NE(d.site_why.find("flaps"), std::string::npos) << d.site_why;
  EXPECT_NE(diagnosis_text(d).find("site: the network failed in 2 launch(es)"), std::string::npos)
      << diagnosis_text(d);
  // One failure that a restart ran clean past is a single loss, not a link that flaps.
  std::ofstream(dir / "training" / "attempt-1" / "rank-0.log") << "";
  std::ofstream(dir / "training" / "attempt-1" / "rank-1.log") << "";
  const Diagnosis once = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(once.site, "nic") << diagnosis_text(once);
  EXPECT_TRUE(once.site_why.empty());
  // The last launch failed as well: the NIC stayed dead.
  std::ofstream(dir / "training" / "attempt-2" / "rank-1.log")
      << port_error + ib_completion(101, "127.0.0.1");
  const Diagnosis dead = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(dead.site, "nic");
  EXPECT_TRUE(dead.site_why.empty());
  std::filesystem::remove_all(dir);
}

// The per-link test's table: a link that delivers wrong data names the rank it runs into; one slow link
// names its receiving rank (a degraded link); a rank whose links in and out are both slow is its own path
// (PCIe); with no error in the job, the symptom is the table's.
TEST(DiagnoseLinkTest, TheTableNamesTheLinkAndTheRank) {
  EXPECT_FALSE(parse_link_row("#   link           time(ms)   busbw(MB/s)   #wrong").has_value());
  EXPECT_FALSE(parse_link_row("    rank 0 -> rank 1       162.1           6.1        0 extra").has_value());
  const auto row = parse_link_row("    rank 0 -> rank 1       162.1           6.1        3");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->from, 0);
  EXPECT_EQ(row->to, 1);
  EXPECT_DOUBLE_EQ(row->busbw_mbs, 6.1);
  EXPECT_EQ(row->wrong, 3u);
  using K = LinkFinding::Kind;
  const std::vector<LinkRow> one_slow = {
      {3, 0, 6.9, 143.2, 0}, {0, 1, 162.1, 6.1, 0}, {1, 2, 0.9, 1081.1, 0}, {2, 3, 4.5, 219.4, 0}};
  auto f = judge_link_test(one_slow);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, K::kSlowLink);
  EXPECT_EQ(f[0].rank, 1);
  EXPECT_EQ(f[0].site, "degraded_link");
  const std::vector<LinkRow> slow_rank = {
      {3, 0, 2.1, 312.9, 0}, {0, 1, 18.8, 34.8, 0}, {1, 2, 17.0, 38.5, 0}, {2, 3, 1.0, 680.7, 0}};
  f = judge_link_test(slow_rank);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, K::kSlowRank);
  EXPECT_EQ(f[0].rank, 1);
  EXPECT_EQ(f[0].site, "pcie");
  const std::vector<LinkRow> healthy = {
      {3, 0, 2.3, 564.9, 0}, {0, 1, 1.3, 998.1, 0}, {1, 2, 2.4, 556.6, 0}, {2, 3, 1.2, 1112.9, 0}};
  EXPECT_TRUE(judge_link_test(healthy).empty());
  std::vector<LinkRow> wrong = healthy;
  wrong[2].wrong = 30;
  f = judge_link_test(wrong);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, K::kWrongData);
  EXPECT_EQ(f[0].rank, 2);
  // The links into and out of rank 1 both wrong: rank 1 corrupts, not either link.
  wrong = healthy;
  wrong[1].wrong = 30;
  wrong[2].wrong = 28;
  f = judge_link_test(wrong);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, K::kWrongRank);
  EXPECT_EQ(f[0].rank, 1);
  EXPECT_EQ(f[0].site, "");

  const auto dir = fresh_dir("ncclfi-diagnose-link-test");
  std::filesystem::create_directories(dir / "training");
  std::filesystem::create_directories(dir / "link-test");
  for (int r = 0; r < 4; ++r) {
    std::ofstream(dir / "training" / ("rank-" + std::to_string(r) + ".log"))
        << "[rank " << r << "] step 10 loss 0.5 step_time 9.0 ms\n";
    const LinkRow& l = slow_rank[static_cast<size_t>(r)];
    std::ofstream(dir / "link-test" / ("rank-" + std::to_string(l.to) + ".log"))
        << "#   link           time(ms)   busbw(MB/s)   #wrong\n"
        << "    rank " << l.from << " -> rank " << l.to << "   " << l.ms << "   " << l.busbw_mbs << "   0\n";
  }
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  ASSERT_TRUE(d.failure);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "pcie");
  EXPECT_EQ(d.symptom, "slow with no error");
  EXPECT_NE(diagnosis_text(d).find("Link test:  both links through rank 1 are slow alone"), std::string::npos)
      << diagnosis_text(d);
  std::filesystem::remove_all(dir);
}

// Rank 3 was killed and says nothing; ranks 0 and 2 name one address no rank announced: it is rank 3's.
TEST(Diagnose, AnAddressNamedByTheRanksThatLostItIsTheQuietRanks) {
  const auto dir = fresh_dir("ncclfi-diagnose-quiet-address");
  std::ofstream(dir / "rank-0.log") << "step 1\n" << ib_completion(100, "10.0.0.4");
  std::ofstream(dir / "rank-1.log") << "step 1\n" << ib_completion(101, "10.0.0.1");
  std::ofstream(dir / "rank-2.log") << "step 1\n" << ib_completion(102, "10.0.0.4");
  std::ofstream(dir / "rank-3.log") << "step 1\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{3}));
  EXPECT_EQ(d.address_ranks, (std::map<std::string, int>{{"10.0.0.4", 3}}));
  EXPECT_NE(diagnosis_text(d).find("10.0.0.4 is taken as rank 3's"), std::string::npos) << diagnosis_text(d);
  // With a second quiet rank the address's owner is not clear: it stays an address.
  std::ofstream(dir / "rank-4.log") << "step 1\n";
  const Diagnosis two = diagnose(collect_inputs({dir.string()}));
  EXPECT_TRUE(two.address_ranks.empty());
  EXPECT_NE(two.culprit_ranks, (std::vector<int>{3}));
  std::filesystem::remove_all(dir);
}

// A job report that quotes each rank's error does not count it twice.
TEST(Diagnose, AReportQuotingARanksLineCountsItOnce) {
  const auto dir = fresh_dir("ncclfi-diagnose-quoted");
  std::ofstream(dir / "rank-0.log") << ib_completion(100, "10.0.0.2");
  std::ofstream(dir / "rank-1.log") << "step 1\n";
  std::ofstream(dir / "report.md") << "## First notable lines\n\n    " << ib_completion(100, "10.0.0.2");
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.quoted_lines_dropped, 1u);
  EXPECT_TRUE(std::none_of(d.evidence.begin(), d.evidence.end(),
                           [](const Evidence& e) { return e.file.find("report.md") != std::string::npos; }));
  std::filesystem::remove_all(dir);
}

// srun's `Killed` names the dead task; `Exited with exit code` and `Terminated` are the teardown.
TEST(Diagnose, SrunsKilledTaskIsTheCulpritAndItsTeardownLinesPointNowhere) {
  const auto dir = fresh_dir("ncclfi-diagnose-srun");
  std::ofstream(dir / "rank-0.log") << ib_completion(100, "10.0.0.2");
  std::ofstream(dir / "rank-1.log") << "step 1\n";
  std::ofstream(dir / "rank-2.log") << ib_completion(102, "10.0.0.1");
  std::ofstream(dir / "srun.err") << "srun: error: vm: task 1: Killed\n"
                                  << "srun: error: vm: task 0: Exited with exit code 2\n"
                                  << "srun: error: vm: task 2: Terminated\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "dead_rank");
  EXPECT_EQ(d.symptom, "crashed or died");
  for (const Evidence& e : d.evidence) {
    if (e.text.find("Terminated") != std::string::npos || e.text.find("exit code 2") != std::string::npos) {
      EXPECT_TRUE(e.site.empty() && e.target.empty()) << e.text;
    }
  }
  std::filesystem::remove_all(dir);
}

// A task that ended of SIGTERM before any other, with the step not cancelled, was stopped from outside
// (preemption); the same line after a time-limit cancellation is the teardown.
TEST(Diagnose, ATaskTerminatedFirstWasStoppedFromOutside) {
  const auto dir = fresh_dir("ncclfi-diagnose-preempted");
  std::ofstream(dir / "rank-0.log") << ib_completion(100, "10.0.0.2");
  std::ofstream(dir / "rank-1.log") << "step 1\n";
  std::ofstream(dir / "rank-2.log") << ib_completion(102, "10.0.0.1");
  std::ofstream(dir / "rank-3.log") << ib_completion(103, "10.0.0.3");
  std::ofstream(dir / "srun.err") << "srun: error: vm: task 1: Terminated\n"
                                  << "srun: error: vm: task 0: Exited with exit code 2\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "dead_rank");
  std::ofstream(dir / "srun.err")
      << "slurmstepd: error: *** STEP 1.0 ON vm CANCELLED AT 2026-12-03T04:01:58 DUE TO TIME LIMIT ***\n"
      << "srun: error: vm: task 1: Terminated\n";
  const Diagnosis cancelled = diagnose(collect_inputs({dir.string()}));
  for (const Evidence& e : cancelled.evidence) {
    if (e.pattern == "srun.task_ended") {
      EXPECT_EQ(e.weight, 0) << e.text;
    }
  }
  std::filesystem::remove_all(dir);
}

// NCCL gives ncclRemoteError to the ranks that lost a peer and a local code to the rank whose own call
// failed: that rank is the culprit; a failed connect is connection setup.
TEST(Diagnose, TheRankWithALocalErrorCodeIsTheCulprit) {
  const auto dir = fresh_dir("ncclfi-diagnose-local-code");
  const std::string remote = "net plugin call test(recv) failed with ncclResult_t 6 (ncclRemoteError)\n";
  std::ofstream(dir / "rank-0.log") << remote;
  std::ofstream(dir / "rank-1.log") << remote;
  std::ofstream(dir / "rank-2.log") << "net plugin call isend failed with ncclResult_t 2 (ncclSystemError)\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2}));
  EXPECT_EQ(d.site, "nic");
  std::ofstream(dir / "rank-2.log")
      << "net plugin call connect failed with ncclResult_t 2 (ncclSystemError)\n";
  const Diagnosis setup = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(setup.culprit_ranks, (std::vector<int>{2}));
  EXPECT_EQ(setup.site, "bootstrap");
  // The same code from the call that makes the communicator (ncclfi-workload's line, on one H200): start-up.
  std::ofstream(dir / "rank-2.log") << "ncclfi-workload: ncclCommInitRankConfig: unhandled system error (run "
                                       "with NCCL_DEBUG=INFO for details)\n";
  const Diagnosis init = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(init.culprit_ranks, (std::vector<int>{2}));
  EXPECT_EQ(init.site, "bootstrap");
  EXPECT_EQ(init.symptom, "failed to start");
  // Every rank with the same local code: no one in particular.
  for (const char* name : {"rank-0.log", "rank-1.log"})
    std::ofstream(dir / name) << "net plugin call isend failed with ncclResult_t 2 (ncclSystemError)\n";
  std::ofstream(dir / "rank-2.log") << "net plugin call isend failed with ncclResult_t 2 (ncclSystemError)\n";
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).culprit_ranks, (std::vector<int>{0, 1, 2}));
  std::filesystem::remove_all(dir);
}

// NCCL_DEBUG=INFO's init lines name each process's rank; in one log where every rank's lines are mixed
// (srun or mpirun without labels), every later line of that process is that rank's. The world
// communicator's rank wins over a smaller communicator's.
TEST(DiagnoseAttribution, InitLinesNameTheProcesssRank) {
  const LineOrigin comm = attribute_line(
      "gpu-node03:4242:4242 [0] NCCL INFO comm 0x55d0c0a0b0c0 rank 2 nRanks 4 nNodes 4 "
      "localRanks 1 localRank 0 MNNVL 0");
  EXPECT_EQ(comm.process, "gpu-node03:4242");
  EXPECT_EQ(comm.communicator_rank, 2);
  EXPECT_EQ(comm.communicator_size, 4);
  const LineOrigin start = attribute_line(
      "gpu-node03:4242:4242 [0] NCCL INFO [Rank 2] ncclCommInitRankConfig comm 0x55d0c0a0b0c0 rank 2 nranks "
      "4 "
      "cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init START");
  EXPECT_EQ(start.communicator_rank, 2);
  EXPECT_EQ(attribute_line("gpu-node03:4242:4242 [0] NCCL INFO Channel 00/02 : 0 1 2 3").communicator_rank,
            -1);

  const auto dir = fresh_dir("ncclfi-diagnose-mixed-log");
  std::ofstream log(dir / "slurm-4711.out");
  const char* hosts[] = {"gpu-node01", "gpu-node02", "gpu-node03", "gpu-node04"};
  // Out of rank order, each process's first line before any init line, and a sub-communicator's init
  // lines (rank 0 or 1 in it, with 2.29.2's "[Rank N]" Init START) before the world's.
  for (int r : {2, 0, 3, 1}) {
    const std::string p =
        std::string(hosts[r]) + ":" + std::to_string(100 + r) + ":" + std::to_string(100 + r);
    log << p << " [0] NCCL INFO NCCL version 2.30.7+cuda13.0\n";
    log << p << " [0] NCCL INFO [Rank " << r % 2 << "] ncclCommInitRankConfig comm 0x55d0c0a0b0c0 rank "
        << r % 2 << " nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init START\n";
    log << p << " [0] NCCL INFO comm 0x55d0c0a0b0c0 rank " << r % 2 << " nRanks 2 nNodes 2 localRanks 1 "
        << "localRank 0 MNNVL 0\n";
    log << p << " [0] NCCL INFO comm 0x55d0c0a0b0d0 rank " << r << " nRanks 4 nNodes 4 localRanks 1 "
        << "localRank 0 MNNVL 0\n";
  }
  log << "gpu-node02:101:190 [0] transport/net.cc:1002 NCCL WARN net plugin call isend failed with "
         "ncclResult_t 2 "
         "(ncclSystemError)\n";
  for (int r : {0, 2, 3})
    log << hosts[r] << ":" << 100 + r << ":" << 190 + r
        << " [0] transport/net.cc:1002 NCCL WARN net plugin call test(recv) failed with ncclResult_t 6 "
           "(ncclRemoteError)\n";
  log.close();
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.culprit_host, "gpu-node02");
  for (int r = 0; r < 4; ++r) EXPECT_EQ(d.rank_hosts.at(r), hosts[r]) << "rank " << r;
  std::filesystem::remove_all(dir);
}

// A step Slurm cancelled at its time limit, with no error anywhere, hung.
TEST(Diagnose, ATimeLimitWithNoErrorIsAHang) {
  const auto dir = fresh_dir("ncclfi-diagnose-time-limit");
  std::ofstream(dir / "rank-0.log") << "step 1\n";
  std::ofstream(dir / "rank-1.log") << "step 1\n";
  std::ofstream(dir / "srun.err")
      << "slurmstepd: error: *** STEP 1.0 ON vm CANCELLED AT 2026-12-03T04:01:58 DUE TO TIME LIMIT ***\n"
      << "srun: error: vm: task 0: Terminated\nsrun: error: vm: task 1: Terminated\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  ASSERT_TRUE(d.failure);
  EXPECT_EQ(d.symptom, "hung");
  ASSERT_TRUE(d.first_failure.has_value());
  EXPECT_EQ(d.first_failure->pattern, "slurm.step_cancelled");
  // Nothing in the job noticed: the missing safety net is the site.
  EXPECT_EQ(d.site, "configuration");
  EXPECT_NE(d.site_why.find("no watchdog or timeout fired"), std::string::npos) << d.site_why;
  // A rank killed at the start, the others waiting for it until the limit: the dead rank is the site.
  std::ofstream(dir / "srun.err")
      << "slurmstepd: error: *** STEP 1.0 ON vm CANCELLED AT 2026-12-03T04:01:58 DUE TO TIME LIMIT ***\n"
      << "srun: error: vm: task 1: Killed\nsrun: error: vm: task 0: Terminated\n";
  const Diagnosis killed = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(killed.site, "dead_rank") << diagnosis_text(killed);
  EXPECT_EQ(killed.culprit_ranks, (std::vector<int>{1}));
  std::filesystem::remove_all(dir);
}

// A rank killed while the job was starting: its peers' rendezvous lost it, or their connection to it
// failed. The dead rank is where; the job failed to start.
TEST(Diagnose, ARankKilledWhileTheJobStartedIsWhyItFailedToStart) {
  const auto dir = fresh_dir("ncclfi-diagnose-dead-at-start");
  std::ofstream(dir / "rank-0.log") << "cpu-ring: rendezvous: rendezvous: a peer went away while sending\n";
  std::ofstream(dir / "rank-1.log")
      << "cpu-ring: net plugin call connect failed with ncclResult_t 6 (ncclRemoteError)\n";
  std::ofstream(dir / "rank-2.log") << "";
  std::ofstream(dir / "rank-3.log") << "cpu-ring: rendezvous: rendezvous: a peer closed its connection\n";
  std::ofstream(dir / "srun.err") << "srun: error: n0: task 0: Exited with exit code 6\n"
                                  << "srun: error: n1: task 1: Exited with exit code 2\n"
                                  << "srun: error: n2: task 2: Killed\n"
                                  << "srun: error: n3: task 3: Exited with exit code 6\n";
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2})) << diagnosis_text(d);
  EXPECT_EQ(d.site, "dead_rank");
  EXPECT_EQ(d.symptom, "failed to start");
  // A failure after the start (a collective's error) is not a failure to start.
  std::ofstream(dir / "rank-1.log")
      << "cpu-ring: net plugin call test(recv) failed with ncclResult_t 6 (ncclRemoteError)\n";
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.symptom, "crashed or died") << diagnosis_text(d);
  std::filesystem::remove_all(dir);
}

// At the time limit, the ranks whose watchdogs fired had exited; the task Slurm still had to terminate
// was stuck where its own watchdog could not act: the hung one.
TEST(Diagnose, TheTaskStillRunningAtTheTimeLimitIsTheHungOne) {
  const auto dir = fresh_dir("ncclfi-diagnose-still-running");
  for (int r = 0; r < 4; ++r)
    std::ofstream(dir / ("rank-" + std::to_string(r) + ".log"))
        << "[rank " << r << "] step 2275 loss 0.011170 step_time 0.6 ms\n"
        << "cpu-ring: watchdog: allreduce seq 2276 did not complete within 2.000000 s\n";
  std::ofstream(dir / "srun.err")
      << "slurmstepd: error: *** STEP 1.0 ON vm CANCELLED AT 2026-12-03T08:11:40 DUE TO TIME LIMIT ***\n"
      << "srun: error: vm: task 0: Exited with exit code 3\nsrun: error: vm: task 2: Exited with exit code "
         "3\n"
      << "srun: error: vm: task 3: Exited with exit code 3\nsrun: error: vm: task 1: Terminated\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "host_hang");
  EXPECT_EQ(d.symptom, "hung");
  // Every task terminated at the limit: no one of them stands out.
  std::ofstream(dir / "srun.err")
      << "slurmstepd: error: *** STEP 1.0 ON vm CANCELLED AT 2026-12-03T08:11:40 DUE TO TIME LIMIT ***\n"
      << "srun: error: vm: task 0: Terminated\nsrun: error: vm: task 1: Terminated\n"
      << "srun: error: vm: task 2: Terminated\nsrun: error: vm: task 3: Terminated\n";
  EXPECT_NE(diagnose(collect_inputs({dir.string()})).culprit_ranks.size(), 1u);
  std::filesystem::remove_all(dir);
}

// On a job of several hosts, torchrun's error summary maps its local_rank to the global rank.
TEST(Diagnose, TorchrunsSummaryNamesTheGlobalRank) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ncclfi-diagnose-summary";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.log")
      << "[default0]:n1:5:5 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
         "[default0]:n1:5:9 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection "
         "closed by remote peer 10.0.0.2<41000>\n";
  std::ofstream(dir / "b.log")
      << "E1202 18:20:06.389000 5090 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: "
         "-9) "
         "local_rank: 1 (pid: 5102) of binary: /usr/bin/python3\n"
         "Root Cause (first observed failure):\n[0]:\n  time      : 2026-12-02_18:20:06\n"
         "  host      : n2.cluster.example\n  rank      : 3 (local_rank: 1)\n  exitcode  : -9 (pid: 5102)\n";
  const Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{3}));
  EXPECT_EQ(d.culprit_host, "n2");
  EXPECT_EQ(d.site, "dead_rank");
  std::filesystem::remove_all(dir);
}

// ncclfi-cpu-ring's watchdog line: how long it waited and where in the ring.
std::string ring_dog(int seq, double waited, const std::string& where) {
  char text[256];
  std::snprintf(
      text, sizeof(text),
      "ncclfi-cpu-ring: watchdog: allreduce seq %d did not complete within 2.000000 s (waited %.3f s; "
      "ring step %s)\n",
      seq, waited, where.c_str());
  return text;
}

void write_ranks(const std::filesystem::path& dir, const std::vector<std::string>& logs) {
  for (size_t r = 0; r < logs.size(); ++r)
    std::ofstream(dir / ("rank-" + std::to_string(r) + ".log")) << logs[r];
}

// A frozen rank's watchdog only runs again when the process does: it fires seconds late, its peers' on
// time. PyTorch's watchdog says the same with "ran for N milliseconds" against Timeout(ms).
TEST(Diagnose, AWatchdogThatFiredLateIsTheStoppedProcess) {
  const auto dir = fresh_dir("ncclfi-diagnose-late-watchdog");
  write_ranks(dir,
              {ring_dog(1550, 2.003, "3 of 6 waits to receive from rank 3"),
               "[2026-12-04 01:58:33] vm:17256:17256 [0] plugin.cc:49 NCCL WARN NET/ncclfi : test failed: "
               "ECONNRESET\nncclfi-cpu-ring: net plugin call test(recv) failed with ncclResult_t 6 "
               "(ncclRemoteError)\n",
               ring_dog(1550, 6.004, "3 of 6 waits to receive from rank 1 and to send to rank 3"),
               ring_dog(1550, 2.005, "2 of 6 waits to receive from rank 2")});
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2})) << diagnosis_text(d);
  EXPECT_EQ(d.late_watchdog, (std::vector<int>{2}));
  EXPECT_EQ(d.site, "host_hang");
  EXPECT_EQ(d.symptom, "hung");
  // The ring position alone would have named rank 3 (the earliest step): the stop explains it instead.
  EXPECT_EQ(d.stopped_at, -1);

  // Only rank 0 ran again, late; the others printed nothing: every process was stopped.
  write_ranks(dir, {ring_dog(1022, 4.969, "2 of 6 waits to receive from rank 3"), "", "", ""});
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{0, 1, 2, 3})) << diagnosis_text(d);
  EXPECT_EQ(d.site, "host_hang");

  // A node of two ranks frozen: rank 0 ran again late, rank 1 never did; the others' fired on time, so a
  // running rank 1's would have too: it was stopped as well.
  write_ranks(dir, {ring_dog(2080, 6.468, "2 of 6 waits to receive from rank 3"), "[rank 1] step 2079\n",
                    ring_dog(2080, 2.002, "4 of 6 waits to receive from rank 1"),
                    ring_dog(2080, 2.000, "5 of 6 waits to receive from rank 2")});
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{0, 1})) << diagnosis_text(d);
  EXPECT_EQ(d.site, "host_hang");

  // A rank that hangs now and then: stopped in the first launch (its watchdog late), and in the second
  // resumed between two collectives, its next one failing on the connections its peers had closed.
  std::filesystem::remove_all(dir);
  for (const char* attempt : {"attempt-0", "attempt-1"}) std::filesystem::create_directories(dir / attempt);
  write_ranks(dir / "attempt-0", {ring_dog(1304, 2.005, "5 of 6 waits to receive from rank 3"),
                                  ring_dog(1304, 2.000, "6 of 6 waits to receive from rank 0"),
                                  ring_dog(1304, 3.002, "5 of 6 waits to send to rank 3"),
                                  ring_dog(1304, 2.002, "4 of 6 waits to receive from rank 2")});
  write_ranks(dir / "attempt-1",
              {ring_dog(1421, 2.006, "2 of 6 waits to receive from rank 3"),
               ring_dog(1421, 2.007, "3 of 6 waits to receive from rank 0"),
               "ncclfi-cpu-ring: net plugin call test(send) failed with ncclResult_t 6 (ncclRemoteError)\n",
               ring_dog(1421, 2.004, "1 of 6 waits to receive from rank 2")});
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2})) << diagnosis_text(d);
  EXPECT_EQ(d.site, "host_hang");
  EXPECT_NE(diagnosis_text(d).find("(an earlier launch)"), std::string::npos) << diagnosis_text(d);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  // PyTorch's wording; a watchdog a few hundred milliseconds late is on time.
  auto torch_dog = [](int r, int ran_ms) {
    return "[rank" + std::to_string(r) + "]:[E1204 02:00:00.000000000 ProcessGroupNCCL.cpp:632] [Rank " +
           std::to_string(r) +
           "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, "
           "NumelOut=1, Timeout(ms)=60000) ran for " +
           std::to_string(ran_ms) + " milliseconds before timing out.\n";
  };
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_ranks(dir, {torch_dog(0, 60100), torch_dog(1, 91000), torch_dog(2, 60300)});
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.late_watchdog, (std::vector<int>{1})) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  write_ranks(dir, {torch_dog(0, 60100), torch_dog(1, 60400), torch_dog(2, 60300)});
  EXPECT_TRUE(diagnose(collect_inputs({dir.string()})).late_watchdog.empty());
  std::filesystem::remove_all(dir);
}

// Once one link of a ring stops, every rank waits, each a step behind its predecessor: the rank at the
// earliest step, waiting on a peer already past it, is where it stopped. A receive whose sender finished
// points at the NIC or link that lost it; a send that never completed, at a port that would not take it.
TEST(Diagnose, TheRingStoppedAtTheEarliestRankWaitingOnAPeerPastIt) {
  const auto dir = fresh_dir("ncclfi-diagnose-ring-stop");
  write_ranks(dir, {ring_dog(8, 2.003, "5 of 6 waits to receive from rank 3"),
                    ring_dog(8, 2.003, "2 of 6 waits to receive from rank 0"),
                    ring_dog(8, 2.000, "3 of 6 waits to receive from rank 1"),
                    ring_dog(8, 2.004, "4 of 6 waits to receive from rank 2")});
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.stopped_at, 1) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "nic");
  EXPECT_EQ(d.symptom, "hung");

  write_ranks(dir, {ring_dog(2, 2.003, "6 of 6 waits to receive from rank 3"),
                    ring_dog(2, 2.004, "3 of 6 waits to send to rank 2"),
                    ring_dog(2, 2.001, "4 of 6 waits to receive from rank 1"),
                    ring_dog(2, 2.003, "5 of 6 waits to receive from rank 2")});
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1})) << diagnosis_text(d);
  EXPECT_EQ(d.site, "congestion");
  // The same send, to a rank that printed nothing (killed at the start): that rank stopped the ring.
  write_ranks(dir, {ring_dog(2, 2.003, "3 of 6 waits to receive from rank 3"),
                    ring_dog(2, 2.004, "2 of 6 waits to send to rank 2"), "",
                    ring_dog(2, 2.003, "2 of 6 waits to receive from rank 2")});
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).stopped_at, -1);

  // A later all-reduce counts after an earlier one; two ranks at the earliest point, each waiting on a
  // peer past it, are two places: nothing is named.
  write_ranks(dir, {ring_dog(7, 2.003, "1 of 6 waits to receive from rank 3"),
                    ring_dog(6, 2.003, "2 of 6 waits to receive from rank 0"),
                    ring_dog(7, 2.000, "3 of 6 waits to receive from rank 1"),
                    ring_dog(6, 2.004, "2 of 6 waits to receive from rank 2")});
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.stopped_at, -1) << diagnosis_text(d);
  std::filesystem::remove_all(dir);
}

// A block corrupted on its way into rank r is wrong on r and on every rank after it in the ring.
TEST(Diagnose, WrongDataEnteredAtTheRankWhosePredecessorFoundNone) {
  const auto dir = fresh_dir("ncclfi-diagnose-wrong-data");
  auto wrong = [](int r) {
    return "ncclfi-cpu-ring: rank " + std::to_string(r) + " allreduce seq 6: 3 of 65536 elements wrong\n";
  };
  write_ranks(dir,
              {wrong(0), "ncclfi-cpu-ring: rank 1/4: 102 iterations of 262144 bytes in 0.173 s, verified\n",
               wrong(2), wrong(3)});
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2})) << diagnosis_text(d);
  EXPECT_EQ(d.site, "degraded_link");
  EXPECT_EQ(d.symptom, "wrong data / NaN");
  // Every rank wrong: the ring does not say where it entered.
  write_ranks(dir, {wrong(0), wrong(1), wrong(2), wrong(3)});
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.culprit_ranks.size(), 4u) << diagnosis_text(d);
  std::filesystem::remove_all(dir);
}

// The rank whose own network call failed while its peers only saw connections reset.
TEST(Diagnose, TheOneRankThatLostNoPeerFailedOnItsOwn) {
  const auto dir = fresh_dir("ncclfi-diagnose-own-failure");
  auto failed = [](int r, const std::string& why) {
    return "\n[2026-12-04 01:57:05] vm:1559" + std::to_string(r) + ":1559" + std::to_string(r) +
           " [0] plugin_adapters.cc:49 NCCL WARN NET/ncclfi : test failed: " + why +
           "\nncclfi-cpu-ring: net plugin call test(recv) failed with ncclResult_t 6 (ncclRemoteError)\n";
  };
  write_ranks(dir, {failed(0, "ECONNRESET"), failed(1, "ECONNRESET"), failed(2, "ncclRemoteError"),
                    failed(3, "ECONNRESET")});
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.failed_on_its_own, 2) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2}));
  EXPECT_EQ(d.site, "nic");
  // Two ranks without a lost peer: either may have begun it.
  write_ranks(dir, {failed(0, "ECONNRESET"), failed(1, "ncclRemoteError"), failed(2, "ncclRemoteError"),
                    failed(3, "ECONNRESET")});
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).failed_on_its_own, -1);
  std::filesystem::remove_all(dir);
}

// A run that printed no error but took far longer than its fault-free baselines is slow.
TEST(Diagnose, AJobManyTimesSlowerThanItsReferenceRunsIsSlow) {
  const auto run = fresh_dir("ncclfi-diagnose-slow");
  std::ofstream(run / "verdict.json") << "{}";
  auto summary = [](int r, double s) {
    return "ncclfi-cpu-ring: rank " + std::to_string(r) + "/4: 32 iterations of 65536 bytes in " +
           std::to_string(s) + " s, verified\n";
  };
  for (const std::string sub : {"attempt-0", "baseline-1/attempt-0", "baseline-2/attempt-0"}) {
    std::filesystem::create_directories(run / sub);
    const double s = sub == "attempt-0" ? 2.35 : (sub[9] == '1' ? 0.022 : 0.025);
    for (int r = 0; r < 4; ++r)
      std::ofstream(run / sub / ("rank-" + std::to_string(r) + ".log")) << summary(r, s);
  }
  Diagnosis d = diagnose(collect_inputs({run.string()}));
  EXPECT_FALSE(d.failure);
  ASSERT_TRUE(d.slow.has_value()) << diagnosis_text(d);
  EXPECT_EQ(d.symptom, "slow with no error");
  EXPECT_EQ(d.slow->references, 2u);
  EXPECT_NEAR(d.slow->reference_seconds_per_iteration, 0.025 / 32, 1e-9);
  EXPECT_NE(diagnosis_text(d).find("Slow, no failure:"), std::string::npos) << diagnosis_text(d);
  // Within the references' reach: not slow. Without references: nothing to compare with.
  for (int r = 0; r < 4; ++r)
    std::ofstream(run / "attempt-0" / ("rank-" + std::to_string(r) + ".log")) << summary(r, 0.03);
  EXPECT_FALSE(diagnose(collect_inputs({run.string()})).slow.has_value());
  for (int r = 0; r < 4; ++r)
    std::ofstream(run / "attempt-0" / ("rank-" + std::to_string(r) + ".log")) << summary(r, 2.35);
  std::filesystem::remove_all(run / "baseline-1");
  std::filesystem::remove_all(run / "baseline-2");
  EXPECT_FALSE(diagnose(collect_inputs({run.string()})).slow.has_value());
  std::filesystem::remove_all(run);
}

// A slow ring paces every rank alike; only the rank held back on its own sends waits on them, while the
// others wait on their receives (ncclfi-cpu-ring's last line): that rank, at a congested port.
TEST(Diagnose, ASlowRingNamesTheRankHeldBackOnItsSends) {
  const auto run = fresh_dir("ncclfi-diagnose-held-back");
  std::ofstream(run / "verdict.json") << "{}";
  auto lines = [](int r, double seconds, double send, double recv) {
    char waits[256];
    std::snprintf(waits, sizeof(waits),
                  "ncclfi-cpu-ring: rank %d/4: waited %.3f s on its sends to rank %d and %.3f s on its "
                  "receives from rank %d, each after the other side of its ring step was done\n",
                  r, send, (r + 1) % 4, recv, (r + 3) % 4);
    return "ncclfi-cpu-ring: rank " + std::to_string(r) + "/4: 22 iterations of 524288 bytes in " +
           std::to_string(seconds) + " s, verified\n" + waits;
  };
  auto write_run = [&](const std::vector<std::pair<double, double>>& waits) {
    for (int r = 0; r < 4; ++r)
      std::ofstream(run / "attempt-0" / ("rank-" + std::to_string(r) + ".log"))
          << lines(r, 1.45, waits[static_cast<size_t>(r)].first, waits[static_cast<size_t>(r)].second);
  };
  for (const std::string sub : {"attempt-0", "baseline-1/attempt-0"}) {
    std::filesystem::create_directories(run / sub);
    for (int r = 0; r < 4; ++r)
      std::ofstream(run / sub / ("rank-" + std::to_string(r) + ".log")) << lines(r, 0.08, 0, 0.03);
  }
  write_run({{0, 1.369}, {0, 1.364}, {1.353, 0}, {0, 1.374}});
  Diagnosis d = diagnose(collect_inputs({run.string()}));
  ASSERT_TRUE(d.slow.has_value()) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{2})) << diagnosis_text(d);
  EXPECT_EQ(d.site, "congestion");
  EXPECT_NE(diagnosis_text(d).find("Culprit:    rank 2"), std::string::npos) << diagnosis_text(d);
  // A delay on both of rank 1's directions: a little on its sends, and it hardly waits on its receives.
  write_run({{0, 2.307}, {0.120, 0.067}, {0, 2.332}, {0, 2.319}});
  EXPECT_EQ(diagnose(collect_inputs({run.string()})).culprit_ranks, (std::vector<int>{1}));
  // Two ranks held back on their sends, or one that also waited on its receives as long as the others:
  // no one rank held the ring back.
  write_run({{0, 1.369}, {0.9, 0.1}, {1.353, 0}, {0, 1.374}});
  EXPECT_TRUE(diagnose(collect_inputs({run.string()})).culprit_ranks.empty());
  write_run({{0, 1.369}, {0, 1.364}, {1.353, 1.2}, {0, 1.374}});
  EXPECT_TRUE(diagnose(collect_inputs({run.string()})).culprit_ranks.empty());
  std::filesystem::remove_all(run);
}

// ncclfi-workload's watchdog line: which collective it waited on, and where.
std::string workload_dog(int rank, int seq, const std::string& where) {
  return "ncclfi-workload: rank " + std::to_string(rank) + ": watchdog: all_reduce (seq " +
         std::to_string(seq) + ") made no progress for 5000 ms (timeout 5 s, waiting in the " + where +
         "): aborting the communicator\n";
}

// PyTorch's watchdog line, as torchrun prefixes it.
std::string torch_dog(int rank, int seq) {
  return "[rank" + std::to_string(rank) + "]:[E1204 02:35:35.586804377 ProcessGroupNCCL.cpp:689] [Rank " +
         std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) +
         ", OpType=ALLREDUCE, NumelIn=266760, NumelOut=266760, Timeout(ms)=10000) ran for 10044 milliseconds "
         "before timing out.\n";
}

// The ranks that finished collective 24 sent the last one all it needed from them: the one still in 24
// is where the data stopped arriving.
TEST(Diagnose, TheRankLeftBehindOnAnEarlierCollectiveIsWhereItStopped) {
  const auto dir = fresh_dir("ncclfi-diagnose-left-behind");
  write_ranks(dir, {workload_dog(0, 25, "GPU stream"), workload_dog(1, 24, "GPU stream"),
                    workload_dog(2, 25, "GPU stream")});
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.stopped_at, 1) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "nic");
  EXPECT_EQ(d.symptom, "hung");
  // PyTorch's sequence numbers say the same.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "job.log") << torch_dog(0, 65) << torch_dog(1, 64) << torch_dog(2, 65);
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).stopped_at, 1);
  // Two ranks behind, or all on one collective: no one rank was left behind.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_ranks(dir, {workload_dog(0, 25, "GPU stream"), workload_dog(1, 24, "GPU stream"),
                    workload_dog(2, 24, "GPU stream")});
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).stopped_at, -1);
  write_ranks(dir, {workload_dog(0, 24, "GPU stream"), workload_dog(1, 24, "GPU stream"),
                    workload_dog(2, 24, "GPU stream")});
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).stopped_at, -1);
  std::filesystem::remove_all(dir);
}

// Rank 1 printed no timeout of its own but answered rank 0's dump signal: its process was alive, and it
// never handed the collective to its GPU (last enqueued 64 < 65).
TEST(Diagnose, ASilentRankThatAnsweredTheDumpSignalHungOnItsHost) {
  const auto dir = fresh_dir("ncclfi-diagnose-alive-but-silent");
  const std::string answered =
      "[rank1]:[E1204 02:37:32.371816970 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
      "Observed flight recorder dump signal from another rank via TCPStore.\n";
  std::ofstream(dir / "job.log") << "step    10  loss 0.852494\n" << torch_dog(0, 65) << answered;
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.alive_but_silent, 1) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{1}));
  EXPECT_EQ(d.site, "host_hang");
  EXPECT_EQ(d.symptom, "hung");
  // Without the answer, rank 1 may as well have died: no host hang is claimed.
  std::ofstream(dir / "job.log") << "[rank1]: step    10  loss 0.852494\n" << torch_dog(0, 65);
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.alive_but_silent, -1) << diagnosis_text(d);
  EXPECT_NE(d.site, "host_hang") << diagnosis_text(d);
  std::filesystem::remove_all(dir);
}

// A job of one rank has no peer to blame: its own watchdog says whether the GPU or the host stopped.
TEST(Diagnose, AJobOfOneRankNamesItsOnlyRankAndWhereItStopped) {
  const auto dir = fresh_dir("ncclfi-diagnose-one-rank");
  const std::string header =
      "# ncclfi-workload: 1 ranks, NCCL 2.28.3, blocking communicator, watchdog on, 5 s, check stops the "
      "job\n";
  write_ranks(dir, {header + workload_dog(0, 29, "GPU stream")});
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_TRUE(d.one_rank_job) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{0}));
  EXPECT_EQ(d.site, "gpu_hang");
  write_ranks(dir, {header + workload_dog(0, 29, "NCCL call")});
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).site, "host_hang");
  // PyTorch says nothing of the job's size; NCCL's init lines do. Its watchdog watches work already
  // handed to the GPU.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "job.log") << "[rank0]:gpu-host:1025:1025 [0] NCCL INFO ncclCommInitRankConfig comm "
                                    "0x5581e2c0 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 18000 commId "
                                    "0x8fa1c2b3d4e5f607 - Init COMPLETE\n"
                                 << torch_dog(0, 35);
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_TRUE(d.one_rank_job) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{0}));
  EXPECT_EQ(d.site, "gpu_hang");
  // A job of two where only rank 0 printed: the silent rank may be the culprit, so rank 0 is not named.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_ranks(dir, {"# ncclfi-workload: 2 ranks, NCCL 2.28.3, blocking communicator, watchdog on, 5 s\n" +
                        workload_dog(0, 29, "GPU stream"),
                    ""});
  d = diagnose(collect_inputs({dir.string()}));
  EXPECT_FALSE(d.one_rank_job) << diagnosis_text(d);
  EXPECT_NE(d.culprit_ranks, (std::vector<int>{0}));
  std::filesystem::remove_all(dir);
}

// In a job of two, the one peer that saw its connection reset is enough, when both ranks failed.
TEST(Diagnose, InAJobOfTwoThePeerThatLostItsConnectionIsEnough) {
  const auto dir = fresh_dir("ncclfi-diagnose-own-failure-of-two");
  const std::string own =
      "[2026-12-04 02:34:36] vm:678:706 [0] plugin_adapters.cc:49 NCCL WARN NET/ncclfi : isend failed: "
      "ncclRemoteError\nncclfi-workload: rank 0: ncclCommGetAsyncError: remote process exited or there was a "
      "network error (6): aborting\n";
  const std::string lost =
      "ncclfi-workload: rank 1: ncclCommGetAsyncError: remote process exited or there was a network error "
      "(6): aborting\n[2026-12-04 02:34:37] vm:679:705 [0] plugin_adapters.cc:49 NCCL WARN NET/ncclfi : test "
      "failed: ECONNRESET\n";
  write_ranks(dir, {own, lost});
  Diagnosis d = diagnose(collect_inputs({dir.string()}));
  EXPECT_EQ(d.failed_on_its_own, 0) << diagnosis_text(d);
  EXPECT_EQ(d.culprit_ranks, (std::vector<int>{0}));
  // A third rank that printed nothing may be the one that died: one lost peer is not enough then, whether
  // its log is there or only the job's header says it existed.
  write_ranks(dir, {own, lost, "step 10\n"});
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).failed_on_its_own, -1);
  std::filesystem::remove(dir / "rank-2.log");
  write_ranks(dir, {"# ncclfi-workload: 3 ranks, NCCL 2.28.3, blocking communicator\n" + own, lost});
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).failed_on_its_own, -1);
  // A rank that only timed out did not fail on its own: its watchdog ended it, and its peer lost it then.
  write_ranks(dir, {workload_dog(0, 29, "GPU stream"), lost});
  EXPECT_EQ(diagnose(collect_inputs({dir.string()})).failed_on_its_own, -1);
  std::filesystem::remove_all(dir);
}

TEST(Diagnose, MissingPathIsBadInput) {
  EXPECT_THROW(collect_inputs({kData + "no-such-case"}), std::invalid_argument);
}

TEST(Diagnose, MoreThanTheFileLimitIsBadInput) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ncclfi-diagnose-many";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i <= kMaxLogFiles; ++i) std::ofstream(dir / ("f" + std::to_string(i)));
  EXPECT_THROW(collect_inputs({dir.string()}), std::invalid_argument);
  std::filesystem::remove(dir / "f0");
  EXPECT_EQ(collect_inputs({dir.string()}).files.size(), kMaxLogFiles);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ncclfi::diagnose
