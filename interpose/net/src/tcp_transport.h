// ncclfi's own TCP transport (modelled on NCCL's Socket transport): per connection one control
// socket carrying a size header (small payloads inline) and `nsocks` data sockets over which large
// payloads are striped; persistent helper threads move the bytes, so progress does not depend on test().
// Host memory only. Sends and receives match in posting order; a send larger than the posted receive
// fails the request with EMSGSIZE.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net_backend.h"

namespace ncclfi::net {

// Data sockets per connection when NCCLFI_NET_NSOCKS is not set. Striping over several sockets pays when
// helper threads copy on spare cores; when the caller moves the bytes (few cores) one thread serves every
// socket in turn, and more sockets only add system calls: with one of two cores kept busy, 1 socket kept
// the shim at 0.93 of a plain TCP stream where 4 gave 0.73 (bench/net/README.md).
inline constexpr int kHelperProgressSockets = 4;
inline constexpr int kCallerProgressSockets = 1;
inline int default_nsocks(bool caller_progress) {
  return caller_progress ? kCallerProgressSockets : kHelperProgressSockets;
}

struct TcpConfig {
  int nsocks = kHelperProgressSockets;  // data sockets per connection (0: everything on the control socket)
  int nthreads = 2;                     // helper threads per connection
  // true: test() moves the bytes while NCCL keeps calling it and the helpers are the backstop (they step in
  // when test() has not run for kCallerBackstopNs). false: the helpers move every byte, test() only polls.
  bool caller_progress = true;
  size_t inline_bytes = 128;     // payloads up to this size ride with the header
  size_t min_chunk = 64 * 1024;  // smallest stripe slice
  int speed_mbps = 100000;       // reported to NCCL (drives its graph search)
  std::string ifname;            // NCCL_SOCKET_IFNAME's first entry; empty: loopback
  std::string device_name = "ncclfi";
  int rank = -1;  // this process's rank, told to the peer (fault targets by peer)
  // On loopback, rank R takes 127.0.0.(R mod 254 + 1) for its listener and its outgoing connections, so
  // the ranks of one host read as separate nodes in the peer addresses NCCL-style lines name (the IB
  // persona); else every rank is 127.0.0.1.
  bool loopback_per_rank = false;
  // An accepted socket that has not said its hello by then is closed (a silent stranger held its fd for
  // the listener's life); so is a connection whose other sockets have not all said theirs.
  int hello_timeout_ms = 20000;
};

// NCCLFI_NET_PROGRESS (`auto`, `caller` or `helpers`) and the CPUs the process may use -> caller progress?
// `auto` picks caller progress below kCallerProgressMaxCpus: with few cores the helper threads and NCCL's
// spinning proxy thread oversubscribe them, with many the helpers copy in parallel on spare cores
// (measured both ways in docs/decisions.md).
inline constexpr int kCallerProgressMaxCpus = 8;
inline bool caller_progress_for(const std::string& mode, int usable_cpus) {
  if (mode == "caller") return true;
  if (mode == "helpers") return false;
  return usable_cpus < kCallerProgressMaxCpus;
}

union TcpAddress {
  sockaddr sa;
  sockaddr_in in4;
  sockaddr_in6 in6;
};

class TcpComm;
struct TcpListenComm;

class TcpTransport final : public NetBackend {
 public:
  explicit TcpTransport(TcpConfig config);
  ~TcpTransport() override;
  const char* kind() const override {
    return config_.caller_progress ? "tcp (bytes moved by test(), helpers as backstop)"
                                   : "tcp (bytes moved by helpers)";
  }
  NetStatus init(void** ctx, uint64_t comm_id, ncclNetCommConfig_t* config,
                 ncclDebugLogger_t logger) override;
  NetStatus finalize(void* ctx) override;
  NetStatus devices(int* ndev) override;
  NetStatus get_properties(int dev, ncclNetProperties_v11_t* props) override;
  NetStatus listen(void* ctx, int dev, void* handle, void** listen_comm) override;
  NetStatus connect(void* ctx, int dev, void* handle, void** send_comm) override;
  NetStatus accept(void* listen_comm, void** recv_comm) override;
  NetStatus reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) override;
  NetStatus dereg_mr(void* comm, void* mhandle) override;
  NetStatus isend(void* send_comm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                  void** request) override;
  NetStatus irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                  void** phandles, void** request) override;
  NetStatus test(void* request, int* done, int* sizes) override;
  NetStatus close_send(void* send_comm) override;
  NetStatus close_recv(void* recv_comm) override;
  NetStatus close_listen(void* listen_comm) override;
  int remote_rank(void* comm) const override;
  std::string peer_address(void* comm) const override;
  std::pair<std::string, std::string> own_interface() const override;
  void sever(void* comm) override;

  const TcpConfig& config() const { return config_; }

 private:
  TcpConfig config_;
  TcpAddress local_{};  // address listen() binds (port 0)
  socklen_t local_len_ = 0;
  NetStatus resolve_local_address();
};

// Whether interface `name` is selected by an NCCL_SOCKET_IFNAME-style spec: "eth,ib" (prefixes),
// "=eth0" (exact names), "^docker,lo" (everything but these prefixes, and never loopback).
bool interface_selected(const std::string& spec, const std::string& name);

}  // namespace ncclfi::net
