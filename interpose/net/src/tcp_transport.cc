// TcpTransport: listen/connect/accept (non-blocking, connect state kept in NCCL's 128-byte handle) and
// the calls that forward to a TcpComm.
#include "tcp_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "tcp_comm.h"

namespace ncclfi::net {
namespace {

// What travels to the peer in NCCL's handle buffer, plus the connector's in-progress state (NCCL calls
// connect() again with the same buffer until it returns a comm). The handle comes from another process
// through NCCL's bootstrap, so it carries no pointer: the state is named by a token that is looked up
// in this process's table (a forged pointer in a handle killed rank 0 with SIGBUS).
struct TcpHandle {
  uint32_t magic;
  uint16_t nsocks;
  uint16_t reserved;
  int32_t rank;  // the listening process's rank
  // The framing both ends must agree on (slice plan, inline limit): the connector adopts the listener's.
  uint32_t inline_bytes;
  uint64_t min_chunk;
  uint64_t listen_id;
  TcpAddress addr;
  uint64_t state_token;  // connector side only; 0 until the first connect() call
};
// The most sockets per connection the shim opens (net_shim.cc clamps NCCLFI_NET_NSOCKS to it).
constexpr uint16_t kMaxHandleSockets = 64;
static_assert(sizeof(TcpHandle) <= NCCL_NET_HANDLE_MAXSIZE, "handle must fit NCCL_NET_HANDLE_MAXSIZE");

struct ConnectState {
  std::vector<int> fds;
  std::vector<bool> ready;
  uint64_t conn_id = 0;
};

// The connectors' states by token. A token no connect() handed out is refused, never dereferenced.
class ConnectStates {
 public:
  uint64_t add(std::unique_ptr<ConnectState> state, uint64_t token) {
    std::lock_guard<std::mutex> lock(mutex_);
    states_[token] = std::move(state);
    return token;
  }
  ConnectState* find(uint64_t token) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = states_.find(token);
    return it == states_.end() ? nullptr : it->second.get();
  }
  void erase(uint64_t token) {
    std::lock_guard<std::mutex> lock(mutex_);
    states_.erase(token);
  }

 private:
  std::mutex mutex_;
  std::map<uint64_t, std::unique_ptr<ConnectState>> states_;
};

ConnectStates& connect_states() {
  static auto* states = new ConnectStates();  // never destroyed: NCCL's threads may call late
  return *states;
}

// An accepted socket whose hello has not arrived. A stranger that connects and says nothing would hold
// its fd for as long as the listener lives: after config.hello_timeout_ms, or once kMaxPendingSockets
// wait (the oldest first), it is closed. A peer's hello follows its connect at once.
struct PendingSocket {
  int fd;
  WireHello hello;
  size_t got;
  int64_t accepted_ms;
};
constexpr size_t kMaxPendingSockets = 256;

// A connection some of whose sockets have said hello; dropped with its sockets when the rest have not
// come within the same bound.
struct PartialConn {
  std::vector<int> fds;
  int rank = -1;
  size_t count = 0;
  int64_t first_ms = 0;
};

int64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

void close_fds(const std::vector<int>& fds) {
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
}

uint64_t random_id() {
  static thread_local std::mt19937_64 gen(std::random_device{}() ^ static_cast<uint64_t>(getpid()));
  return gen();
}

socklen_t address_length(const TcpAddress& addr) {
  return addr.sa.sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

void set_socket_options(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

struct TcpListenComm {
  int fd = -1;
  uint64_t listen_id = 0;
  std::vector<PendingSocket> pending;
  std::map<uint64_t, PartialConn> partial;
};

bool interface_selected(const std::string& spec, const std::string& name) {
  std::string list = spec;
  const bool exclude = !list.empty() && list[0] == '^';
  if (exclude) list.erase(0, 1);
  const bool exact = !list.empty() && list[0] == '=';
  if (exact) list.erase(0, 1);
  bool listed = false;
  size_t start = 0;
  while (start <= list.size() && !listed) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string entry = list.substr(start, end - start);
    if (!entry.empty()) listed = exact ? name == entry : name.compare(0, entry.size(), entry) == 0;
    start = end + 1;
  }
  // "^a,b" selects every interface but a* and b*, except loopback, as NCCL does.
  return exclude ? !listed && name.compare(0, 2, "lo") != 0 : listed;
}

TcpTransport::TcpTransport(TcpConfig config) : config_(std::move(config)) {}
TcpTransport::~TcpTransport() = default;

NetStatus TcpTransport::resolve_local_address() {
  std::memset(&local_, 0, sizeof(local_));
  if (config_.ifname.empty() || config_.ifname == "lo" || config_.ifname == "=lo") {
    local_.in4.sin_family = AF_INET;
    const uint32_t host =
        config_.loopback_per_rank && config_.rank > 0 ? static_cast<uint32_t>(config_.rank % 254) : 0;
    local_.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK + host);
    local_len_ = sizeof(sockaddr_in);
    config_.device_name = "lo";
    return kNetOk;
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return -errno;
  // The first selected interface in the system's order; its IPv4 address if it has one, like NCCL's
  // default address family order.
  NetStatus status = -ENODEV;
  std::string chosen;
  for (ifaddrs* it = list; it; it = it->ifa_next) {
    if (!it->ifa_addr || !interface_selected(config_.ifname, it->ifa_name)) continue;
    const int family = it->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    if (!chosen.empty() && chosen != it->ifa_name) continue;
    if (status == kNetOk && family == AF_INET6) continue;
    std::memcpy(&local_, it->ifa_addr, family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    local_len_ = address_length(local_);
    chosen = it->ifa_name;
    config_.device_name = chosen;
    status = kNetOk;
    if (family == AF_INET) break;
  }
  freeifaddrs(list);
  return status;
}

NetStatus TcpTransport::init(void** ctx, uint64_t, ncclNetCommConfig_t*, ncclDebugLogger_t) {
  *ctx = nullptr;
  if (local_len_ == 0) return resolve_local_address();
  return kNetOk;
}

NetStatus TcpTransport::finalize(void*) {
  return kNetOk;
}

NetStatus TcpTransport::devices(int* ndev) {
  *ndev = 1;
  return kNetOk;
}

NetStatus TcpTransport::get_properties(int dev, ncclNetProperties_v11_t* props) {
  if (dev != 0) return -EINVAL;
  std::memset(props, 0, sizeof(*props));
  props->name = const_cast<char*>(config_.device_name.c_str());
  props->pciPath = nullptr;  // virtual NIC: NCCL attaches it to the first CPU
  props->guid = 0x6e63636c6669ULL;
  props->ptrSupport = NCCL_PTR_HOST;
  props->regIsGlobal = 0;
  props->forceFlush = 0;
  props->speed = config_.speed_mbps;
  props->port = 0;
  props->latency = 0;
  props->maxComms = 65536;
  props->maxRecvs = 1;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = 0;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = 0;
  props->maxP2pBytes = size_t{1} << 30;
  props->maxCollBytes = size_t{1} << 30;
  props->maxMultiRequestSize = 1;
  return kNetOk;
}

NetStatus TcpTransport::listen(void*, int dev, void* handle, void** listen_comm) {
  *listen_comm = nullptr;
  if (dev != 0) return -EINVAL;
  if (local_len_ == 0) {
    if (NetStatus s = resolve_local_address()) return s;
  }
  const int fd = socket(local_.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  TcpAddress addr = local_;
  if (addr.sa.sa_family == AF_INET)
    addr.in4.sin_port = 0;
  else
    addr.in6.sin6_port = 0;
  socklen_t len = local_len_;
  if (bind(fd, &addr.sa, len) != 0 || ::listen(fd, 128) != 0 || getsockname(fd, &addr.sa, &len) != 0) {
    const int err = errno;
    close(fd);
    return -err;
  }
  auto* comm = new TcpListenComm();
  comm->fd = fd;
  comm->listen_id = random_id();
  auto* h = static_cast<TcpHandle*>(handle);
  std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
  h->magic = kTcpMagic;
  h->nsocks = static_cast<uint16_t>(config_.nsocks);
  h->rank = config_.rank;
  h->inline_bytes = static_cast<uint32_t>(config_.inline_bytes);
  h->min_chunk = config_.min_chunk;
  h->listen_id = comm->listen_id;
  h->addr = addr;
  h->state_token = 0;
  *listen_comm = comm;
  return kNetOk;
}

NetStatus TcpTransport::connect(void*, int dev, void* handle, void** send_comm) {
  *send_comm = nullptr;
  auto* h = static_cast<TcpHandle*>(handle);
  if (dev != 0 || h->magic != kTcpMagic || h->min_chunk == 0 || h->nsocks > kMaxHandleSockets) return -EINVAL;
  ConnectState* state = nullptr;
  if (h->state_token != 0) {
    state = connect_states().find(h->state_token);
    if (state == nullptr) return -EINVAL;  // not a token of this process: a forged or stale handle
  } else {
    auto fresh = std::make_unique<ConnectState>();
    fresh->conn_id = random_id();
    const size_t nfds = size_t{1} + h->nsocks;
    for (size_t i = 0; i < nfds; ++i) {
      const int fd = socket(h->addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd >= 0 && config_.loopback_per_rank && local_len_ != 0 && local_.sa.sa_family == AF_INET &&
          h->addr.sa.sa_family == AF_INET) {
        TcpAddress from = local_;  // our own 127.0.0.x, so the accepting side sees which rank connected
        from.in4.sin_port = 0;
        bind(fd, &from.sa, sizeof(sockaddr_in));  // best effort: a failure leaves the kernel's choice
      }
      if (fd < 0 || (::connect(fd, &h->addr.sa, address_length(h->addr)) != 0 && errno != EINPROGRESS)) {
        const int err = errno;
        if (fd >= 0) close(fd);
        for (int open_fd : fresh->fds) close(open_fd);
        return -err;
      }
      fresh->fds.push_back(fd);
      fresh->ready.push_back(false);
    }
    state = fresh.get();
    uint64_t token = 0;
    while (token == 0) token = random_id();
    h->state_token = connect_states().add(std::move(fresh), token);
  }
  bool all_ready = true;
  for (size_t i = 0; i < state->fds.size(); ++i) {
    if (state->ready[i]) continue;
    pollfd pfd{state->fds[i], POLLOUT, 0};
    if (poll(&pfd, 1, 0) <= 0) {
      all_ready = false;
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(state->fds[i], SOL_SOCKET, SO_ERROR, &err, &len);
    const WireHello hello{
        kTcpMagic, static_cast<uint16_t>(i), h->nsocks, state->conn_id, h->listen_id, config_.rank, 0};
    // A just-connected socket has an empty send buffer: the 24-byte hello goes out whole.
    if (err != 0 || send(state->fds[i], &hello, sizeof(hello), MSG_NOSIGNAL) != sizeof(hello)) {
      if (err == 0) err = errno;
      for (int fd : state->fds) close(fd);
      connect_states().erase(h->state_token);
      h->state_token = 0;
      return -err;
    }
    set_socket_options(state->fds[i]);
    state->ready[i] = true;
  }
  if (!all_ready) return kNetOk;
  TcpConfig framing = config_;
  framing.inline_bytes = h->inline_bytes;
  framing.min_chunk = h->min_chunk;
  *send_comm = new TcpComm(framing, /*is_send=*/true, std::move(state->fds), h->rank);
  connect_states().erase(h->state_token);
  h->state_token = 0;
  return kNetOk;
}

NetStatus TcpTransport::accept(void* listen_comm, void** recv_comm) {
  *recv_comm = nullptr;
  auto* lc = static_cast<TcpListenComm*>(listen_comm);
  for (;;) {
    const int fd = accept4(lc->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
      return -errno;
    }
    if (lc->pending.size() >= kMaxPendingSockets) {
      close(lc->pending.front().fd);  // the oldest silent socket makes room
      lc->pending.erase(lc->pending.begin());
    }
    lc->pending.push_back(PendingSocket{fd, {}, 0, monotonic_ms()});
  }
  const int64_t now = monotonic_ms();
  for (size_t i = 0; i < lc->pending.size();) {
    PendingSocket& p = lc->pending[i];
    const ssize_t n =
        recv(p.fd, reinterpret_cast<char*>(&p.hello) + p.got, sizeof(WireHello) - p.got, MSG_DONTWAIT);
    if (n > 0) p.got += static_cast<size_t>(n);
    const bool silent_too_long = p.got < sizeof(WireHello) && now - p.accepted_ms > config_.hello_timeout_ms;
    const bool bad =
        n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) || silent_too_long;
    if (!bad && p.got < sizeof(WireHello)) {
      ++i;
      continue;
    }
    PartialConn* conn = nullptr;
    if (!bad && p.hello.magic == kTcpMagic && p.hello.listen_id == lc->listen_id &&
        p.hello.nsocks <= kMaxHandleSockets && p.hello.index <= p.hello.nsocks) {
      conn = &lc->partial[p.hello.conn_id];
      if (conn->fds.empty()) {
        conn->fds.assign(size_t{1} + p.hello.nsocks, -1);
        conn->first_ms = now;
      }
      // A hello that disagrees with its connection's first one, or repeats an index, is not ours.
      if (conn->fds.size() != size_t{1} + p.hello.nsocks || conn->fds[p.hello.index] >= 0) conn = nullptr;
    }
    if (conn == nullptr) {
      close(p.fd);  // a stray, broken or forged connection: ignore it
    } else {
      conn->fds[p.hello.index] = p.fd;
      conn->rank = p.hello.rank;
      set_socket_options(p.fd);
      ++conn->count;
    }
    lc->pending.erase(lc->pending.begin() + static_cast<long>(i));
  }
  for (auto it = lc->partial.begin(); it != lc->partial.end();) {
    if (it->second.count == it->second.fds.size()) {
      if (*recv_comm == nullptr) {
        *recv_comm = new TcpComm(config_, /*is_send=*/false, std::move(it->second.fds), it->second.rank);
        it = lc->partial.erase(it);
        continue;
      }
    } else if (now - it->second.first_ms > config_.hello_timeout_ms) {
      close_fds(it->second.fds);  // the rest of its sockets never came
      it = lc->partial.erase(it);
      continue;
    }
    ++it;
  }
  return kNetOk;
}

NetStatus TcpTransport::reg_mr(void*, void*, size_t, int type, void** mhandle) {
  *mhandle = nullptr;
  return type == NCCL_PTR_HOST ? kNetOk : -ENOTSUP;  // host memory only
}

NetStatus TcpTransport::dereg_mr(void*, void*) {
  return kNetOk;
}

NetStatus TcpTransport::isend(void* send_comm, void* data, size_t size, int, void*, void*, void** request) {
  return static_cast<TcpComm*>(send_comm)->post_send(data, size, request);
}

NetStatus TcpTransport::irecv(void* recv_comm, int n, void** data, size_t* sizes, int*, void**, void**,
                              void** request) {
  *request = nullptr;
  if (n != 1) return -EINVAL;  // maxRecvs = 1
  return static_cast<TcpComm*>(recv_comm)->post_recv(data[0], sizes[0], request);
}

NetStatus TcpTransport::test(void* request, int* done, int* sizes) {
  auto* req = static_cast<TcpRequest*>(request);
  // The request does not know its comm; slots live inside it, so recover it from the slot address.
  return req->owner->test(req, done, sizes);
}

NetStatus TcpTransport::close_send(void* send_comm) {
  delete static_cast<TcpComm*>(send_comm);
  return kNetOk;
}

NetStatus TcpTransport::close_recv(void* recv_comm) {
  delete static_cast<TcpComm*>(recv_comm);
  return kNetOk;
}

int TcpTransport::remote_rank(void* comm) const {
  return comm ? static_cast<TcpComm*>(comm)->peer_rank() : -1;
}

std::pair<std::string, std::string> TcpTransport::own_interface() const {
  if (local_len_ == 0) return {};
  char host[NI_MAXHOST] = "";
  if (getnameinfo(&local_.sa, local_len_, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) != 0) return {};
  return {config_.device_name, host};
}

std::string TcpTransport::peer_address(void* comm) const {
  return comm ? static_cast<TcpComm*>(comm)->peer_address() : "";
}

void TcpTransport::sever(void* comm) {
  if (comm) static_cast<TcpComm*>(comm)->sever();
}

NetStatus TcpTransport::close_listen(void* listen_comm) {
  auto* lc = static_cast<TcpListenComm*>(listen_comm);
  if (!lc) return kNetOk;
  for (auto& p : lc->pending) close(p.fd);
  for (auto& [id, conn] : lc->partial) close_fds(conn.fds);
  close(lc->fd);
  delete lc;
  return kNetOk;
}

}  // namespace ncclfi::net
