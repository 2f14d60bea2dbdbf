// Strangers on the shim's listening port: a process that connects and says nothing (or a few bytes of
// a hello) must not keep its socket open for the listener's life, and must not keep a real peer out.
// Before, every accepted socket waited for its hello for as long as the listener lived.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

int open_fds() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(dir)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(dir);
  }
  return n - 1;  // the directory's own fd
}

// The port of this process's listening TCP socket, found without knowing the handle's layout.
int listening_port() {
  for (int fd = 3; fd < 4096; ++fd) {
    int listening = 0;
    socklen_t len = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening == 0) continue;
    sockaddr_in addr{};
    len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 && addr.sin_family == AF_INET)
      return ntohs(addr.sin_port);
  }
  return -1;
}

int connect_stranger(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return -1;
  return fd;
}

// The listener closed its end: the stranger reads end of file (or a reset).
bool dropped_by_listener(int fd) {
  char byte = 0;
  const ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

TEST(RobustShimListener, SilentStrangersAreDroppedAndTheJobStillConnects) {
  constexpr int kStrangers = 300;  // more than the listener keeps waiting at once
  const int code = run_child({{"NCCLFI_NET_HELLO_TIMEOUT_MS", "200"}}, [] {
    void* ctx = nullptr;
    auto plugin = load_and_init(shim_path(), &ctx);
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listen_comm = nullptr;
    CHILD_CHECK(plugin->listen(ctx, 0, handle, &listen_comm) == ncclSuccess && listen_comm, "listen");
    const int port = listening_port();
    CHILD_CHECK(port > 0, "no listening socket found");
    const int fds_before = open_fds();
    std::vector<int> strangers;
    for (int i = 0; i < kStrangers; ++i) {
      const int fd = connect_stranger(port);
      CHILD_CHECK(fd >= 0, "stranger %d could not connect", i);
      if (i % 2 == 1) CHILD_CHECK(send(fd, "NCC", 3, MSG_NOSIGNAL) == 3, "a third of a hello");
      strangers.push_back(fd);
      // NCCL's proxy keeps calling accept(): the backlog never fills, every stranger is taken in.
      void* none = nullptr;
      CHILD_CHECK(plugin->accept(listen_comm, &none) == ncclSuccess && none == nullptr, "accept");
    }
    // The real peer connects while the strangers wait to be dropped.
    void* send_comm = nullptr;
    void* recv_comm = nullptr;
    double t0 = now_ms();
    while (send_comm == nullptr || recv_comm == nullptr) {
      if (send_comm == nullptr)
        CHILD_CHECK(plugin->connect(ctx, 0, handle, &send_comm) == ncclSuccess, "connect");
      if (recv_comm == nullptr) CHILD_CHECK(plugin->accept(listen_comm, &recv_comm) == ncclSuccess, "accept");
      CHILD_CHECK(now_ms() - t0 < 10000, "the real peer did not connect within 10 s beside %d strangers",
                  kStrangers);
    }
    // NCCL keeps calling accept() for its other connections: the strangers are dropped on the way.
    t0 = now_ms();
    size_t dropped = 0;
    while (dropped < strangers.size()) {
      void* none = nullptr;
      CHILD_CHECK(plugin->accept(listen_comm, &none) == ncclSuccess && none == nullptr, "accept");
      dropped = 0;
      for (int fd : strangers) dropped += dropped_by_listener(fd) ? 1U : 0U;
      CHILD_CHECK(now_ms() - t0 < 20000, "after 20 s, %zu of %d strangers still held open",
                  strangers.size() - dropped, kStrangers);
      usleep(10000);
    }
    for (int fd : strangers) close(fd);
    CHILD_CHECK(plugin->close_send(send_comm) == ncclSuccess, "closeSend");
    CHILD_CHECK(plugin->close_recv(recv_comm) == ncclSuccess, "closeRecv");
    // Every socket the strangers cost the listener is released while it still listens.
    CHILD_CHECK(open_fds() == fds_before, "%d fds open, %d before the strangers", open_fds(), fds_before);
    CHILD_CHECK(plugin->close_listen(listen_comm) == ncclSuccess, "closeListen");
    return 0;
  });
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace ncclfi::plugin_test
