// ncclfi-cpu-ring: ring all-reduce on host memory over an NCCL net plugin, loaded exactly as NCCL loads
// it, across N processes. The CPU stand-in for a GPU job (the workload contract, workload_contract.h):
// torchrun-style rendezvous, deterministic data with full verification, a watchdog that aborts on timeout
// (exit 3), the workload exit codes and events.
#include <unistd.h>

#include <strings.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <CLI/CLI.hpp>

#include "ncclfi/event_log.h"
#include "ncclfi/nccl_results.h"
#include "ncclfi/params.h"
#include "ncclfi/workload_contract.h"
#include "ring_allreduce.h"

namespace {

using ncclfi::Clock;
using ncclfi::EventLog;
namespace ev = ncclfi::ev;
using ncclfi::cpu_ring::PluginError;
using ncclfi::cpu_ring::RingLinks;
using ncclfi::net::LoadedNetPlugin;

struct Options {
  std::string plugin;
  std::string bytes_text = "1M";
  uint64_t bytes = 1 << 20;
  int iters = 20;
  int warmup = 2;
  double timeout_s = 0;
  bool check = false;
  // allreduce: the checked ring all-reduce; train: a small data-parallel training loop (float gradients
  // all-reduced, Adam, a loss printed per step); linktest: each ring link alone, one way, timed and
  // checked (what an operator runs to verify links).
  std::string mode = "allreduce";
  double lr = 0.05;
};

int g_log_level = 0;  // NCCL_DEBUG: 0 none, 2 WARN, 3 INFO

void plugin_logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  if (static_cast<int>(level) > g_log_level) return;
  char text[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  // NCCL's own line format: host:pid:tid [device] NCCL LEVEL message.
  static const std::string host = [] {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0) return std::string("localhost");
    return std::string(name);
  }();
  std::fprintf(stderr, "%s:%d:%d [0] NCCL %s %s\n", host.c_str(), getpid(), static_cast<int>(gettid()),
               level == NCCL_LOG_WARN ? "WARN" : "INFO", text);
}

std::string default_plugin_path() {
  if (const char* env = std::getenv("NCCL_NET_PLUGIN"); env && *env) {
    std::string entry = env;
    return entry.substr(0, entry.find(','));
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "libnccl-net-ncclfi.so";
  return (exe.parent_path() / ".." / "lib" / "libnccl-net-ncclfi.so").lexically_normal().string();
}

// Shared between the ring loop and the watchdog.
struct OpState {
  std::atomic<int64_t> seq{-1};
  std::atomic<int64_t> start_mono_ns{0};
  std::atomic<bool> in_op{false};
  std::atomic<bool> stop{false};
};

[[noreturn]] void die(const EventLog& events, int code, const std::string& reason) {
  events.write(ev::kAbort, {{"reason", reason}, {"exit_code", code}});
  std::fprintf(stderr, "ncclfi-cpu-ring: %s\n", reason.c_str());
  std::fflush(stderr);
  _exit(code);  // peers and helper threads may be blocked; nothing left to unwind safely
}

[[noreturn]] void plugin_failed(const EventLog& events, const PluginError& error) {
  events.write(ev::kNcclError, {{"code", static_cast<int>(error.code)}, {"where", error.where}});
  // The code and its name, as NCCL's own error messages give them.
  std::string name = "ncclResult_t " + std::to_string(static_cast<int>(error.code));
  if (const auto code = ncclfi::nccl_error_from_int(static_cast<int>(error.code))) {
    name = std::string(ncclfi::name_of(*code));
  }
  die(events, ncclfi::kExitNcclError,
      "net plugin call " + error.where + " failed with ncclResult_t " +
          std::to_string(static_cast<int>(error.code)) + " (" + name + ")");
}

void watchdog(const OpState& state, const EventLog& events, double timeout_s) {
  const auto timeout_ns = static_cast<int64_t>(timeout_s * 1e9);
  while (!state.stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!state.in_op.load()) continue;
    const int64_t waited = Clock::mono_ns() - state.start_mono_ns.load();
    if (waited > timeout_ns) {
      events.write(ev::kWatchdogFired, {{"op", "allreduce"},
                                        {"seq", state.seq.load()},
                                        {"waited_ms", waited / 1000000},
                                        {"reason", "timeout"},
                                        {"timeout_ms", static_cast<int64_t>(timeout_s * 1000)}});
      die(events, ncclfi::kExitWatchdog,
          "watchdog: allreduce seq " + std::to_string(state.seq.load()) + " did not complete within " +
              std::to_string(timeout_s) + " s");
    }
  }
}

// Listens, exchanges handles through the rendezvous, connects to the next rank and accepts from the
// previous one (both non-blocking, driven together as NCCL's proxy does).
RingLinks connect_ring(LoadedNetPlugin& plugin, void* ctx, ncclfi::Rendezvous& rdv, const EventLog& events,
                       double timeout_s) {
  RingLinks links;
  links.plugin = &plugin;
  links.rank = rdv.rank();
  links.world_size = rdv.world_size();
  if (links.world_size == 1) return links;
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen_comm = nullptr;
  if (ncclResult_t r = plugin.listen(ctx, 0, handle, &listen_comm)) plugin_failed(events, {"listen", r});
  const auto all = rdv.allgather(std::string(handle, sizeof(handle)));
  const int next = (links.rank + 1) % links.world_size;
  char next_handle[NCCL_NET_HANDLE_MAXSIZE];
  std::memcpy(next_handle, all[static_cast<size_t>(next)].data(), sizeof(next_handle));
  const int64_t deadline = Clock::mono_ns() + static_cast<int64_t>(std::max(timeout_s, 60.0) * 1e9);
  while (!links.send_comm || !links.recv_comm) {
    if (!links.send_comm) {
      if (ncclResult_t r = plugin.connect(ctx, 0, next_handle, &links.send_comm))
        plugin_failed(events, {"connect", r});
    }
    if (!links.recv_comm) {
      if (ncclResult_t r = plugin.accept(listen_comm, &links.recv_comm)) plugin_failed(events, {"accept", r});
    }
    if (Clock::mono_ns() > deadline) die(events, ncclfi::kExitBootstrap, "ring connect timed out");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  plugin.close_listen(listen_comm);
  return links;
}

// The training mode: a small model trained data-parallel, the way a DDP job does it. Each rank's
// gradient is the model's error plus its own minibatch noise; the float sum is all-reduced over the ring
// and applied with Adam, and the loss is printed per step (rank-local, as training scripts log it). A bad
// gradient element (a flipped exponent bit on a link) becomes inf, Adam's moments turn it into NaN, and
// the loss stays NaN from that step on: nothing in the job reports an error.
template <typename BeginOp, typename EndOp>
void train(const RingLinks& links, std::vector<float>& grad, std::vector<float>& tmp, const Options& opt,
           BeginOp begin_op, EndOp end_op, const EventLog& events) {
  const size_t count = grad.size();
  std::vector<float> w(count, 0.0f), m(count, 0.0f), v(count, 0.0f), target(count);
  for (size_t i = 0; i < count; ++i) target[i] = 2.0f * std::sin(0.01f * static_cast<float>(i));
  auto noise = [](int rank, size_t i, int step) {
    uint64_t z = (static_cast<uint64_t>(rank) << 48) ^ (static_cast<uint64_t>(step) << 32) ^ i;
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<float>(static_cast<double>(z >> 11) / 9007199254740992.0 * 3.0 - 1.5);
  };
  const int total = opt.warmup + opt.iters;
  for (int step = 0; step < total; ++step) {
    for (size_t i = 0; i < count; ++i) grad[i] = (w[i] - target[i]) + noise(links.rank, i, step);
    begin_op(step);
    const auto start = std::chrono::steady_clock::now();
    PluginError error;
    if (!ncclfi::cpu_ring::ring_allreduce(links, grad, tmp, &error)) plugin_failed(events, error);
    const auto dur_us = end_op(step, start, nlohmann::json::object());
    double loss = 0;
    const auto n = static_cast<float>(links.world_size);
    for (size_t i = 0; i < count; ++i) {
      const float g = grad[i] / n;
      m[i] = 0.9f * m[i] + 0.1f * g;
      v[i] = 0.999f * v[i] + 0.001f * g * g;
      w[i] -= static_cast<float>(opt.lr) * m[i] / (std::sqrt(v[i]) + 1e-8f);
      const float e = w[i] - target[i];
      loss += static_cast<double>(e * e);
    }
    loss /= static_cast<double>(count);
    std::printf("[rank %d] step %d loss %.6f step_time %.1f ms\n", links.rank, step, loss,
                static_cast<double>(dur_us) / 1000.0);
    std::fflush(stdout);
  }
}

// The link test: each ring link alone (rank l to rank l+1, the others waiting at a barrier), `iters`
// messages one way, each checked against what the sender sent. The receiver prints one line per link,
// as a point-to-point bandwidth test does. Returns false when some message arrived altered.
template <typename BeginOp, typename EndOp>
bool link_test(const RingLinks& links, std::vector<uint32_t>& data, std::vector<uint32_t>& tmp,
               const Options& opt, ncclfi::Rendezvous& rdv, BeginOp begin_op, EndOp end_op,
               const EventLog& events) {
  const int n = links.world_size;
  const size_t count = data.size();
  const size_t bytes = count * sizeof(uint32_t);
  bool verified = true;
  if (links.rank == 0) {
    std::printf("# link test: %d links, %d messages of %zu bytes each, one link at a time\n", n, opt.iters,
                bytes);
    std::printf("#   link           time(ms)   busbw(MB/s)   #wrong\n");
    std::fflush(stdout);
  }
  int seq = 0;
  for (int src = 0; src < n && n > 1; ++src) {
    const int dst = (src + 1) % n;
    rdv.barrier();
    const auto link_start = std::chrono::steady_clock::now();
    uint64_t wrong = 0;
    for (int k = 0; k < opt.iters; ++k, ++seq) {
      if (links.rank != src && links.rank != dst) continue;
      begin_op(seq);
      const auto start = std::chrono::steady_clock::now();
      PluginError error;
      if (links.rank == src) {
        for (size_t i = 0; i < count; ++i)
          data[i] = ncclfi::cpu_ring::input_value(src, i, static_cast<uint64_t>(k));
        if (!ncclfi::cpu_ring::send_to_next(links, data.data(), bytes, &error)) plugin_failed(events, error);
      } else {
        if (!ncclfi::cpu_ring::recv_from_prev(links, tmp.data(), bytes, links.recv_tmp_mh, &error)) {
          plugin_failed(events, error);
        }
        for (size_t i = 0; i < count; ++i) {
          if (tmp[i] != ncclfi::cpu_ring::input_value(src, i, static_cast<uint64_t>(k))) ++wrong;
        }
      }
      end_op(seq, start, {{"peer", links.rank == src ? dst : src}});
    }
    if (links.rank == dst) {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - link_start).count();
      const double mbps = ms > 0 ? static_cast<double>(bytes) * opt.iters / (ms * 1000.0) : 0;
      std::printf("    rank %d -> rank %d   %9.1f   %11.1f   %6llu\n", src, dst, ms, mbps,
                  static_cast<unsigned long long>(wrong));
      std::fflush(stdout);
      if (wrong > 0) {
        verified = false;
        events.write(ev::kResultMismatch, {{"op", "sendrecv"}, {"peer", src}, {"wrong", wrong}});
      }
    }
  }
  return verified;
}

int run(const Options& opt) {
  ncclfi::RendezvousInfo info;
  try {
    info = ncclfi::rendezvous_from_env();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncclfi-cpu-ring: rendezvous: %s\n", e.what());
    return ncclfi::kExitBootstrap;
  }
  EventLog events(ncclfi::Params::get().events_path, "cpu-ring", info.rank);
  nlohmann::json started = {{"world_size", info.world_size},
                            {"workload", "cpu-ring"},
                            {"bytes", opt.bytes},
                            {"iters", opt.iters},
                            {"warmup", opt.warmup},
                            {"timeout_s", opt.timeout_s},
                            {"check", opt.check},
                            {"plugin", opt.plugin}};
  // Under torchrun: how many times it restarted the worker group (the judge counts restarts from it).
  if (const char* restarts = std::getenv("TORCHELASTIC_RESTART_COUNT");
      restarts != nullptr && *restarts != '\0')
    started["restart_count"] = std::atoi(restarts);
  events.write(ev::kStart, started);
  std::string load_error;
  auto plugin = LoadedNetPlugin::open(opt.plugin, &load_error);
  if (!plugin) die(events, ncclfi::kExitBootstrap, load_error);
  void* ctx = nullptr;
  ncclNetCommConfig_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  if (ncclResult_t r = plugin->init(&ctx, 0x6e63636c66690001ULL, &config, plugin_logger)) {
    plugin->finalize(ctx);
    plugin_failed(events, {"init", r});
  }
  int ndev = 0;
  if (ncclResult_t r = plugin->devices(&ndev)) plugin_failed(events, {"devices", r});
  if (ndev < 1) die(events, ncclfi::kExitBootstrap, "net plugin reports no device");

  // Bootstrap has its own generous limit: the watchdog's timeout is for collectives, and ranks of a
  // large CPU job on a small host can take seconds to start.
  const auto rdv_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(std::max(opt.timeout_s, 60.0) * 1000));
  std::unique_ptr<ncclfi::Rendezvous> rdv;
  try {
    rdv = std::make_unique<ncclfi::Rendezvous>(info, rdv_timeout);
  } catch (const std::exception& e) {
    die(events, ncclfi::kExitBootstrap, std::string("rendezvous: ") + e.what());
  }
  RingLinks links;
  try {
    links = connect_ring(*plugin, ctx, *rdv, events, opt.timeout_s);
  } catch (const std::exception& e) {
    die(events, ncclfi::kExitBootstrap, std::string("rendezvous: ") + e.what());
  }

  const size_t count = opt.bytes / sizeof(uint32_t);
  std::vector<uint32_t> data(count), tmp(count);
  std::vector<float> weights_grad, weights_tmp;  // train mode: the gradients all-reduced
  void* buf = data.data();
  void* scratch = tmp.data();
  if (opt.mode == "train") {
    weights_grad.assign(count, 0.0f);
    weights_tmp.assign(count, 0.0f);
    buf = weights_grad.data();
    scratch = weights_tmp.data();
  }
  if (links.world_size > 1) {
    const size_t bytes = count * sizeof(uint32_t);
    if (ncclResult_t r = plugin->reg_mr(links.send_comm, buf, bytes, NCCL_PTR_HOST, &links.send_mh)) {
      plugin_failed(events, {"regMr", r});
    }
    if (ncclResult_t r = plugin->reg_mr(links.recv_comm, buf, bytes, NCCL_PTR_HOST, &links.recv_data_mh)) {
      plugin_failed(events, {"regMr", r});
    }
    if (ncclResult_t r = plugin->reg_mr(links.recv_comm, scratch, bytes, NCCL_PTR_HOST, &links.recv_tmp_mh)) {
      plugin_failed(events, {"regMr", r});
    }
  }

  OpState state;
  std::thread dog;
  if (opt.timeout_s > 0) dog = std::thread([&] { watchdog(state, events, opt.timeout_s); });

  bool all_verified = true;
  const auto t0 = std::chrono::steady_clock::now();
  const int total = opt.warmup + opt.iters;
  auto begin_op = [&](int seq) {
    state.seq.store(seq);
    state.start_mono_ns.store(Clock::mono_ns());
    state.in_op.store(true);
  };
  auto end_op = [&](int seq, std::chrono::steady_clock::time_point start, nlohmann::json extra) {
    const auto dur_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
            .count();
    state.in_op.store(false);
    nlohmann::json fields = {{"seq", seq},
                             {"op", opt.mode == "linktest" ? "sendrecv" : "allreduce"},
                             {"bytes", count * sizeof(uint32_t)},
                             {"dur_us", dur_us},
                             {"warmup", seq < opt.warmup}};
    for (const auto& [k, v] : extra.items()) fields[k] = v;
    events.write(ev::kOp, fields);
    return dur_us;
  };
  if (opt.mode == "train") {
    train(links, weights_grad, weights_tmp, opt, begin_op, end_op, events);
  } else if (opt.mode == "linktest") {
    all_verified = link_test(links, data, tmp, opt, *rdv, begin_op, end_op, events);
  }
  for (int seq = 0; opt.mode == "allreduce" && seq < total; ++seq) {
    for (size_t i = 0; i < count; ++i)
      data[i] = ncclfi::cpu_ring::input_value(links.rank, i, static_cast<uint64_t>(seq));
    begin_op(seq);
    const auto start = std::chrono::steady_clock::now();
    PluginError error;
    if (!ncclfi::cpu_ring::ring_allreduce(links, data, tmp, &error)) plugin_failed(events, error);
    end_op(seq, start, nlohmann::json::object());
    uint64_t wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      if (data[i] != ncclfi::cpu_ring::expected_value(links.world_size, i, static_cast<uint64_t>(seq)))
        ++wrong;
    }
    if (wrong > 0) {
      all_verified = false;
      events.write(ev::kResultMismatch,
                   {{"op", "allreduce"}, {"seq", seq}, {"wrong", wrong}, {"checked", count}});
      std::fprintf(stderr, "ncclfi-cpu-ring: rank %d allreduce seq %d: %llu of %zu elements wrong\n",
                   links.rank, seq, static_cast<unsigned long long>(wrong), count);
      if (opt.check) die(events, ncclfi::kExitVerification, "verification failed (--check)");
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  try {
    rdv->barrier();  // nobody closes a connection a peer still reads from
  } catch (const std::exception& e) {
    die(events, ncclfi::kExitBootstrap, std::string("final barrier: ") + e.what());
  }
  state.stop.store(true);
  if (dog.joinable()) dog.join();
  if (links.world_size > 1) {
    plugin->dereg_mr(links.send_comm, links.send_mh);
    plugin->dereg_mr(links.recv_comm, links.recv_data_mh);
    plugin->dereg_mr(links.recv_comm, links.recv_tmp_mh);
    plugin->close_send(links.send_comm);
    plugin->close_recv(links.recv_comm);
  }
  plugin->finalize(ctx);
  events.write(ev::kDone, {{"iters", opt.iters}, {"seconds", seconds}, {"verified", all_verified}});
  std::printf("ncclfi-cpu-ring: rank %d/%d: %d iterations of %llu bytes in %.3f s, %s\n", links.rank,
              links.world_size, total, static_cast<unsigned long long>(count * sizeof(uint32_t)), seconds,
              all_verified ? "verified" : "MISMATCH");
  return ncclfi::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{
      "ncclfi-cpu-ring: ring all-reduce over an NCCL net plugin on host memory (no GPU).\n"
      "Ranks from RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (torchrun names), Open MPI or Slurm.\n"
      "Example: RANK=0 WORLD_SIZE=2 MASTER_PORT=29500 ncclfi-cpu-ring --bytes 1M --iters 50 --check"};
  app.add_option("--plugin", opt.plugin,
                 "net plugin to load (path or name); default $NCCL_NET_PLUGIN, else "
                 "../lib/libnccl-net-ncclfi.so next to this binary");
  app.add_option("--bytes", opt.bytes_text, "bytes per all-reduce: 4096, 64K, 1M, 1G (default 1M)");
  app.add_option("--iters", opt.iters, "timed iterations (default 20)")->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", opt.warmup, "warm-up iterations (default 2)")->check(CLI::NonNegativeNumber);
  app.add_option("--timeout-s", opt.timeout_s,
                 "watchdog: abort (exit 3) when one all-reduce takes longer; 0 = off")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--mode", opt.mode,
                 "allreduce (checked ring all-reduce), train (a training loop that prints its loss per step) "
                 "or linktest (each ring link alone, timed and checked)")
      ->check(CLI::IsMember({"allreduce", "train", "linktest"}));
  app.add_option("--lr", opt.lr, "train: Adam's learning rate (default 0.05)")->check(CLI::PositiveNumber);
  app.add_flag("--check", opt.check,
               "stop with exit 4 on the first wrong element (else: result_mismatch event)");
  try {
    app.parse(argc, argv);
    opt.bytes = ncclfi::cpu_ring::parse_bytes(opt.bytes_text);
    if (opt.bytes % sizeof(uint32_t) != 0) throw std::invalid_argument("--bytes must be a multiple of 4");
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    return ncclfi::kExitOk;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ncclfi-cpu-ring: %s\nRun with --help for usage.\n", e.what());
    return ncclfi::kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ncclfi-cpu-ring: --bytes: %s\n", e.what());
    return ncclfi::kExitUsage;
  }
  if (opt.plugin.empty()) opt.plugin = default_plugin_path();
  if (const char* level = std::getenv("NCCL_DEBUG")) {
    if (strcasecmp(level, "WARN") == 0) g_log_level = NCCL_LOG_WARN;
    if (strcasecmp(level, "INFO") == 0 || strcasecmp(level, "TRACE") == 0) g_log_level = NCCL_LOG_INFO;
  }
  return run(opt);
}
