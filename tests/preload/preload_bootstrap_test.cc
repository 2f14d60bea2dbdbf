// api bootstrap_unreachable: the preload's connect() refuses a rank's connections to NCCL's bootstrap root
// (the address in the unique id its communicator was created with) or to the job's rendezvous
// (MASTER_ADDR:MASTER_PORT), with the fault's errno, and lets every other connection through.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "preload_fixture.h"

namespace ncclfi::test {
namespace {

// A listening socket on a loopback port of its own, closed at the end of the test.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd, 16);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd); }
};

class PreloadBootstrapTest : public PreloadTest {
 protected:
  Listener root, rendezvous, other;
  std::map<std::string, std::string> env() const {
    return {
        {"NCCLFI_RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(rendezvous.port)}};
  }
  std::vector<std::string> args() const {
    // The root named in the unique id, then connections to the root twice, the rendezvous and another port.
    return {"connect",
            std::to_string(root.port),
            std::to_string(root.port),
            std::to_string(root.port),
            std::to_string(rendezvous.port),
            std::to_string(other.port)};
  }
  std::string said(int port, const std::string& result) const {
    return "connect " + std::to_string(port) + " " + result;
  }
};

TEST_F(PreloadBootstrapTest, WithoutAPlanEveryConnectionGoesThrough) {
  const auto r = run(args(), env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(said(root.port, "ok")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(said(rendezvous.port, "ok")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(said(other.port, "ok")), std::string::npos) << r.out;
}

TEST_F(PreloadBootstrapTest, TheRootsConnectionsFailWithTheErrnoEveryTimeAndNoOtherDoes) {
  write_plan(json::array({fault("no-route", "bootstrap_unreachable", {{"errno", "EHOSTUNREACH"}},
                                {{"ranks", {0}}, {"ops", {"root"}}}, {{"count", 0}})}));
  const auto r = run(args(), env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(said(root.port, "errno EHOSTUNREACH") + "\n" + said(root.port, "errno EHOSTUNREACH")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(said(rendezvous.port, "ok")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(said(other.port, "ok")), std::string::npos) << r.out;
  const auto injected = events("inject");
  ASSERT_EQ(injected.size(), 2u);
  for (const auto& e : injected) {
    EXPECT_EQ(e["point"], "nccl/bootstrap/root");
    EXPECT_EQ(e["errno_name"], "EHOSTUNREACH");
    EXPECT_EQ(e["to"], "127.0.0.1:" + std::to_string(root.port));
    EXPECT_EQ(e["rank"], 0);
  }
}

TEST_F(PreloadBootstrapTest, TheRendezvousIsRefusedOnceByDefaultAndOnlyOnTheTargetedRank) {
  write_plan(json::array({fault("refused", "bootstrap_unreachable", json::object(),
                                {{"ranks", {0}}, {"ops", {"rendezvous"}}}, json::object())}));
  const auto r = run(args(), env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(said(rendezvous.port, "errno ECONNREFUSED")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(said(root.port, "ok")), std::string::npos) << r.out;
  ASSERT_EQ(events("inject").size(), 1u);
  EXPECT_EQ(events("inject")[0]["point"], "nccl/bootstrap/rendezvous");

  auto other_rank = env();
  other_rank["NCCLFI_RANK"] = "1";
  std::filesystem::remove(path("events.jsonl"));
  const auto untouched = run(args(), other_rank);
  EXPECT_NE(untouched.out.find(said(rendezvous.port, "ok")), std::string::npos) << untouched.out;
  EXPECT_TRUE(events("inject").empty());
}

}  // namespace
}  // namespace ncclfi::test
