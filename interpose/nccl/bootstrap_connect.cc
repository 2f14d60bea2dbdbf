#include "bootstrap_connect.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fault_actions.h"
#include "ncclfi/effects.h"
#include "ncclfi/fault_action.h"
#include "ncclfi/fault_points.h"
#include "ncclfi/params.h"
#include "preload_state.h"

namespace ncclfi::preload {

namespace {

// An address a bootstrap connection goes to; a zero address matches any host on that port (a
// MASTER_ADDR given by name).
struct Endpoint {
  sockaddr_storage addr{};
  bool any_host = false;
};

void report(const char* where, const char* what) noexcept {
  report_internal_error("preload", where, what);
}

// The preload's own connect() calls (its injection channel) must pass straight through, and so must a
// connect() made while the preload decides.
thread_local bool t_inside = false;

std::mutex g_roots_mu;
std::vector<Endpoint> g_nccl_roots;  // guarded by g_roots_mu

uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in&>(a).sin_port;
  if (a.ss_family == AF_INET6) return reinterpret_cast<const sockaddr_in6&>(a).sin6_port;
  return 0;
}

bool same(const Endpoint& e, const sockaddr* addr, socklen_t len) {
  if (addr == nullptr || len < sizeof(sa_family_t) || addr->sa_family != e.addr.ss_family) return false;
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto& a = *reinterpret_cast<const sockaddr_in*>(addr);
    const auto& b = reinterpret_cast<const sockaddr_in&>(e.addr);
    return a.sin_port == b.sin_port && (e.any_host || a.sin_addr.s_addr == b.sin_addr.s_addr);
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto& a = *reinterpret_cast<const sockaddr_in6*>(addr);
    const auto& b = reinterpret_cast<const sockaddr_in6&>(e.addr);
    return a.sin6_port == b.sin6_port &&
           (e.any_host || std::memcmp(&a.sin6_addr, &b.sin6_addr, sizeof(in6_addr)) == 0);
  }
  return false;
}

// "host:port" or "[v6]:port" with a numeric host; a host by name matches any address on the port
// ("localhost" is the loopback).
std::optional<Endpoint> parse_endpoint(std::string host, const std::string& port_text) {
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port <= 0 || port > 65535) return std::nullopt;
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  Endpoint e;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&e.addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&e.addr);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
  } else {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    e.any_host = true;
  }
  return e;
}

std::optional<Endpoint> endpoint_from_env(const char* host_var, const char* port_var) {
  const char* host = std::getenv(host_var);
  const char* port = std::getenv(port_var);
  if (host == nullptr || port == nullptr) return std::nullopt;
  return parse_endpoint(host, port);
}

// NCCL_COMM_ID: "<ipv4>:<port>", "[<ipv6>]:<port>" or "<hostname>:<port>" (NCCL's format).
std::optional<Endpoint> comm_id_endpoint() {
  const char* id = std::getenv("NCCL_COMM_ID");
  if (id == nullptr) return std::nullopt;
  const std::string text = id;
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  return parse_endpoint(text.substr(0, colon), text.substr(colon + 1));
}

bool to_nccl_root(const sockaddr* addr, socklen_t len) {
  static const std::optional<Endpoint> comm_id = comm_id_endpoint();
  if (comm_id && same(*comm_id, addr, len)) return true;
  std::lock_guard lock(g_roots_mu);
  for (const auto& e : g_nccl_roots) {
    if (same(e, addr, len)) return true;
  }
  return false;
}

bool to_rendezvous(const sockaddr* addr, socklen_t len) {
  static const std::optional<Endpoint> rendezvous = endpoint_from_env("MASTER_ADDR", "MASTER_PORT");
  return rendezvous && same(*rendezvous, addr, len);
}

std::string address_text(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

// The errno of the fault that fires on this connection, or 0.
int fire(FaultPoint& point, const sockaddr* addr) {
  const Params& params = injector().params();
  CallSite site;
  site.rank = params.rank;
  site.world_size = params.world_size;
  site.op = point.name() == std::string_view(points::kBootstrapRoot) ? "root" : "rendezvous";
  const ArmedFault* fault = point.check(site);
  if (fault == nullptr) return 0;
  const ApiAction* action = fault->fault().api_action();
  const auto* refuse = action != nullptr ? std::get_if<RefuseConnect>(action) : nullptr;
  if (refuse == nullptr) return 0;
  nlohmann::json extra = {{"errno", refuse->errno_value},
                          {"errno_name", strerrorname_np(refuse->errno_value)},
                          {"to", address_text(addr)}};
  injector().record_injection(*fault, point.name(), site, extra);
  return refuse->errno_value;
}

}  // namespace

void note_nccl_bootstrap_root(const void* unique_id, size_t size) {
  // uint64_t magic, then union ncclSocketAddress (sockaddr, sockaddr_in or sockaddr_in6).
  constexpr size_t kAddrOffset = sizeof(uint64_t);
  if (unique_id == nullptr || size < kAddrOffset + sizeof(sockaddr_in6)) return;
  Endpoint e;
  std::memcpy(&e.addr, static_cast<const char*>(unique_id) + kAddrOffset, sizeof(sockaddr_in6));
  if ((e.addr.ss_family != AF_INET && e.addr.ss_family != AF_INET6) || port_of(e.addr) == 0) return;
  std::lock_guard lock(g_roots_mu);
  for (const auto& known : g_nccl_roots) {
    if (std::memcmp(&known.addr, &e.addr, sizeof(sockaddr_in6)) == 0) return;
  }
  if (g_nccl_roots.size() < 64) g_nccl_roots.push_back(e);
}

int connect_or_refuse(int fd, const sockaddr* addr, socklen_t len, ConnectFn real) {
  if (t_inside || addr == nullptr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
    return real(fd, addr, len);
  t_inside = true;
  int refused = 0;
  if (!fast_path()) {
    guarded(report, "connect", [&] {
      if (to_nccl_root(addr, len)) refused = fire(bootstrap_root_point(), addr);
      if (refused == 0 && to_rendezvous(addr, len)) refused = fire(bootstrap_rendezvous_point(), addr);
    });
  }
  t_inside = false;
  if (refused != 0) {
    errno = refused;
    return -1;
  }
  return real(fd, addr, len);
}

}  // namespace ncclfi::preload
