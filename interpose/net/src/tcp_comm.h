// One established TCP connection of the transport (either direction): its sockets, request slots and
// helper threads. Posting happens on NCCL's proxy thread; bytes move on the helper threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net_backend.h"
#include "tcp_transport.h"

namespace ncclfi::net {

inline constexpr uint32_t kTcpMagic = 0x4e434649;  // "NCFI"
inline constexpr int kTcpMaxRequests = NCCL_NET_MAX_REQUESTS;

// Sent ahead of every message on the control socket, followed by the payload when it is inline.
struct WireHeader {
  uint64_t size;
  uint32_t magic;
  uint32_t seq;
};

// First bytes on every socket of a connection, so accept() can group and order them.
struct WireHello {
  uint32_t magic;
  uint16_t index;  // 0: control, 1..nsocks: data
  uint16_t nsocks;
  uint64_t conn_id;
  uint64_t listen_id;
  int32_t rank;  // the connecting process's rank
  uint32_t reserved;
};

class TcpComm;
struct TcpRequest;

// One contiguous transfer on one socket.
struct TcpOp {
  enum class Kind : uint8_t { kSendBytes, kRecvHeader, kRecvBytes };
  Kind kind;
  TcpRequest* req;
  char* ptr;
  size_t len;
  size_t done;
};

struct TcpRequest {
  TcpComm* owner = nullptr;
  bool is_send = false;
  uint32_t seq = 0;
  char* data = nullptr;
  size_t size = 0;              // send: bytes; recv: capacity of the posted buffer
  size_t received = 0;          // recv: bytes the matching send carried
  std::atomic<int> pending{0};  // ops still to finish
  std::atomic<int> status{0};   // 0 or a negative errno
  std::vector<char> header;     // WireHeader + inline payload
  bool in_use = false;
};

struct TcpChannel {
  int fd = -1;
  bool sending = false;
  std::mutex progress_mu;  // held by the one thread moving this socket's bytes (a helper or test())
  std::mutex mu;           // guards `ops`
  std::deque<TcpOp> ops;   // references stay valid across push_back; only the progress_mu holder pops
};

class TcpComm {
 public:
  // Takes ownership of `fds` (control first, then data sockets).
  TcpComm(const TcpConfig& config, bool is_send, std::vector<int> fds, int peer_rank);
  ~TcpComm();
  TcpComm(const TcpComm&) = delete;
  TcpComm& operator=(const TcpComm&) = delete;

  bool is_send() const { return is_send_; }
  int peer_rank() const { return peer_rank_; }
  // The other end of the control socket as NCCL writes a socket address ("10.0.0.2<48123>"); "" when the
  // socket cannot say.
  std::string peer_address() const;
  // Cuts every socket of the connection (both directions) as a dead link would: the other end sees the
  // connection go; our own requests fail too.
  void sever();
  NetStatus post_send(void* data, size_t size, void** request);
  NetStatus post_recv(void* data, size_t capacity, void** request);
  NetStatus test(TcpRequest* req, int* done, int* size);

 private:
  struct Worker {
    std::thread thread;
    int wake_fd = -1;
    std::atomic<bool> sleeping{false};
    std::vector<TcpChannel*> channels;
  };

  TcpRequest* alloc_request();
  void release_request(TcpRequest* req);
  void push_op(size_t channel, const TcpOp& op);
  void push_slices(TcpRequest* req, TcpOp::Kind kind);
  void wake(size_t channel);
  void worker_loop(Worker* worker);
  bool progress(TcpChannel* channel);
  // progress() unless another thread is moving this channel's bytes right now.
  bool try_progress(TcpChannel* channel);
  // Caller progress: while test() keeps running, the helpers leave the sockets to it.
  bool caller_is_progressing(int64_t now_ns) const;
  // Finishes the front op of `channel`. Returns true when the op was replaced in place (more to do).
  bool finish_op(TcpChannel* channel, TcpOp* op);
  void fail(int err);

  TcpConfig config_;
  bool is_send_;
  int peer_rank_;
  std::vector<std::unique_ptr<TcpChannel>> channels_;  // [0] control, [1..] data
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<size_t> channel_owner_;
  std::mutex slots_mu_;
  TcpRequest slots_[kTcpMaxRequests];
  uint32_t next_seq_ = 0;
  std::atomic<int> error_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> caller_progress_ns_{0};  // when test() last ran with work pending (steady clock)
};

}  // namespace ncclfi::net
