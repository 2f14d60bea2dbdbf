// ncclfi-cpu-ring end to end over the shim: clean runs verify, drop trips the watchdog within
// timeout + 1 s, corrupt fails verification, usage errors exit 64.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

struct RingRun {
  std::vector<int> exit_codes;
  std::vector<nlohmann::json> events;
  std::vector<std::string> output;  // each rank's stdout and stderr
  double seconds = 0;
};

using RankEnv = std::vector<std::pair<std::string, std::string>>;

// Launches `ranks` ncclfi-cpu-ring processes with `args`, optionally under a plan and with more
// environment (`env` for every rank, then `per_rank[r]` for rank r); waits up to 60 s.
RingRun run_ring(int ranks, const std::vector<std::string>& args, const std::string& plan = "",
                 const RankEnv& env = {}, const std::vector<RankEnv>& per_rank = {}) {
  const std::string dir = write_temp_file("marker", "");
  const std::string events = dir + ".events.jsonl";
  const std::string port = std::to_string(free_port());
  const std::string exe = bin_dir() + "/ncclfi-cpu-ring";
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  const double t0 = now_ms();
  for (int r = 0; r < ranks; ++r) {
    logs.push_back(dir + ".rank-" + std::to_string(r) + ".log");
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      const int out = open(logs.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
      for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
      if (static_cast<size_t>(r) < per_rank.size()) {
        for (const auto& [name, value] : per_rank[static_cast<size_t>(r)])
          setenv(name.c_str(), value.c_str(), 1);
      }
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", port.c_str(), 1);
      setenv("NCCLFI_EVENTS", events.c_str(), 1);
      if (!plan.empty()) setenv("NCCLFI_PLAN", plan.c_str(), 1);
      std::vector<char*> argv{const_cast<char*>(exe.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(exe.c_str(), argv.data());
      _exit(127);
    }
    pids.push_back(pid);
  }
  RingRun run;
  for (pid_t pid : pids) {
    int status = 0;
    for (;;) {
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      if (now_ms() - t0 > 60000) {
        for (pid_t p : pids) kill(p, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    run.exit_codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  run.seconds = (now_ms() - t0) / 1000;
  for (const std::string& log : logs) run.output.push_back(read_file(log));
  std::stringstream lines(read_file(events));
  std::string line;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) run.events.push_back(j);
  }
  return run;
}

std::vector<nlohmann::json> of_kind(const RingRun& run, const std::string& event) {
  std::vector<nlohmann::json> out;
  for (const auto& e : run.events) {
    if (e.value("event", "") == event) out.push_back(e);
  }
  return out;
}

std::string plan_file(const nlohmann::json& fault) {
  return write_temp_file("plan.json", nlohmann::json{{"seed", 1}, {"faults", {fault}}}.dump());
}

TEST(CpuRing, CleanRunVerifiesEveryIteration) {
  const auto run =
      run_ring(3, {"--bytes", "256K", "--iters", "5", "--warmup", "1", "--check", "--timeout-s", "10"});
  EXPECT_EQ(run.exit_codes, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(of_kind(run, "start").size(), 3u);
  EXPECT_EQ(of_kind(run, "op").size(), 18u);
  const auto done = of_kind(run, "done");
  ASSERT_EQ(done.size(), 3u);
  for (const auto& d : done) EXPECT_TRUE(d["verified"].get<bool>());
  for (const auto& op : of_kind(run, "op")) {
    EXPECT_EQ(op["bytes"], 256 * 1024);
    EXPECT_TRUE(op.contains("dur_us") && op.contains("seq"));
  }
  EXPECT_TRUE(of_kind(run, "inject").empty());
}

TEST(CpuRing, DropTripsTheWatchdogWithinTimeoutPlusOneSecond) {
  const std::string plan = plan_file({{"id", "drop1"},
                                      {"layer", "net"},
                                      {"kind", "drop"},
                                      {"target", {{"ranks", {1}}, {"direction", "recv"}}},
                                      {"trigger", {{"after_calls", 10}}}});
  const auto run = run_ring(4, {"--bytes", "1M", "--iters", "50", "--check", "--timeout-s", "2"}, plan);
  EXPECT_EQ(run.exit_codes[1], 3) << "the rank that lost a completion must abort through its watchdog";
  for (int code : run.exit_codes) EXPECT_TRUE(code == 3 || code == 2) << code;
  const auto inject = of_kind(run, "inject");
  ASSERT_EQ(inject.size(), 1u);
  const auto fired = of_kind(run, "watchdog_fired");
  ASSERT_FALSE(fired.empty());
  for (const auto& f : fired) {
    const double after_inject_s =
        static_cast<double>(f["mono_ns"].get<int64_t>() - inject[0]["mono_ns"].get<int64_t>()) / 1e9;
    EXPECT_LE(after_inject_s, 3.0) << f.dump();
    EXPECT_GE(f["waited_ms"].get<int64_t>(), 2000);
    EXPECT_LE(f["waited_ms"].get<int64_t>(), 3000);
    EXPECT_EQ(f["op"], "allreduce");
    EXPECT_TRUE(f.contains("seq"));
  }
  EXPECT_FALSE(of_kind(run, "abort").empty());
  // Its watchdog line says how long it waited and where in the ring: rank 1 waits to receive from rank 0,
  // whose send completed (the receive was dropped), at an earlier step than the ranks behind it.
  EXPECT_NE(run.output[1].find("(waited 2."), std::string::npos) << run.output[1];
  EXPECT_NE(run.output[1].find("waits to receive from rank 0"), std::string::npos) << run.output[1];
}

// A rank whose sends are throttled holds the whole ring back: every rank is as slow, but its last line
// says it waited on its sends, while every other rank waited on its receives.
TEST(CpuRing, TheRankHeldBackOnItsSendsSaysSoInItsLastLine) {
  const std::string plan = plan_file({{"id", "slow-link"},
                                      {"layer", "net"},
                                      {"kind", "throttle"},
                                      {"params", {{"gbps", 0.1}}},
                                      {"target", {{"ranks", {2}}, {"direction", "send"}}},
                                      {"trigger", {{"count", 0}}}});
  const auto run = run_ring(4, {"--bytes", "512K", "--iters", "10", "--timeout-s", "20"}, plan);
  ASSERT_EQ(run.exit_codes, (std::vector<int>{0, 0, 0, 0}));
  const std::regex waits(
      R"(rank (\d)/4: waited ([\d.]+) s on its sends to rank \d and ([\d.]+) s on its receives)");
  for (size_t r = 0; r < 4; ++r) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(run.output[r], m, waits)) << run.output[r];
    EXPECT_EQ(std::stoul(m[1]), r);
    const double send = std::stod(m[2]), recv = std::stod(m[3]);
    if (r == 2) {
      EXPECT_GT(send, 0.2) << run.output[r];
      EXPECT_LT(recv, send / 4) << run.output[r];
    } else {
      EXPECT_GT(recv, 0.2) << run.output[r];
      EXPECT_LT(send, recv / 4) << run.output[r];
    }
  }
}

TEST(CpuRing, CorruptFailsVerificationWithCheck) {
  const std::string plan = plan_file({{"id", "c1"},
                                      {"layer", "net"},
                                      {"kind", "corrupt"},
                                      {"params", {{"bits", 2}}},
                                      {"target", {{"ranks", {2}}}},
                                      {"trigger", {{"after_calls", 4}}}});
  const auto run = run_ring(3, {"--bytes", "64K", "--iters", "10", "--check", "--timeout-s", "10"}, plan);
  EXPECT_EQ(run.exit_codes[2], 4);
  const auto mismatch = of_kind(run, "result_mismatch");
  ASSERT_FALSE(mismatch.empty());
  EXPECT_GE(mismatch[0]["wrong"].get<int>(), 1);
}

TEST(CpuRing, CorruptWithoutCheckFinishesAndReportsTheMismatch) {
  const std::string plan = plan_file({{"id", "c1"},
                                      {"layer", "net"},
                                      {"kind", "corrupt"},
                                      {"params", {{"bits", 1}}},
                                      {"target", {{"ranks", {0}}}},
                                      {"trigger", {{"after_calls", 2}}}});
  const auto run = run_ring(2, {"--bytes", "64K", "--iters", "4", "--timeout-s", "10"}, plan);
  EXPECT_EQ(run.exit_codes, (std::vector<int>{0, 0}));
  EXPECT_FALSE(of_kind(run, "result_mismatch").empty());
  bool some_unverified = false;
  for (const auto& d : of_kind(run, "done")) some_unverified |= !d["verified"].get<bool>();
  EXPECT_TRUE(some_unverified);
}

TEST(CpuRing, NetErrorExitsTwoWithNcclErrorEvent) {
  const std::string plan = plan_file({{"id", "e1"},
                                      {"layer", "net"},
                                      {"kind", "error"},
                                      {"params", {{"code", "ncclSystemError"}}},
                                      {"target", {{"ranks", {0}}}},
                                      {"trigger", {{"after_calls", 3}}}});
  const auto run = run_ring(2, {"--bytes", "64K", "--iters", "10", "--timeout-s", "5"}, plan);
  EXPECT_EQ(run.exit_codes[0], 2);
  const auto errors = of_kind(run, "nccl_error");
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0]["code"], 2);
}

// The IB persona: a dead NIC on rank 1 of a 4-rank ring is seen from both ends. Rank 1 and its two
// neighbours (0 sends to it, 2 receives from it) each print the completion-error WARN of the NCCL release
// given, in its exact format (NCCL's logger prefix, file and line included), naming the connection's peer
// address (each rank its own 127.0.0.R+1, as if on its own node) and their own HCA, and fail with the
// code that release returns.
struct IbRun {
  RingRun run;
  std::vector<std::vector<std::string>> ib_lines;     // per rank: its lines that say "Got completion"
  std::vector<std::vector<std::string>> async_lines;  // per rank: its lines that say "async"
};

IbRun nic_down_in_ib_persona(const std::string& version, const RankEnv& extra = {}) {
  const std::string plan = plan_file({{"id", "nic"},
                                      {"layer", "net"},
                                      {"kind", "nic_down"},
                                      {"target", {{"ranks", {1}}}},
                                      {"trigger", {{"after_calls", 20}}}});
  RankEnv env = {{"NCCLFI_NET_PERSONA", "ib"},
                 {"NCCLFI_NCCL_VERSION", version},
                 {"NCCL_DEBUG", "WARN"},
                 {"NCCL_IB_TIMEOUT", "14"}};  // 4.096 us x 2^14 x 8 tries: 0.54 s
  env.insert(env.end(), extra.begin(), extra.end());
  IbRun out;
  out.run = run_ring(4, {"--bytes", "64K", "--iters", "200", "--check", "--timeout-s", "20"}, plan, env);
  for (const std::string& text : out.run.output) {
    std::vector<std::string> lines, async;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.find("Got completion") != std::string::npos) lines.push_back(line);
      if (line.find("async") != std::string::npos) async.push_back(line);
    }
    out.ib_lines.push_back(lines);
    out.async_lines.push_back(async);
  }
  return out;
}

// The IB persona opens as NCCL's IB transport does under NCCL_DEBUG=INFO: one INFO line per process that
// names its HCA and its out-of-band address (net_ib.cc's "NET/IB : Using ...; OOB ..."), between NCCL's
// version and "Using network IB". It is what maps an address in a peer's completion error to a node.
TEST(CpuRing, IbPersonaAnnouncesEachRanksHcaAndAddressAsNcclsIbTransportDoes) {
  const auto run = run_ring(3, {"--bytes", "64K", "--iters", "3", "--timeout-s", "10"}, "",
                            {{"NCCLFI_NET_PERSONA", "ib"}, {"NCCL_DEBUG", "INFO"}});
  for (int rank = 0; rank < 3; ++rank) {
    const std::string& out = run.output[static_cast<size_t>(rank)];
    SCOPED_TRACE(out);
    const std::regex line(R"([^\s.]+:\d+:\d+ \[0\] NCCL INFO NET/IB : Using \[0\]mlx5_)" +
                          std::to_string(rank) + R"(:1/IB \[RO\]; OOB lo:127\.0\.0\.)" +
                          std::to_string(rank + 1) + "<0>");
    std::stringstream in(out);
    int seen = 0;
    for (std::string l; std::getline(in, l);) seen += std::regex_match(l, line) ? 1 : 0;
    EXPECT_EQ(seen, 1);
    EXPECT_LT(out.find("NCCL version"), out.find("NET/IB : Using"));
    EXPECT_LT(out.find("NET/IB : Using"), out.find("Using network IB"));
    EXPECT_EQ(run.exit_codes[static_cast<size_t>(rank)], 0);
  }
}

TEST(CpuRing, IbPersonaNicDownIsSeenFromBothEndsInTheFormatOf2_28_7) {
  const IbRun ib = nic_down_in_ib_persona("2.28.7");
  // NCCL 2.28.7's WARN at transport/net_ib.cc:2543-2546, through its logger's prefix.
  for (int rank : {0, 1, 2}) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ":\n" + ib.run.output[static_cast<size_t>(rank)]);
    ASSERT_FALSE(ib.ib_lines[static_cast<size_t>(rank)].empty());
    const std::regex line(
        // NCCL 2.26.2 and later stamp a WARN with NCCL_DEBUG_TIMESTAMP_FORMAT's default, "[%F %T] ".
        R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] )"
        R"([^\s.]+:\d+:\d+ \[0\] transport/net_ib\.cc:2546 NCCL WARN NET/IB: Got completion from )"
        R"(peer 127\.0\.0\.\d+<\d+> with status=IBV_WC_RETRY_EXC_ERR\(12\) )"
        R"(opcode=(IBV_WC_RDMA_WRITE\(1\) reqSize=\d+ vendor_err=129 req_type=Send|)"
        R"(IBV_WC_SEND\(0\) reqSize=0 vendor_err=129 req_type=Recv) hca mlx5_)" +
        std::to_string(rank));
    for (const std::string& l : ib.ib_lines[static_cast<size_t>(rank)])
      EXPECT_TRUE(std::regex_match(l, line)) << l;
    EXPECT_EQ(ib.run.exit_codes[static_cast<size_t>(rank)], 2);
  }
  // The rank receiving from the dead NIC fails a receive naming the dead rank's node (rank 1 is 127.0.0.2:
  // one loopback address per rank), once its own retry budget has passed since the link went. (Rank 0's
  // send may have left before the NIC died: it fails on whichever connection it uses next, as on IB.)
  EXPECT_NE(ib.ib_lines[2][0].find("peer 127.0.0.2<"), std::string::npos) << ib.ib_lines[2][0];
  EXPECT_NE(ib.ib_lines[2][0].find("req_type=Recv"), std::string::npos);
  // Only the host of the dead NIC sees its port go down: NCCL 2.28.7's async-event WARN
  // (transport/net_ib.cc:253), once, before its own completion errors.
  ASSERT_EQ(ib.async_lines[1].size(), 1u) << ib.run.output[1];
  EXPECT_TRUE(
      std::regex_match(ib.async_lines[1][0],
                       std::regex(R"(\[[-0-9 :]+\] [^\s.]+:\d+:\d+ \[0\] transport/net_ib\.cc:253 NCCL WARN )"
                                  R"(NET/IB : mlx5_1:1 Got non-fatal async event: port error\(10\))")))
      << ib.async_lines[1][0];
  EXPECT_LT(ib.run.output[1].find("port error"), ib.run.output[1].find("Got completion"));
  for (int rank : {0, 2, 3}) EXPECT_TRUE(ib.async_lines[static_cast<size_t>(rank)].empty());
  const auto injected = of_kind(ib.run, "inject");
  ASSERT_EQ(injected.size(), 1u);
  for (const auto& e : of_kind(ib.run, "nccl_error")) {
    if (e["rank"] != 2) continue;
    const double after_s =
        static_cast<double>(e["mono_ns"].get<int64_t>() - injected[0]["mono_ns"].get<int64_t>()) / 1e9;
    EXPECT_GE(after_s, 0.53) << "the peer waited out its retries";  // 536.9 ms, less the post's head start
    EXPECT_LE(after_s, 3.0);
  }
  // Every rank's failure is ncclRemoteError (6), as 2.28.7's ncclIbTest returns, and only the dead rank's
  // shim fired a fault.
  for (const auto& e : of_kind(ib.run, "nccl_error")) EXPECT_EQ(e["code"], 6) << e.dump();
  EXPECT_EQ(injected[0]["rank"], 1);
  // Nothing in the shim's own voice: the persona prints what NCCL's IB transport would, no more.
  for (const std::string& text : ib.run.output) EXPECT_EQ(text.find("NET/ncclfi"), std::string::npos) << text;
}

// Two nodes of two ranks, as the harness starts ranks that share a node name: each rank its node's
// ranks, its index there and the node's NCCL_HOSTID.
std::vector<RankEnv> two_nodes_of_two() {
  std::vector<RankEnv> env;
  for (int r = 0; r < 4; ++r) {
    env.push_back({{"LOCAL_RANK", std::to_string(r % 2)},
                   {"NCCLFI_NODE_RANKS", r < 2 ? "0,1" : "2,3"},
                   {"NCCL_HOSTID", r < 2 ? "gpu-node05" : "gpu-node12"}});
  }
  return env;
}

TEST(CpuRing, RanksOfOneNodeAreOneNodeInTheInitSectionAndTalkP2p) {
  const auto run = run_ring(4, {"--bytes", "64K", "--iters", "3", "--timeout-s", "10"}, "",
                            {{"NCCLFI_NET_PERSONA", "ib"}, {"NCCL_DEBUG", "INFO"}}, two_nodes_of_two());
  for (int r = 0; r < 4; ++r) {
    const std::string& out = run.output[static_cast<size_t>(r)];
    SCOPED_TRACE(out);
    EXPECT_EQ(run.exit_codes[static_cast<size_t>(r)], 0);
    EXPECT_NE(out.find(" rank " + std::to_string(r) + " nRanks 4 nNodes 2 localRanks 2 localRank " +
                       std::to_string(r % 2) + " MNNVL 0"),
              std::string::npos);
    // Each rank's own HCA is its GPU's index on the node.
    EXPECT_NE(out.find("NET/IB : Using [0]mlx5_" + std::to_string(r % 2) + ":1/IB"), std::string::npos);
  }
  EXPECT_NE(run.output[0].find("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"), std::string::npos);
  EXPECT_NE(run.output[0].find("Channel 00/0 : 3[1] -> 0[0] [receive] via NET/IB/0/GDRDMA"),
            std::string::npos);
  EXPECT_NE(run.output[1].find("Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/0/GDRDMA"), std::string::npos);
  // The log prefix's device is the rank's GPU, as NCCL prints its cudaDev.
  EXPECT_TRUE(std::regex_search(run.output[1], std::regex(R"([^\s.]+:\d+:\d+ \[1\] NCCL INFO)")));
  EXPECT_EQ(run.output[1].find("[receive]"), std::string::npos) << "a P2P receive prints nothing";
}

// A dead NIC takes only the traffic that leaves the node: rank 1's send to rank 2 (the other node) and
// rank 2's receive from it fail after the retry budget; rank 1's link to rank 0 beside it is NVLink on a
// real node, so neither of them reports an IB error about the other.
TEST(CpuRing, ADeadNicSparesTheLinksInsideItsNode) {
  const std::string plan = plan_file({{"id", "nic"},
                                      {"layer", "net"},
                                      {"kind", "nic_down"},
                                      {"target", {{"ranks", {1}}}},
                                      {"trigger", {{"after_calls", 20}}}});
  const auto run = run_ring(4, {"--bytes", "64K", "--iters", "200", "--timeout-s", "4"}, plan,
                            {{"NCCLFI_NET_PERSONA", "ib"}, {"NCCL_DEBUG", "WARN"}, {"NCCL_IB_TIMEOUT", "14"}},
                            two_nodes_of_two());
  const auto completion_peers = [&](int rank) {
    std::set<std::string> peers;
    std::stringstream in(run.output[static_cast<size_t>(rank)]);
    const std::regex peer(R"(Got completion from peer (127\.0\.0\.\d+)<)");
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, peer)) peers.insert(m[1].str());
    }
    return peers;
  };
  EXPECT_EQ(completion_peers(1), (std::set<std::string>{"127.0.0.3"})) << run.output[1];
  EXPECT_EQ(completion_peers(2), (std::set<std::string>{"127.0.0.2"})) << run.output[2];
  EXPECT_EQ(completion_peers(0).count("127.0.0.2"), 0u) << run.output[0];
  EXPECT_EQ(completion_peers(3).count("127.0.0.3"), 0u) << run.output[3];
  for (int r = 0; r < 4; ++r)
    EXPECT_NE(run.exit_codes[static_cast<size_t>(r)], 0) << run.output[static_cast<size_t>(r)];
}

TEST(CpuRing, IbPersonaWritesTheOldFormsAndCodesOfOlderReleases) {
  {
    const IbRun ib = nic_down_in_ib_persona("2.21.5");
    ASSERT_FALSE(ib.ib_lines[1].empty()) << ib.run.output[1];
    const std::regex line(
        R"(\S+ \[0\] transport/net_ib\.cc:1911 NCCL WARN NET/IB : Got completion from peer )"
        R"(127\.0\.0\.\d+<\d+> with status=12 opcode=[01] len=0 vendor err 129 \((Send|Recv)\))");
    for (const std::string& l : ib.ib_lines[1]) EXPECT_TRUE(std::regex_match(l, line)) << l;
    for (const auto& e : of_kind(ib.run, "nccl_error")) EXPECT_EQ(e["code"], 6) << e.dump();
  }
  {
    // 2.12.12: "with error 12, opcode", and ncclSystemError (2) for the peers, whose code is the release's
    // (the dead rank's is nic_down's own code).
    const IbRun ib = nic_down_in_ib_persona("21212");
    for (int rank : {0, 2}) {
      ASSERT_FALSE(ib.ib_lines[static_cast<size_t>(rank)].empty())
          << ib.run.output[static_cast<size_t>(rank)];
      const std::regex line(
          R"(\S+ \[0\] transport/net_ib\.cc:1199 NCCL WARN NET/IB : Got completion from peer )"
          R"(127\.0\.0\.\d+<\d+> with error 12, opcode [01], len 0, vendor err 129)");
      for (const std::string& l : ib.ib_lines[static_cast<size_t>(rank)]) {
        EXPECT_TRUE(std::regex_match(l, line)) << l;
      }
      EXPECT_EQ(ib.run.exit_codes[static_cast<size_t>(rank)], 2);
    }
    bool peer_system_error = false;
    for (const auto& e : of_kind(ib.run, "nccl_error")) peer_system_error |= e["rank"] != 1 && e["code"] == 2;
    EXPECT_TRUE(peer_system_error);
  }
}

// NCCLFI_QUIET (labs, drills): a rank's output names neither ncclfi nor an injection, and still carries
// the IB lines of the failure.
TEST(CpuRing, QuietRanksPrintNothingThatNamesNcclfiOrAnInjection) {
  const IbRun ib = nic_down_in_ib_persona("2.30.7", {{"NCCLFI_QUIET", "1"}, {"NCCLFI_NET_PERSONA", ""}});
  const std::regex giveaway("ncclfi|inject", std::regex::icase);
  for (size_t rank = 0; rank < ib.run.output.size(); ++rank) {
    EXPECT_FALSE(std::regex_search(ib.run.output[rank], giveaway)) << "rank " << rank << ":\n"
                                                                   << ib.run.output[rank];
  }
  ASSERT_FALSE(ib.ib_lines[1].empty()) << ib.run.output[1];
  EXPECT_NE(ib.ib_lines[1][0].find("transport/net_ib/p2p.cc:690 NCCL WARN NET/IB: Got completion from peer"),
            std::string::npos)
      << ib.ib_lines[1][0];
  EXPECT_NE(ib.run.output[1].find("NET/IB: Got CQE with error"), std::string::npos);
  EXPECT_FALSE(of_kind(ib.run, "inject").empty()) << "the events still record the injection";
}

// NCCL_DEBUG=INFO: each rank's log opens with NCCL's init section (nccl_init_section.h) in NCCL's line
// format, rank 0 alone prints the rings, and the connections come at the first collective; in train mode
// each rank logs the loss of its own minibatch, so the data-parallel ranks' losses differ.
TEST(CpuRing, InfoPrintsNcclsInitSectionAndEachRankItsOwnLoss) {
  const auto run =
      run_ring(3, {"--mode", "train", "--bytes", "16K", "--iters", "3", "--warmup", "0", "--timeout-s", "10"},
               "", {{"NCCL_DEBUG", "INFO"}, {"NCCLFI_NCCL_VERSION", "2.28.9"}, {"NCCLFI_NET_PERSONA", "ib"}});
  ASSERT_EQ(run.exit_codes, (std::vector<int>{0, 0, 0}));
  const std::regex prefix(R"(^[A-Za-z0-9._-]+:\d+:\d+ \[0\] NCCL INFO )");
  std::vector<std::string> step2;
  for (int r = 0; r < 3; ++r) {
    const std::string& out = run.output[static_cast<size_t>(r)];
    std::vector<std::string> info;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_search(line, m, prefix)) info.push_back(m.suffix());
      if (line.rfind("[rank " + std::to_string(r) + "] step 2 loss ", 0) == 0)
        step2.push_back(line.substr(0, line.find(" step_time")));
    }
    ASSERT_GE(info.size(), 10U) << out;
    EXPECT_EQ(info[1], "NCCL version 2.28.9+cuda13.0");
    const auto at = [&](const std::string& start) {
      for (size_t i = 0; i < info.size(); ++i)
        if (info[i].rfind(start, 0) == 0) return static_cast<int>(i);
      return -1;
    };
    EXPECT_GE(at("ncclCommInitRankConfig comm 0x"), 0) << out;
    EXPECT_LT(at("ncclCommInitRankConfig comm 0x"),
              at("Init timings - ncclCommInitRankConfig: rank " + std::to_string(r) + " nranks 3 total "));
    EXPECT_NE(out.find(" rank " + std::to_string(r) + " nRanks 3 nNodes 3 localRanks 1 localRank 0 MNNVL 0"),
              std::string::npos);
    EXPECT_EQ(at("Channel 00/02 : 0 1 2") >= 0, r == 0) << out;
    const std::string recv = "Channel 00/0 : " + std::to_string((r + 2) % 3) + "[0] -> " + std::to_string(r) +
                             "[0] [receive] via NET/IB/0/GDRDMA";
    EXPECT_GT(at(recv), at("Init timings")) << out;
    EXPECT_GT(at("Connected all rings, use ring PXN 0 GDR 1"), at(recv)) << out;
  }
  ASSERT_EQ(step2.size(), 3U);
  EXPECT_NE(step2[0].substr(step2[0].find("loss")), step2[1].substr(step2[1].find("loss")));
  EXPECT_NE(step2[1].substr(step2[1].find("loss")), step2[2].substr(step2[2].find("loss")));
}

TEST(CpuRing, UsageErrorsExit64) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bytes", "12Q"}, {"--iters", "-1"}, {"--no-such-flag"}, {"--bytes", "3"}}) {
    const auto run = run_ring(1, args);
    EXPECT_EQ(run.exit_codes[0], 64) << args[0];
  }
}

}  // namespace
}  // namespace ncclfi::plugin_test
