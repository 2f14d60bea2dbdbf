// Strangers on the workloads' MASTER_PORT: silent connections, a bogus length prefix, a hello without
// the job's key. Each is refused and logged, and the real ranks still meet within their timeout. Before,
// rank 0 took the first connection for a rank: a silent one made both ranks fail their bootstrap after
// the whole timeout.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include <gtest/gtest.h>

#include "ncclfi/workload_contract.h"
#include "rendezvous.h"
#include "test_support.h"

namespace ncclfi {
namespace {

using std::chrono::milliseconds;

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Connects to 127.0.0.1:port, retrying while nobody listens yet (at most 10 s); -1 on failure.
int connect_when_listening(int port) {
  for (int i = 0; i < 200; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
    ::close(fd);
    ::usleep(50000);
  }
  return -1;
}

RendezvousInfo rank_info(int rank, int port) {
  RendezvousInfo info;
  info.rank = rank;
  info.world_size = 2;
  info.master_addr = "127.0.0.1";
  info.master_port = port;
  info.job_key = "the-job-key";
  return info;
}

TEST(RobustRendezvous, StrangersAreRefusedAndTheRanksStillMeet) {
  const int port = free_port();
  const pid_t rank0 = test::spawn([=] {
    Rendezvous rv(rank_info(0, port), milliseconds(20000));
    return rv.allgather("zero") == std::vector<std::string>{"zero", "one"} ? 0 : 1;
  });
  std::vector<int> strangers;
  // Silent ones, more than the timeout would allow were they heard one after another (2 s each).
  for (int i = 0; i < 20; ++i) strangers.push_back(connect_when_listening(port));
  const int bogus = connect_when_listening(port);
  const uint32_t huge = 0xFFFFFFFFu;
  ASSERT_EQ(::send(bogus, &huge, sizeof(huge), 0), 4);  // a length prefix, then nothing
  strangers.push_back(bogus);
  const int keyless = connect_when_listening(port);
  const uint32_t hello[4] = {htonl(0x4e434649u), htonl(1u), 0x12345678u, 0x9abcdef0u};  // wrong key hash
  ASSERT_EQ(::send(keyless, hello, sizeof(hello), 0), static_cast<ssize_t>(sizeof(hello)));
  strangers.push_back(keyless);
  for (int fd : strangers) ASSERT_GE(fd, 0);
  const pid_t rank1 = test::spawn([=] {
    Rendezvous rv(rank_info(1, port), milliseconds(20000));
    return rv.allgather("one") == std::vector<std::string>{"zero", "one"} ? 0 : 1;
  });
  EXPECT_EQ(test::wait_exit(rank0), 0);
  EXPECT_EQ(test::wait_exit(rank1), 0);
  for (int fd : strangers) ::close(fd);
}

}  // namespace
}  // namespace ncclfi
