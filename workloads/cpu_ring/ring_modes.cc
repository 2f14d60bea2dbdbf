// The modes of ncclfi-cpu-ring (ring_modes.h).
#include "ring_modes.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "ncclfi/workload_contract.h"

namespace ncclfi::cpu_ring {

bool checked_allreduce(const RingLinks& links, std::vector<uint32_t>& data, std::vector<uint32_t>& tmp,
                       const Options& opt, OpRecorder& ops, const EventLog& events) {
  const size_t count = data.size();
  const int total = opt.warmup + opt.iters;
  bool all_verified = true;
  for (int seq = 0; seq < total; ++seq) {
    for (size_t i = 0; i < count; ++i) data[i] = input_value(links.rank, i, static_cast<uint64_t>(seq));
    ops.begin(seq);
    const auto start = std::chrono::steady_clock::now();
    PluginError error;
    if (!ring_allreduce(links, data, tmp, &error)) ops.failed(links, error);
    ops.end(seq, start, nlohmann::json::object());
    uint64_t wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      if (data[i] != expected_value(links.world_size, i, static_cast<uint64_t>(seq))) ++wrong;
    }
    if (wrong > 0) {
      all_verified = false;
      events.write(ev::kResultMismatch,
                   {{"op", "allreduce"}, {"seq", seq}, {"wrong", wrong}, {"checked", count}});
      std::fprintf(stderr, "%s: rank %d allreduce seq %d: %llu of %zu elements wrong\n", program_tag(),
                   links.rank, seq, static_cast<unsigned long long>(wrong), count);
      if (opt.check) die(events, kExitVerification, "verification failed (--check)");
    }
  }
  return all_verified;
}

// The training mode: a small model trained data-parallel, the way a DDP job does it. Each rank's
// gradient is the model's error plus its own minibatch noise; the float sum is all-reduced over the ring
// and applied with Adam, and the loss is printed per step: each rank's on its own minibatch (the loss
// whose gradient it computed, after the step's update), as training scripts log it, so the ranks' losses
// differ a little as data-parallel ranks' do. A bad
// gradient element (a flipped exponent bit on a link) becomes inf, Adam's moments turn it into NaN, and
// the loss stays NaN from that step on: nothing in the job reports an error.
void train(const RingLinks& links, std::vector<float>& grad, std::vector<float>& tmp, const Options& opt,
           OpRecorder& ops) {
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
    ops.begin(step);
    const auto start = std::chrono::steady_clock::now();
    PluginError error;
    if (!ring_allreduce(links, grad, tmp, &error)) ops.failed(links, error);
    const auto dur_us = ops.end(step, start, nlohmann::json::object());
    double loss = 0;
    const auto n = static_cast<float>(links.world_size);
    for (size_t i = 0; i < count; ++i) {
      const float g = grad[i] / n;
      m[i] = 0.9f * m[i] + 0.1f * g;
      v[i] = 0.999f * v[i] + 0.001f * g * g;
      w[i] -= static_cast<float>(opt.lr) * m[i] / (std::sqrt(v[i]) + 1e-8f);
      const float e = w[i] - target[i] + noise(links.rank, i, step);
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
bool link_test(const RingLinks& links, std::vector<uint32_t>& data, std::vector<uint32_t>& tmp,
               const Options& opt, Rendezvous& rdv, OpRecorder& ops, const EventLog& events) {
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
      ops.begin(seq);
      const auto start = std::chrono::steady_clock::now();
      PluginError error;
      if (links.rank == src) {
        for (size_t i = 0; i < count; ++i) data[i] = input_value(src, i, static_cast<uint64_t>(k));
        if (!send_to_next(links, data.data(), bytes, &error)) ops.failed(links, error);
      } else {
        if (!recv_from_prev(links, tmp.data(), bytes, links.recv_tmp_mh, &error)) {
          ops.failed(links, error);
        }
        for (size_t i = 0; i < count; ++i) {
          if (tmp[i] != input_value(src, i, static_cast<uint64_t>(k))) ++wrong;
        }
      }
      ops.end(seq, start, {{"peer", links.rank == src ? dst : src}});
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

}  // namespace ncclfi::cpu_ring
