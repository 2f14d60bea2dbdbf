#include "tcp_comm.h"

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace ncclfi::net {
namespace {

constexpr int kIdlePollMs = 50;
// With caller progress, helpers stay off the sockets while test() ran this recently. NCCL's proxy calls
// test() every few microseconds while it has work, so 10 ms without a call means it has stopped or been
// descheduled for longer than a scheduler time slice; shorter windows let the helpers wake and contend
// with a caller that is only briefly off the CPU (measured: 1 ms gave 0.70-1.10 of plain TCP, 10 ms 1.2-1.4).
constexpr int64_t kCallerBackstopNs = 10'000'000;

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

size_t slice_count(size_t size, size_t nsocks, size_t min_chunk) {
  if (nsocks == 0 || size == 0) return 0;
  const size_t by_chunk = (size + min_chunk - 1) / min_chunk;
  return std::max<size_t>(1, std::min(nsocks, by_chunk));
}

}  // namespace

TcpComm::TcpComm(const TcpConfig& config, bool is_send, std::vector<int> fds, int peer_rank)
    : config_(config), is_send_(is_send), peer_rank_(peer_rank) {
  for (int fd : fds) {
    auto channel = std::make_unique<TcpChannel>();
    channel->fd = fd;
    channel->sending = is_send;
    channels_.push_back(std::move(channel));
  }
  const size_t nworkers =
      std::max<size_t>(1, std::min(static_cast<size_t>(std::max(config_.nthreads, 1)), channels_.size()));
  for (size_t i = 0; i < nworkers; ++i) {
    auto worker = std::make_unique<Worker>();
    worker->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    workers_.push_back(std::move(worker));
  }
  for (auto& slot : slots_) slot.owner = this;
  channel_owner_.resize(channels_.size());
  for (size_t c = 0; c < channels_.size(); ++c) {
    channel_owner_[c] = c % nworkers;
    workers_[c % nworkers]->channels.push_back(channels_[c].get());
  }
  for (auto& worker : workers_) {
    Worker* w = worker.get();
    w->thread = std::thread([this, w] { worker_loop(w); });
  }
}

std::string TcpComm::peer_address() const {
  if (channels_.empty()) return "";
  TcpAddress addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(channels_[0]->fd, &addr.sa, &len) != 0) return "";
  char host[NI_MAXHOST] = "";
  char port[NI_MAXSERV] = "";
  if (getnameinfo(&addr.sa, len, host, sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) !=
      0) {
    return "";
  }
  return std::string(host) + "<" + port + ">";
}

void TcpComm::sever() {
  for (auto& channel : channels_) shutdown(channel->fd, SHUT_RDWR);
}

TcpComm::~TcpComm() {
  stop_.store(true);
  for (auto& worker : workers_) {
    const uint64_t one = 1;
    if (write(worker->wake_fd, &one, sizeof(one)) < 0) {
      // The eventfd cannot be full here; the worker also wakes every kIdlePollMs.
    }
  }
  for (auto& worker : workers_) {
    if (worker->thread.joinable()) worker->thread.join();
    close(worker->wake_fd);
  }
  for (auto& channel : channels_) close(channel->fd);
}

TcpRequest* TcpComm::alloc_request() {
  std::lock_guard<std::mutex> lock(slots_mu_);
  for (auto& slot : slots_) {
    if (!slot.in_use) {
      slot.in_use = true;
      slot.seq = next_seq_++;
      slot.status.store(0, std::memory_order_relaxed);
      slot.received = 0;
      return &slot;
    }
  }
  return nullptr;
}

void TcpComm::release_request(TcpRequest* req) {
  std::lock_guard<std::mutex> lock(slots_mu_);
  req->in_use = false;
}

void TcpComm::wake(size_t channel) {
  Worker* worker = workers_[channel_owner_[channel]].get();
  if (worker->sleeping.exchange(false)) {
    const uint64_t one = 1;
    if (write(worker->wake_fd, &one, sizeof(one)) < 0) {
      // Counter overflow is impossible at our rates; the worker also polls every kIdlePollMs.
    }
  }
}

void TcpComm::push_op(size_t channel, const TcpOp& op) {
  {
    std::lock_guard<std::mutex> lock(channels_[channel]->mu);
    channels_[channel]->ops.push_back(op);
  }
  wake(channel);
}

// Stripes req's payload over the data sockets (or queues it whole on the control socket when there are
// none). Both ends compute the same plan from (size, seq), so each data socket carries its slices in
// posting order.
void TcpComm::push_slices(TcpRequest* req, TcpOp::Kind kind) {
  const size_t size = is_send_ ? req->size : req->received;
  const size_t nsocks = channels_.size() - 1;
  const size_t nslices = slice_count(size, nsocks, config_.min_chunk);
  if (nslices == 0) {
    req->pending.fetch_add(1);
    push_op(0, TcpOp{kind, req, req->data, size, 0});
    return;
  }
  const size_t slice = (size + nslices - 1) / nslices;
  req->pending.fetch_add(static_cast<int>(nslices));
  for (size_t j = 0; j < nslices; ++j) {
    const size_t offset = j * slice;
    const size_t len = std::min(slice, size - offset);
    push_op(1 + (req->seq + j) % nsocks, TcpOp{kind, req, req->data + offset, len, 0});
  }
}

NetStatus TcpComm::post_send(void* data, size_t size, void** request) {
  *request = nullptr;
  if (int err = error_.load()) return err;
  TcpRequest* req = alloc_request();
  if (!req) return kNetOk;  // all 32 slots busy: NCCL calls again
  req->is_send = true;
  req->data = static_cast<char*>(data);
  req->size = size;
  const bool inline_payload = size <= config_.inline_bytes;
  req->header.resize(sizeof(WireHeader) + (inline_payload ? size : 0));
  WireHeader header{size, kTcpMagic, req->seq};
  std::memcpy(req->header.data(), &header, sizeof(header));
  if (inline_payload && size > 0) std::memcpy(req->header.data() + sizeof(header), data, size);
  req->pending.store(1);
  *request = req;
  push_op(0, TcpOp{TcpOp::Kind::kSendBytes, req, req->header.data(), req->header.size(), 0});
  if (!inline_payload) push_slices(req, TcpOp::Kind::kSendBytes);
  return kNetOk;
}

NetStatus TcpComm::post_recv(void* data, size_t capacity, void** request) {
  *request = nullptr;
  if (int err = error_.load()) return err;
  TcpRequest* req = alloc_request();
  if (!req) return kNetOk;
  req->is_send = false;
  req->data = static_cast<char*>(data);
  req->size = capacity;
  req->header.resize(sizeof(WireHeader));
  req->pending.store(1);
  *request = req;
  push_op(0, TcpOp{TcpOp::Kind::kRecvHeader, req, req->header.data(), sizeof(WireHeader), 0});
  return kNetOk;
}

NetStatus TcpComm::test(TcpRequest* req, int* done, int* size) {
  *done = 0;
  if (config_.caller_progress && req->pending.load(std::memory_order_acquire) != 0) {
    // NCCL's proxy thread spins on test() anyway: let it move the bytes itself rather than wait for a
    // helper. On a host with few cores this is the difference between a spinning thread that takes a core
    // from the helpers and one that does their work (docs/decisions.md).
    caller_progress_ns_.store(steady_ns(), std::memory_order_relaxed);
    for (auto& channel : channels_) try_progress(channel.get());
  }
  if (req->pending.load(std::memory_order_acquire) == 0) {
    const int status = req->status.load();
    if (status != 0) {
      release_request(req);
      return status;
    }
    *done = 1;
    if (size) *size = static_cast<int>(req->is_send ? req->size : req->received);
    release_request(req);
    return kNetOk;
  }
  if (int err = error_.load()) return err;
  return kNetOk;
}

void TcpComm::fail(int err) {
  int expected = 0;
  error_.compare_exchange_strong(expected, err);
}

bool TcpComm::finish_op(TcpChannel* channel, TcpOp* op) {
  TcpRequest* req = op->req;
  if (op->kind == TcpOp::Kind::kRecvHeader) {
    WireHeader header;
    std::memcpy(&header, req->header.data(), sizeof(header));
    if (header.magic != kTcpMagic || header.seq != req->seq) {
      req->status.store(-EPROTO);
      fail(-EPROTO);
    } else if (header.size > req->size) {
      // Truncation: the stream cannot be resynchronised, so the connection is failed too.
      req->status.store(-EMSGSIZE);
      fail(-EMSGSIZE);
    } else {
      req->received = header.size;
      if (header.size <= config_.inline_bytes) {
        if (header.size > 0) {
          // The inline payload follows on this socket: turn this op into its read.
          *op = TcpOp{TcpOp::Kind::kRecvBytes, req, req->data, header.size, 0};
          return true;
        }
      } else if (channels_.size() == 1) {
        *op = TcpOp{TcpOp::Kind::kRecvBytes, req, req->data, header.size, 0};
        return true;
      } else {
        push_slices(req, TcpOp::Kind::kRecvBytes);
      }
    }
  }
  (void)channel;
  req->pending.fetch_sub(1, std::memory_order_acq_rel);
  return false;
}

// Moves as many bytes as the socket takes without blocking. Returns true if anything moved.
bool TcpComm::progress(TcpChannel* channel) {
  bool moved = false;
  for (;;) {
    TcpOp* op;
    {
      std::lock_guard<std::mutex> lock(channel->mu);
      if (channel->ops.empty()) return moved;
      op = &channel->ops.front();
    }
    while (op->done < op->len) {
      ssize_t n;
      if (channel->sending) {
        n = send(channel->fd, op->ptr + op->done, op->len - op->done, MSG_DONTWAIT | MSG_NOSIGNAL);
      } else {
        n = recv(channel->fd, op->ptr + op->done, op->len - op->done, MSG_DONTWAIT);
      }
      if (n > 0) {
        op->done += static_cast<size_t>(n);
        moved = true;
        continue;
      }
      if (n == 0) {
        fail(-ECONNRESET);
        return moved;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return moved;
      fail(-errno);
      return moved;
    }
    moved = true;
    if (finish_op(channel, op)) continue;
    std::lock_guard<std::mutex> lock(channel->mu);
    channel->ops.pop_front();
  }
}

bool TcpComm::try_progress(TcpChannel* channel) {
  std::unique_lock<std::mutex> lock(channel->progress_mu, std::try_to_lock);
  return lock.owns_lock() && progress(channel);
}

bool TcpComm::caller_is_progressing(int64_t now_ns) const {
  return config_.caller_progress &&
         now_ns - caller_progress_ns_.load(std::memory_order_relaxed) < kCallerBackstopNs;
}

void TcpComm::worker_loop(Worker* worker) {
  std::vector<pollfd> fds;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (error_.load(std::memory_order_relaxed) != 0) {
      // A failed connection moves no more bytes; requests report the error through test().
      poll(nullptr, 0, kIdlePollMs);
      continue;
    }
    if (const int64_t now = steady_ns(); caller_is_progressing(now)) {
      // test() is moving the bytes: stay off the sockets (and off the CPU) until it may have stopped.
      const int64_t wait_ns = caller_progress_ns_.load(std::memory_order_relaxed) + kCallerBackstopNs - now;
      const timespec pause{0, static_cast<long>(std::clamp<int64_t>(wait_ns, 1'000, kCallerBackstopNs))};
      ppoll(nullptr, 0, &pause, nullptr);
      continue;
    }
    bool moved = false;
    for (TcpChannel* channel : worker->channels) moved |= try_progress(channel);
    if (moved) continue;
    worker->sleeping.store(true);
    fds.clear();
    fds.push_back(pollfd{worker->wake_fd, POLLIN, 0});
    for (TcpChannel* channel : worker->channels) {
      bool busy;
      {
        std::lock_guard<std::mutex> lock(channel->mu);
        busy = !channel->ops.empty();
      }
      if (busy)
        fds.push_back(pollfd{channel->fd, static_cast<short>(channel->sending ? POLLOUT : POLLIN), 0});
    }
    poll(fds.data(), fds.size(), kIdlePollMs);
    worker->sleeping.store(false);
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      if (read(worker->wake_fd, &count, sizeof(count)) < 0) {
        // EAGAIN: another wake-up already drained it.
      }
    }
  }
}

}  // namespace ncclfi::net
