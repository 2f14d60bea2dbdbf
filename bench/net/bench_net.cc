// ncclfi-bench-net: the shim's pass-through streaming throughput between two processes over loopback,
// against a plain TCP stream carrying the same bytes, measured side by side in one run (alternating
// rounds, best of each). Prints name=value lines for scripts/bench:
//   net_shim_gbps, net_tcp_gbps (GB/s), net_shim_vs_tcp (ratio).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ncclfi_net/plugin_loader.h"

namespace {

constexpr size_t kMessage = 1 << 20;  // per isend / write
constexpr int kWindow = 8;            // NCCL keeps NCCL_STEPS=8 transfers in flight per connection

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = write(fd, c, n);
    if (w <= 0) _exit(80);
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = read(fd, c, n);
    if (r <= 0) _exit(81);
    c += r;
    n -= static_cast<size_t>(r);
  }
}

// Forks `receiver` and `sender`; the receiver writes its measured seconds into the result pipe.
double run_pair(const std::function<void(int to_sender, int from_receiver)>& sender,
                const std::function<double(int to_receiver, int from_sender)>& receiver) {
  int r2s[2], s2r[2], result[2];
  if (pipe(r2s) || pipe(s2r) || pipe(result)) return -1;
  std::fflush(nullptr);
  const pid_t rpid = fork();
  if (rpid == 0) {
    const double seconds = receiver(r2s[1], s2r[0]);
    write_all(result[1], &seconds, sizeof(seconds));
    _exit(0);
  }
  const pid_t spid = fork();
  if (spid == 0) {
    sender(s2r[1], r2s[0]);
    _exit(0);
  }
  double seconds = -1;
  close(result[1]);
  if (read(result[0], &seconds, sizeof(seconds)) != sizeof(seconds)) seconds = -1;
  int status;
  waitpid(rpid, &status, 0);
  waitpid(spid, &status, 0);
  for (int fd : {r2s[0], r2s[1], s2r[0], s2r[1], result[0]}) close(fd);
  return seconds;
}

double plain_tcp_seconds(size_t total) {
  return run_pair(
      [total](int, int from_receiver) {
        uint16_t port = 0;
        read_all(from_receiver, &port, sizeof(port));
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(port);
        if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) _exit(82);
        std::vector<char> buf(kMessage, 'a');
        for (size_t sent = 0; sent < total; sent += kMessage) write_all(fd, buf.data(), kMessage);
        close(fd);
      },
      [total](int to_sender, int) {
        const int lfd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(addr);
        bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
        listen(lfd, 1);
        getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
        const uint16_t port = ntohs(addr.sin_port);
        write_all(to_sender, &port, sizeof(port));
        const int fd = accept(lfd, nullptr, nullptr);
        std::vector<char> buf(kMessage);
        const double t0 = now_s();
        for (size_t got = 0; got < total; got += kMessage) read_all(fd, buf.data(), kMessage);
        const double seconds = now_s() - t0;
        close(fd);
        close(lfd);
        return seconds;
      });
}

std::unique_ptr<ncclfi::net::LoadedNetPlugin> open_plugin(const std::string& path, void** ctx) {
  std::string error;
  auto plugin = ncclfi::net::LoadedNetPlugin::open(path, &error);
  if (!plugin) {
    std::fprintf(stderr, "ncclfi-bench-net: %s\n", error.c_str());
    _exit(83);
  }
  if (plugin->init(ctx, 1, nullptr, nullptr) != ncclSuccess) _exit(84);
  return plugin;
}

// Streams `total` bytes with kWindow requests in flight on each side, as NCCL's proxy does.
template <typename Post>
void stream(ncclfi::net::LoadedNetPlugin& plugin, size_t total, std::vector<std::vector<char>>& bufs,
            Post post) {
  std::vector<void*> inflight(kWindow, nullptr);
  const size_t count = total / kMessage;
  size_t posted = 0, completed = 0;
  while (completed < count) {
    bool idle = true;
    for (int slot = 0; slot < kWindow; ++slot) {
      auto s = static_cast<size_t>(slot);
      if (!inflight[s] && posted < count) {
        if (post(bufs[s].data(), &inflight[s]) != ncclSuccess) _exit(85);
        if (inflight[s]) ++posted;
      }
      if (inflight[s]) {
        int done = 0, size = 0;
        if (plugin.test(inflight[s], &done, &size) != ncclSuccess) _exit(86);
        if (done) {
          inflight[s] = nullptr;
          ++completed;
          idle = false;
        }
      }
    }
    // Idle: yield as NCCL's proxy progress thread does (sched_yield when no request progressed).
    if (idle) std::this_thread::yield();
  }
}

double shim_seconds(const std::string& path, size_t total) {
  return run_pair(
      [&](int to_receiver, int from_receiver) {
        void* ctx = nullptr;
        auto plugin = open_plugin(path, &ctx);
        char handle[NCCL_NET_HANDLE_MAXSIZE];
        read_all(from_receiver, handle, sizeof(handle));
        void* comm = nullptr;
        while (!comm) {
          if (plugin->connect(ctx, 0, handle, &comm) != ncclSuccess) _exit(87);
        }
        std::vector<std::vector<char>> bufs(kWindow, std::vector<char>(kMessage, 'a'));
        stream(*plugin, total, bufs, [&](char* data, void** req) {
          return plugin->isend(comm, data, kMessage, 0, nullptr, nullptr, req);
        });
        char ack;
        read_all(from_receiver, &ack, 1);  // keep the connection open until the receiver has it all
        (void)to_receiver;
        // Close before the plugin is unloaded, as NCCL does: the comm's helper threads run plugin code.
        plugin->close_send(comm);
        plugin->finalize(ctx);
      },
      [&](int to_sender, int) {
        void* ctx = nullptr;
        auto plugin = open_plugin(path, &ctx);
        char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
        void* lcomm = nullptr;
        if (plugin->listen(ctx, 0, handle, &lcomm) != ncclSuccess) _exit(88);
        write_all(to_sender, handle, sizeof(handle));
        void* comm = nullptr;
        while (!comm) {
          if (plugin->accept(lcomm, &comm) != ncclSuccess) _exit(89);
        }
        std::vector<std::vector<char>> bufs(kWindow, std::vector<char>(kMessage));
        const double t0 = now_s();
        stream(*plugin, total, bufs, [&](char* data, void** req) {
          size_t size = kMessage;
          int tag = 0;
          void* d = data;
          return plugin->irecv(comm, 1, &d, &size, &tag, nullptr, nullptr, req);
        });
        const double seconds = now_s() - t0;
        const char ack = 1;
        write_all(to_sender, &ack, 1);
        plugin->close_recv(comm);
        plugin->close_listen(lcomm);
        plugin->finalize(ctx);
        return seconds;
      });
}

std::string default_plugin() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (exe.parent_path() / ".." / "lib" / "libnccl-net-ncclfi.so").lexically_normal().string();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

// Usage: ncclfi-bench-net [PLUGIN] [MiB per round, default 256] [rounds, default 7]
// Each round streams the same bytes through plain TCP and through the shim, back to back (the order
// alternates), and yields one ratio; the median of the rounds' ratios is reported, so load from other
// processes that drifts over the run affects both sides alike.
int main(int argc, char** argv) {
  const std::string plugin = argc > 1 && *argv[1] ? argv[1] : default_plugin();
  const size_t total = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256) << 20;
  const int rounds = argc > 3 ? std::max(1, std::atoi(argv[3])) : 7;
  std::vector<double> tcp_gbps, shim_gbps, ratios;
  const double gb = static_cast<double>(total) / 1e9;
  shim_seconds(plugin, 16 << 20);  // warm-up: page in the plugin and its threads
  for (int round = 0; round < rounds; ++round) {
    double tcp, shim;
    if (round % 2 == 0) {
      tcp = plain_tcp_seconds(total);
      shim = shim_seconds(plugin, total);
    } else {
      shim = shim_seconds(plugin, total);
      tcp = plain_tcp_seconds(total);
    }
    if (tcp <= 0 || shim <= 0) {
      std::fprintf(stderr, "ncclfi-bench-net: a measurement failed\n");
      return 1;
    }
    tcp_gbps.push_back(gb / tcp);
    shim_gbps.push_back(gb / shim);
    ratios.push_back(tcp / shim);
    if (std::getenv("NCCLFI_BENCH_VERBOSE"))
      std::fprintf(stderr, "round %d: tcp %.3f GB/s, shim %.3f GB/s, ratio %.3f\n", round, gb / tcp,
                   gb / shim, tcp / shim);
  }
  std::printf("net_tcp_gbps=%.3f\n", median(tcp_gbps));
  std::printf("net_shim_gbps=%.3f\n", median(shim_gbps));
  std::printf("net_shim_vs_tcp=%.3f\n", median(ratios));
  return 0;
}
