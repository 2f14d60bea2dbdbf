// Workload rendezvous: environment reading and a small TCP allgather through rank 0.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ncclfi/event_log.h"
#include "rendezvous.h"

namespace ncclfi {
namespace {

std::optional<long> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0') {
    throw std::runtime_error(std::string(name) + "=" + v + ": expected an integer");
  }
  return value;
}

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : fallback;
}

using Deadline = int64_t;  // CLOCK_MONOTONIC ns

int ms_left(Deadline d) {
  int64_t left = (d - Clock::mono_ns()) / 1000000;
  return left < 0 ? 0 : static_cast<int>(left > 1 << 30 ? 1 << 30 : left);
}

void wait_fd(int fd, short events, Deadline d, const char* what) {
  for (;;) {
    pollfd pfd{fd, events, 0};
    int r = ::poll(&pfd, 1, ms_left(d));
    if (r > 0) {
      if ((pfd.revents & (POLLERR | POLLNVAL)) != 0)
        throw std::runtime_error(std::string("rendezvous: ") + what + ": socket error");
      return;
    }
    if (r == 0) throw std::runtime_error(std::string("rendezvous: timed out while ") + what);
    if (errno != EINTR) throw std::runtime_error(std::string("rendezvous: poll failed while ") + what);
  }
}

void send_all(int fd, const void* data, size_t size, Deadline d) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      wait_fd(fd, POLLOUT, d, "sending");
    } else {
      throw std::runtime_error("rendezvous: a peer went away while sending");
    }
  }
}

void recv_all(int fd, void* data, size_t size, Deadline d) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
    } else if (n == 0) {
      throw std::runtime_error("rendezvous: a peer closed its connection");
    } else if (errno == EAGAIN || errno == EINTR) {
      wait_fd(fd, POLLIN, d, "receiving");
    } else {
      throw std::runtime_error("rendezvous: a peer went away while receiving");
    }
  }
}

void send_blob(int fd, const std::string& blob, Deadline d) {
  uint32_t len = htonl(static_cast<uint32_t>(blob.size()));
  send_all(fd, &len, sizeof(len), d);
  send_all(fd, blob.data(), blob.size(), d);
}

// The workloads exchange ids and addresses of a few hundred bytes.
constexpr uint32_t kMaxRendezvousBlobBytes = 1u << 20;
// A rank sends its hello right after connecting; a connection silent for longer is not a rank.
constexpr int64_t kRendezvousHelloMs = 2000;
constexpr uint32_t kHelloMagic = 0x4e434649;  // "NCFI"

// What a joining rank sends first. Fixed size, network byte order.
struct Hello {
  uint32_t magic;
  uint32_t rank;
  uint64_t key_hash;
};

// FNV-1a: the hello carries a hash of the job key, not the key.
uint64_t key_hash(const std::string& key) {
  uint64_t h = 1469598103934665603ULL;
  for (const char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

uint64_t to_network64(uint64_t v) {
  return (static_cast<uint64_t>(htonl(static_cast<uint32_t>(v))) << 32) |
         htonl(static_cast<uint32_t>(v >> 32));
}

std::string recv_blob(int fd, Deadline d) {
  uint32_t len = 0;
  recv_all(fd, &len, sizeof(len), d);
  len = ntohl(len);
  if (len > kMaxRendezvousBlobBytes) throw std::runtime_error("rendezvous: oversized message");
  std::string blob(len, '\0');
  recv_all(fd, blob.data(), len, d);
  return blob;
}

// Why `hello` does not admit a rank of this job, or "" when it does (the rank is then free).
std::string hello_problem(const Hello& hello, const RendezvousInfo& info, const std::vector<int>& peer_fds) {
  if (ntohl(hello.magic) != kHelloMagic) return "not an ncclfi rendezvous hello";
  if (to_network64(hello.key_hash) != key_hash(info.job_key)) return "a hello without this job's key";
  const uint32_t peer = ntohl(hello.rank);
  if (peer == 0 || peer >= static_cast<uint32_t>(info.world_size))
    return "rank " + std::to_string(peer) + " is not a peer in a world of " + std::to_string(info.world_size);
  if (peer_fds[peer] >= 0) return "rank " + std::to_string(peer) + " joined already";
  return "";
}

// Rank 0's side of joining: every connection reads its hello at its own pace, side by side, so a
// stranger that connects and says nothing (or too little) costs the ranks nothing; it is dropped after
// kRendezvousHelloMs.
class JoiningConnections {
 public:
  JoiningConnections() = default;
  JoiningConnections(const JoiningConnections&) = delete;
  JoiningConnections& operator=(const JoiningConnections&) = delete;
  ~JoiningConnections() {
    for (const auto& c : pending_) refuse(c, "no hello before every rank had joined");
  }

  // Fills peer_fds[1..] with a connection per rank, or throws when `d` passes first.
  void gather(int listen_fd, const RendezvousInfo& info, std::vector<int>& peer_fds, int64_t d) {
    for (int joined = 1; joined < info.world_size;) {
      if (ms_left(d) == 0)
        throw std::runtime_error("rendezvous: timed out while waiting for the other ranks to connect");
      std::vector<pollfd> fds{{listen_fd, POLLIN, 0}};
      int wait_ms = ms_left(d);
      for (const auto& c : pending_) {
        fds.push_back({c.fd, POLLIN, 0});
        wait_ms = std::min(wait_ms, ms_left(c.hello_by));
      }
      if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR)
        throw std::runtime_error("rendezvous: poll failed while waiting for the other ranks to connect");
      if ((fds[0].revents & POLLIN) != 0) accept_all(listen_fd);
      for (size_t i = pending_.size(); i-- > 0;) {
        Pending& c = pending_[i];
        const std::optional<std::string> problem = read_hello(c, info, peer_fds);
        if (!problem) continue;  // its hello may still come
        if (problem->empty()) {
          peer_fds[ntohl(c.hello.rank)] = c.fd;
          ++joined;
        } else {
          refuse(c, *problem);
        }
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }

 private:
  struct Pending {
    int fd;
    sockaddr_in from;
    Hello hello;
    size_t got;
    int64_t hello_by;  // CLOCK_MONOTONIC ns
  };
  void accept_all(int listen_fd) {
    for (;;) {
      Pending c{-1, {}, {}, 0, Clock::mono_ns() + kRendezvousHelloMs * 1000000};
      socklen_t len = sizeof(c.from);
      c.fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&c.from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (c.fd < 0) return;
      pending_.push_back(c);
    }
  }

  // "" when the whole hello is in and admits a rank, nullopt while it may still come, else why not.
  static std::optional<std::string> read_hello(Pending& c, const RendezvousInfo& info,
                                               const std::vector<int>& peer_fds) {
    while (c.got < sizeof(c.hello)) {
      const ssize_t n = ::recv(c.fd, reinterpret_cast<char*>(&c.hello) + c.got, sizeof(c.hello) - c.got, 0);
      if (n > 0) {
        c.got += static_cast<size_t>(n);
      } else if (n == 0) {
        return "closed before its hello was complete";
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (ms_left(c.hello_by) > 0) return std::nullopt;
        return "no complete hello within " + std::to_string(kRendezvousHelloMs) + " ms";
      } else {
        return std::string("a broken connection (") + std::strerror(errno) + ")";
      }
    }
    return hello_problem(c.hello, info, peer_fds);
  }

  static void refuse(const Pending& c, const std::string& why) {
    char addr_text[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &c.from.sin_addr, addr_text, sizeof addr_text);
    std::fprintf(stderr, "ncclfi rendezvous: refused a connection from %s:%d: %s\n", addr_text,
                 ntohs(c.from.sin_port), why.c_str());
    ::close(c.fd);
  }

  std::vector<Pending> pending_;
};

sockaddr_in resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    throw std::runtime_error("rendezvous: cannot resolve MASTER_ADDR " + host);
  }
  sockaddr_in addr{};
  std::memcpy(&addr, res->ai_addr, sizeof(addr));
  ::freeaddrinfo(res);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

int make_socket() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw std::runtime_error("rendezvous: socket() failed");
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// One non-blocking connect attempt: 0 when connected, else the errno and whether connect() itself gave
// it (false: polling the connection did, or `d` passed first: ETIMEDOUT). The caller retries: rank 0 may
// not be listening yet.
struct ConnectResult {
  int err = 0;
  bool from_connect = true;
};
ConnectResult connect_before(int fd, const sockaddr_in& addr, Deadline d) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) return {};
  if (errno != EINPROGRESS) return {errno, true};
  for (;;) {
    pollfd pfd{fd, POLLOUT, 0};
    int r = ::poll(&pfd, 1, ms_left(d));
    if (r == 0) return {ETIMEDOUT, false};
    if (r < 0) {
      if (errno == EINTR) continue;
      return {errno, false};
    }
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    return {err, false};  // ECONNREFUSED and the like come back here (POLLERR), not as a thrown error
  }
}

// An address as NCCL writes one (ncclSocketToString): "127.0.0.1<29500>".
std::string nccl_address_text(const sockaddr_in& addr) {
  char host[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &addr.sin_addr, host, sizeof host);
  return std::string(host) + "<" + std::to_string(ntohs(addr.sin_port)) + ">";
}

}  // namespace

RendezvousInfo rendezvous_from_env() {
  RendezvousInfo info;
  if (auto r = env_int("RANK")) {
    info.launcher = "torchrun-env";
    info.rank = static_cast<int>(*r);
    auto ws = env_int("WORLD_SIZE");
    if (!ws) throw std::runtime_error("RANK is set but WORLD_SIZE is not");
    info.world_size = static_cast<int>(*ws);
    info.local_rank = static_cast<int>(env_int("LOCAL_RANK").value_or(0));
    info.master_addr = env_or("MASTER_ADDR", "127.0.0.1");
    info.master_port = static_cast<int>(env_int("MASTER_PORT").value_or(29500));
  } else if (auto orank = env_int("OMPI_COMM_WORLD_RANK")) {
    info.launcher = "openmpi";
    info.rank = static_cast<int>(*orank);
    info.world_size = static_cast<int>(env_int("OMPI_COMM_WORLD_SIZE").value_or(-1));
    info.local_rank = static_cast<int>(env_int("OMPI_COMM_WORLD_LOCAL_RANK").value_or(0));
    info.master_addr = env_or("MASTER_ADDR", "127.0.0.1");
    info.master_port = static_cast<int>(env_int("MASTER_PORT").value_or(29500));
  } else if (auto srank = env_int("SLURM_PROCID")) {
    info.launcher = "slurm";
    info.rank = static_cast<int>(*srank);
    info.world_size = static_cast<int>(env_int("SLURM_NTASKS").value_or(-1));
    info.local_rank = static_cast<int>(env_int("SLURM_LOCALID").value_or(0));
    info.master_addr = env_or("MASTER_ADDR", env_or("SLURM_LAUNCH_NODE_IPADDR", "127.0.0.1"));
    info.master_port = static_cast<int>(env_int("MASTER_PORT").value_or(29500));
  } else {
    // A single process with no launcher: a world of one.
    info.rank = 0;
    info.world_size = 1;
  }
  if (info.world_size < 1) throw std::runtime_error("the world size is missing or below 1");
  if (info.rank < 0 || info.rank >= info.world_size) {
    throw std::runtime_error("rank " + std::to_string(info.rank) + " is outside a world of " +
                             std::to_string(info.world_size));
  }
  if (info.master_port <= 0 || info.master_port > 65535)
    throw std::runtime_error("MASTER_PORT is not a port");
  info.job_key = env_or("NCCLFI_JOB_KEY", "");
  return info;
}

Rendezvous::Rendezvous(const RendezvousInfo& info, std::chrono::milliseconds timeout, RetryPolicy retry)
    : info_(info), timeout_(timeout) {
  if (info_.world_size == 1) return;
  Deadline d = Clock::mono_ns() + static_cast<int64_t>(timeout_.count()) * 1000000;
  sockaddr_in addr = resolve(info_.master_addr, info_.master_port);
  if (info_.rank == 0) {
    // A constructor that throws runs no destructor: close what was opened before rethrowing.
    auto close_all = [this] {
      for (int& fd : peer_fds_) {
        if (fd >= 0) ::close(fd);
        fd = -1;
      }
      if (listen_fd_ >= 0) ::close(listen_fd_);
      listen_fd_ = -1;
    };
    try {
      listen_fd_ = make_socket();
      int one = 1;
      ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        throw std::runtime_error("rendezvous: cannot bind " + info_.master_addr + ":" +
                                 std::to_string(info_.master_port) + ": " + std::strerror(errno));
      }
      ::listen(listen_fd_, 1024);
      peer_fds_.assign(static_cast<size_t>(info_.world_size), -1);
      JoiningConnections joining;
      joining.gather(listen_fd_, info_, peer_fds_, d);
    } catch (...) {
      close_all();
      throw;
    }
    return;
  }
  for (int attempts = 1;; ++attempts) {  // rank 0 may not listen yet: retry until the deadline
    int fd = make_socket();
    const ConnectResult tried = connect_before(fd, addr, d);
    if (tried.err == 0) {
      try {
        const Hello hello{htonl(kHelloMagic), htonl(static_cast<uint32_t>(info_.rank)),
                          to_network64(key_hash(info_.job_key))};
        send_all(fd, &hello, sizeof(hello), d);
      } catch (...) {
        ::close(fd);
        throw;
      }
      peer_fds_.push_back(fd);
      return;
    }
    ::close(fd);
    std::chrono::milliseconds wait{50};
    if (retry) {
      const auto next = retry({nccl_address_text(addr), tried.err, tried.from_connect, attempts});
      if (!next) {
        throw std::runtime_error("could not connect to rank 0 at " + info_.master_addr + ":" +
                                 std::to_string(info_.master_port) + " (" + std::strerror(tried.err) + ", " +
                                 std::to_string(attempts) + " attempts)");
      }
      wait = *next;
    }
    if (ms_left(d) == 0) throw std::runtime_error("rendezvous: timed out connecting to rank 0");
    ::usleep(static_cast<useconds_t>(std::min<int64_t>(wait.count(), ms_left(d)) * 1000));
  }
}

Rendezvous::~Rendezvous() {
  for (int fd : peer_fds_) {
    if (fd >= 0) ::close(fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::vector<std::string> Rendezvous::allgather(const std::string& mine) {
  std::vector<std::string> all(static_cast<size_t>(info_.world_size));
  all[static_cast<size_t>(info_.rank)] = mine;
  if (info_.world_size == 1) return all;
  Deadline d = Clock::mono_ns() + static_cast<int64_t>(timeout_.count()) * 1000000;
  if (info_.rank == 0) {
    for (int r = 1; r < info_.world_size; ++r)
      all[static_cast<size_t>(r)] = recv_blob(peer_fds_[static_cast<size_t>(r)], d);
    for (int r = 1; r < info_.world_size; ++r) {
      for (const auto& blob : all) send_blob(peer_fds_[static_cast<size_t>(r)], blob, d);
    }
    return all;
  }
  send_blob(peer_fds_[0], mine, d);
  for (auto& blob : all) blob = recv_blob(peer_fds_[0], d);
  return all;
}

namespace {

std::string encode_u64s(const std::vector<uint64_t>& values) {
  std::string blob;
  for (uint64_t v : values) {
    const uint64_t n = to_network64(v);
    blob.append(reinterpret_cast<const char*>(&n), sizeof(n));
  }
  return blob;
}

// The first `count` values of `blob` (all of them when count is 0).
std::vector<uint64_t> decode_u64s(const std::string& blob, size_t count = 0) {
  if (count == 0 && blob.size() % sizeof(uint64_t) != 0)
    throw std::runtime_error("rendezvous: malformed recovery message");
  if (count == 0) count = blob.size() / sizeof(uint64_t);
  if (blob.size() < count * sizeof(uint64_t)) throw std::runtime_error("rendezvous: short recovery message");
  std::vector<uint64_t> values(count);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t n = 0;
    std::memcpy(&n, blob.data() + i * sizeof(n), sizeof(n));
    values[i] = to_network64(n);  // the same swap both ways
  }
  return values;
}

}  // namespace

// The answer rank 0 sends: resume step, the AND of the flags, the number of dead, the dead, rank 0's payload.
Rendezvous::Survivors Rendezvous::agree_on_survivors(uint64_t next_step, std::chrono::milliseconds wait,
                                                     uint64_t flags, const std::string& root_payload) {
  Survivors result;
  result.resume_step = next_step;
  result.all_flags = flags;
  result.payload = root_payload;
  if (info_.world_size == 1) return result;
  const Deadline d = Clock::mono_ns() + static_cast<int64_t>(wait.count()) * 1000000;
  if (info_.rank != 0) {
    // The answer may take up to `wait` (rank 0 waits for slow survivors), plus the time to send it.
    const Deadline answer_by = d + static_cast<int64_t>(timeout_.count()) * 1000000;
    try {
      send_blob(peer_fds_[0], encode_u64s({next_step, flags}), d);
      const std::string blob = recv_blob(peer_fds_[0], answer_by);
      const std::vector<uint64_t> head = decode_u64s(blob, 3);
      if (head[2] > static_cast<uint64_t>(info_.world_size))
        throw std::runtime_error("rendezvous: malformed recovery answer");
      const size_t count = 3 + static_cast<size_t>(head[2]);
      const std::vector<uint64_t> answer = decode_u64s(blob, count);
      result.resume_step = answer[0];
      result.all_flags = answer[1];
      for (size_t i = 3; i < count; ++i) result.dead.push_back(static_cast<int>(answer[i]));
      result.payload = blob.substr(count * sizeof(uint64_t));
    } catch (const std::exception& error) {
      throw std::runtime_error(std::string(error.what()) +
                               " (rank 0 hosts the rendezvous and must survive for the others to agree "
                               "on who is dead)");
    }
    return result;
  }
  // Rank 0: 1 = said it is recovering, -1 = dead, 0 = not heard from yet.
  std::vector<int> state;
  for (int r = 0; r < info_.world_size; ++r) {
    state.push_back(r == 0 ? 1 : peer_fds_[static_cast<size_t>(r)] < 0 ? -1 : 0);
  }
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<int> ranks;
    for (int r = 1; r < info_.world_size; ++r) {
      if (state[static_cast<size_t>(r)] != 0) continue;
      fds.push_back({peer_fds_[static_cast<size_t>(r)], POLLIN, 0});
      ranks.push_back(r);
    }
    if (fds.empty() || ms_left(d) == 0) break;
    if (::poll(fds.data(), fds.size(), ms_left(d)) < 0 && errno != EINTR)
      throw std::runtime_error("rendezvous: poll failed while waiting for the survivors");
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      int& s = state[static_cast<size_t>(ranks[i])];
      try {
        const std::vector<uint64_t> said = decode_u64s(recv_blob(fds[i].fd, d));
        if (said.size() != 2) throw std::runtime_error("rendezvous: malformed recovery message");
        result.resume_step = std::min(result.resume_step, said[0]);
        result.all_flags &= said[1];
        s = 1;
      } catch (const std::exception&) {
        s = -1;  // closed (a killed process) or broken: dead
      }
    }
  }
  for (int r = 1; r < info_.world_size; ++r) {
    int& fd = peer_fds_[static_cast<size_t>(r)];
    if (state[static_cast<size_t>(r)] == 1) continue;
    result.dead.push_back(r);
    if (fd >= 0) ::close(fd);  // a survivor too slow to report learns it was left out: its socket closes
    fd = -1;
  }
  std::vector<uint64_t> answer{result.resume_step, result.all_flags, result.dead.size()};
  for (int r : result.dead) answer.push_back(static_cast<uint64_t>(r));
  const std::string blob = encode_u64s(answer) + root_payload;
  const Deadline send_by = Clock::mono_ns() + static_cast<int64_t>(timeout_.count()) * 1000000;
  for (int r = 1; r < info_.world_size; ++r) {
    if (state[static_cast<size_t>(r)] == 1) send_blob(peer_fds_[static_cast<size_t>(r)], blob, send_by);
  }
  return result;
}

void Rendezvous::barrier() {
  (void)allgather(std::string());
}

}  // namespace ncclfi
