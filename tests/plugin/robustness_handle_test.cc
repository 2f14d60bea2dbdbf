// A connect handle arrives from another process through NCCL's bootstrap: a forged one must be refused,
// never dereferenced. Before, the handle carried the connector's state as a pointer, and a handle with
// a made-up pointer killed the process with SIGBUS.
#include <cstring>

#include <gtest/gtest.h>

#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

TEST(RobustShimHandle, ForgedConnectStateIsRefusedNotDereferenced) {
  const int code = run_child({}, [] {
    void* ctx = nullptr;
    auto plugin = load_and_init(shim_path(), &ctx);
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listen_comm = nullptr;
    CHILD_CHECK(plugin->listen(ctx, 0, handle, &listen_comm) == ncclSuccess && listen_comm, "listen");
    // A peer's forgery: past the magic and the socket count, every zero byte made 0x41. Whatever field
    // keeps the connector's state is no longer empty and names nothing this process made.
    char forged[NCCL_NET_HANDLE_MAXSIZE];
    std::memcpy(forged, handle, sizeof(handle));
    for (size_t i = 8; i < sizeof(forged); ++i) {
      if (forged[i] == 0) forged[i] = 0x41;
    }
    void* forged_comm = nullptr;
    CHILD_CHECK(plugin->connect(ctx, 0, forged, &forged_comm) != ncclSuccess && forged_comm == nullptr,
                "a forged handle was accepted");
    // The genuine handle still connects.
    char started[NCCL_NET_HANDLE_MAXSIZE];
    std::memcpy(started, handle, sizeof(handle));
    void* send_comm = nullptr;
    void* recv_comm = nullptr;
    const double t0 = now_ms();
    while (send_comm == nullptr || recv_comm == nullptr) {
      if (send_comm == nullptr)
        CHILD_CHECK(plugin->connect(ctx, 0, started, &send_comm) == ncclSuccess, "connect");
      if (recv_comm == nullptr) CHILD_CHECK(plugin->accept(listen_comm, &recv_comm) == ncclSuccess, "accept");
      CHILD_CHECK(now_ms() - t0 < 5000, "no connection after 5 s");
    }
    CHILD_CHECK(plugin->close_send(send_comm) == ncclSuccess, "closeSend");
    CHILD_CHECK(plugin->close_recv(recv_comm) == ncclSuccess, "closeRecv");
    CHILD_CHECK(plugin->close_listen(listen_comm) == ncclSuccess, "closeListen");
    return 0;
  });
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace ncclfi::plugin_test
