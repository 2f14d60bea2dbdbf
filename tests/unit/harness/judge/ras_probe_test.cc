// The RAS probe against a fake NCCL RAS server on a real loopback socket.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "history_builder.h"
#include "observe.h"
#include "ras_probe.h"

namespace ncclfi::harness {
namespace {

const char* kReport =
    "NCCL version 2.28.3 compiled with CUDA 12.8\n"
    "\n"
    "Job summary\n"
    "===========\n"
    "\n"
    "Errors\n"
    "======\n"
    "\n"
    "INCOMPLETE\n"
    "  Missing communicator data from 1 job process\n"
    "  Process 4242 on node host1 managing GPU 1\n"
    "\n"
    "#0-0 (0123456789abcdef) INCOMPLETE\n"
    "  Missing communicator data from 1 rank\n"
    "  Rank 1 -- GPU 1 managed by process 4242 on node host1\n"
    "\n"
    "Warnings\n"
    "========\n"
    "\n"
    "TIMEOUT\n"
    "  Encountered 2 communication timeouts while gathering communicator data\n"
    "\n"
    "#0-1 (00000000deadbeef) MISMATCH\n"
    "  Communicator ranks have different AllReduce operation counts\n"
    "  3 ranks have launched up to operation 51\n"
    "  Rank 0 -- GPU 0 managed by process 4241 on node host1\n"
    "  Rank 2 -- GPU 2 managed by process 4243 on node host1\n"
    "  Rank 3 -- GPU 3 managed by process 4244 on node host1\n"
    "  Rank 1 has launched up to operation 50 -- GPU 1 managed by process 4242 on node host1\n"
    "\n";

// A one-connection fake RAS server: answers the handshake and TIMEOUT, records the commands, then
// streams `report` and closes. With `silent`, it accepts and never answers.
class FakeRasServer {
 public:
  FakeRasServer(std::string report, bool silent) : report_(std::move(report)), silent_(silent) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeRasServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> commands() {
    std::lock_guard lock(mu_);
    return commands_;
  }

 private:
  void serve() {
    int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    std::string buffer;
    char chunk[256];
    while (!stop_) {
      size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        std::string cmd = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        {
          std::lock_guard lock(mu_);
          commands_.push_back(cmd);
        }
        if (silent_) continue;
        if (cmd.rfind("CLIENT PROTOCOL", 0) == 0)
          send(c, "SERVER PROTOCOL 2\n");
        else if (cmd.rfind("TIMEOUT", 0) == 0)
          send(c, "OK\n");
        else if (cmd == "STATUS" || cmd == "VERBOSE STATUS") {
          // Stream in two pieces, as NCCL does (summary first, then the communicator sections).
          const std::string r = report_;
          send(c, r.substr(0, r.size() / 2));
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          send(c, r.substr(r.size() / 2));
          ::close(c);
          return;
        }
      }
      ssize_t n = ::recv(c, chunk, sizeof chunk, 0);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    ::close(c);
  }
  static void send(int c, const std::string& s) { (void)::send(c, s.data(), s.size(), MSG_NOSIGNAL); }

  std::string report_;
  bool silent_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> commands_;
};

TEST(RasProbe, ReadsReportAndFindsMissingAndLaggingRanks) {
  FakeRasServer server(kReport, false);
  RasProbeOptions o;
  o.host = "127.0.0.1";
  o.port = server.port();
  o.timeout_s = 5;
  RasReport r = probe_ras(o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.text, kReport);
  EXPECT_EQ(r.missing_ranks, std::vector<int>{1});
  EXPECT_EQ(r.lagging_ranks, std::vector<int>{1});
  ASSERT_GE(r.problems.size(), 3u);
  EXPECT_NE(r.problems[0].find("INCOMPLETE"), std::string::npos);
  auto cmds = server.commands();
  ASSERT_EQ(cmds.size(), 3u);
  EXPECT_EQ(cmds[0], "CLIENT PROTOCOL 2");
  EXPECT_EQ(cmds[1], "TIMEOUT 4");
  EXPECT_EQ(cmds[2], "VERBOSE STATUS");
}

TEST(RasProbe, RecordsRasDetection) {
  FakeRasServer server(kReport, false);
  RasProbeOptions o;
  o.host = "127.0.0.1";
  o.port = server.port();
  RasReport r = probe_ras(o);
  History h;
  record_ras_probe(h, r, testing::at(4), 0);
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].source, "ras");
  EXPECT_EQ(h.events[0].fields["missing"], nlohmann::json::array({1}));
  ASSERT_EQ(h.detections.size(), 1u);
  EXPECT_EQ(h.detections[0].mechanism, "ras");
  EXPECT_EQ(h.detections[0].ts_ns, testing::at(4));
  EXPECT_NE(h.detections[0].evidence.find("missing ranks 1"), std::string::npos);
}

// `ncclras -v` from NCCL 2.28.3 on the 2xH200 host, word for word, while rank 1 of a 2-rank job
// hung before its 30th all_reduce (scenarios/gpu/gpu-api-hang-ras.json): rank 1 is the one behind.
const char* kRealHangReport =
    "NCCL version 2.28.3 compiled with CUDA 13.0\n"
    "CUDA runtime version 13000, driver version 13000\n"
    "\n"
    "Job summary\n"
    "===========\n"
    "\n"
    "  Nodes  Processes         GPUs  Processes     GPUs\n"
    "(total)   per node  per process    (total)  (total)\n"
    "      1          2            1          2        2\n"
    "\n"
    "Communicators... (0.00s)\n"
    "=============\n"
    "\n"
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
    "    #  in group  per comm  per node  per comm  in group\n"
    "    0         1         1         2         2         2   RUNNING  MISMATCH\n"
    "\n"
    "Errors\n"
    "======\n"
    "\n"
    "Warnings\n"
    "========\n"
    "\n"
    "#0-0 (b4e38508e4c591a4) MISMATCH\n"
    "  Communicator ranks have different AllReduce operation counts\n"
    "  Rank 0 has launched up to operation 33 -- GPU 0 managed by process 10170 on node 192.0.2.2\n"
    "  Rank 1 has launched up to operation 29 -- GPU 1 managed by process 10171 on node 192.0.2.2\n"
    "\n";

TEST(RasProbe, RealNccl228HangReportNamesTheLaggingRank) {
  RasReport r;
  r.ok = true;
  r.text = kRealHangReport;
  parse_ras_report(r);
  EXPECT_TRUE(r.missing_ranks.empty());
  EXPECT_EQ(r.lagging_ranks, std::vector<int>({1}));
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("MISMATCH: Communicator ranks have different AllReduce operation counts"),
            std::string::npos);
}

TEST(RasProbe, HealthyReportIsNotADetection) {
  RasReport r;
  r.ok = true;
  r.text = "NCCL version 2.28.3\n\nErrors\n======\n\nWarnings\n========\n\n";
  parse_ras_report(r);
  EXPECT_TRUE(r.missing_ranks.empty());
  EXPECT_TRUE(r.problems.empty());
  History h;
  record_ras_probe(h, r, 1, 0);
  EXPECT_TRUE(h.detections.empty());
  EXPECT_EQ(h.events.size(), 1u);
}

TEST(RasProbe, SilentServerTimesOutInBoundedTime) {
  FakeRasServer server("", true);
  RasProbeOptions o;
  o.host = "127.0.0.1";
  o.port = server.port();
  o.timeout_s = 0.3;
  auto start = std::chrono::steady_clock::now();
  RasReport r = probe_ras(o);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("handshake"), std::string::npos) << r.error;
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST(RasProbe, RefusedConnectionIsAnError) {
  int port;
  {
    FakeRasServer server("", true);  // take a free port, then free it
    port = server.port();
    // connect once so the server thread's accept returns
    RasProbeOptions o;
    o.host = "127.0.0.1";
    o.port = port;
    o.timeout_s = 0.1;
    probe_ras(o);
  }
  RasProbeOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.timeout_s = 1;
  RasReport r = probe_ras(o);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.error.empty());
  History h;
  record_ras_probe(h, r, 1, 0);
  EXPECT_TRUE(h.detections.empty());
}

TEST(RasAddress, FromEnvironmentValue) {
  auto d = ras_address_from_env(nullptr);
  EXPECT_EQ(d.host, "localhost");
  EXPECT_EQ(d.port, 28028);
  auto a = ras_address_from_env("10.1.2.3:29000");
  EXPECT_EQ(a.host, "10.1.2.3");
  EXPECT_EQ(a.port, 29000);
  auto b = ras_address_from_env("hostonly");
  EXPECT_EQ(b.host, "hostonly");
  EXPECT_EQ(b.port, 28028);
  auto bad = ras_address_from_env("h:notaport");
  EXPECT_EQ(bad.port, 28028);
}

}  // namespace
}  // namespace ncclfi::harness
