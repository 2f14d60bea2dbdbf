#include "ring_allreduce.h"

#include <cctype>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace ncclfi::cpu_ring {
namespace {

uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

size_t segment_begin(size_t count, int world_size, int segment) {
  return count * static_cast<size_t>(segment) / static_cast<size_t>(world_size);
}

int wrap(int value, int n) {
  return ((value % n) + n) % n;
}

// Posts one receive and one send, then polls both to completion.
// Either side may be absent (nullptr): the link test moves data one way at a time.
bool exchange(const RingLinks& links, void* send_ptr, size_t send_bytes, void* recv_ptr, size_t recv_bytes,
              void* recv_mh, PluginError* error) {
  int prev = wrap(links.rank - 1, links.world_size);
  void* recv_req = nullptr;
  void* send_req = nullptr;
  void* recv_data = recv_ptr;
  while (recv_ptr != nullptr && !recv_req) {
    ncclResult_t r =
        links.plugin->irecv(links.recv_comm, 1, &recv_data, &recv_bytes, &prev, &recv_mh, nullptr, &recv_req);
    if (r != ncclSuccess) {
      *error = {"irecv", r};
      return false;
    }
  }
  while (send_ptr != nullptr && !send_req) {
    ncclResult_t r = links.plugin->isend(links.send_comm, send_ptr, send_bytes, links.rank, links.send_mh,
                                         nullptr, &send_req);
    if (r != ncclSuccess) {
      *error = {"isend", r};
      return false;
    }
  }
  bool send_done = send_ptr == nullptr;
  bool recv_done = recv_ptr == nullptr;
  if (links.progress) {
    links.progress->send_open.store(!send_done);
    links.progress->recv_open.store(!recv_done);
  }
  int idle_polls = 0;
  std::chrono::steady_clock::time_point send_at, recv_at;  // when each side completed
  while (!send_done || !recv_done) {
    int done = 0;
    int size = 0;
    if (!send_done) {
      ncclResult_t r = links.plugin->test(send_req, &done, &size);
      if (r != ncclSuccess) {
        *error = {"test(send)", r};
        return false;
      }
      send_done = done != 0;
      if (send_done) send_at = std::chrono::steady_clock::now();
      if (send_done && links.progress) links.progress->send_open.store(false);
    }
    if (!recv_done) {
      done = 0;
      ncclResult_t r = links.plugin->test(recv_req, &done, &size);
      if (r != ncclSuccess) {
        *error = {"test(recv)", r};
        return false;
      }
      if (done && static_cast<size_t>(size) != recv_bytes) {
        *error = {"test(recv): size mismatch", ncclInternalError};
        return false;
      }
      recv_done = done != 0;
      if (recv_done) recv_at = std::chrono::steady_clock::now();
      if (recv_done && links.progress) links.progress->recv_open.store(false);
    }
    // Back off while the bytes move: the transport's helper threads need the CPU, and a CPU job may run
    // hundreds of ranks on a few cores. Spin briefly first so small transfers keep their latency.
    if (!send_done || !recv_done) {
      if (++idle_polls < 64) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }
  if (links.progress && send_ptr != nullptr && recv_ptr != nullptr) {
    const int64_t tail = std::chrono::duration_cast<std::chrono::nanoseconds>(send_at - recv_at).count();
    (tail > 0 ? links.progress->send_tail_ns : links.progress->recv_tail_ns) += tail > 0 ? tail : -tail;
  }
  return true;
}

}  // namespace

uint32_t input_value(int rank, uint64_t index, uint64_t seq) {
  return static_cast<uint32_t>(mix((static_cast<uint64_t>(rank) << 48) ^ (seq << 32) ^ index));
}

uint32_t expected_value(int world_size, uint64_t index, uint64_t seq) {
  uint32_t sum = 0;
  for (int r = 0; r < world_size; ++r) sum += input_value(r, index, seq);
  return sum;
}

template <typename T>
bool ring_allreduce(const RingLinks& links, std::vector<T>& data, std::vector<T>& tmp, PluginError* error) {
  const int n = links.world_size;
  if (n == 1) return true;
  const size_t count = data.size();
  auto seg_size = [&](int s) { return segment_begin(count, n, s + 1) - segment_begin(count, n, s); };
  auto at_step = [&](int step) {
    if (!links.progress) return;
    links.progress->steps.store(2 * (n - 1));
    links.progress->step.store(step);
  };
  // Reduce-scatter: after n-1 steps rank r holds the full sum of segment (r+1) mod n.
  for (int step = 0; step < n - 1; ++step) {
    at_step(step);
    const int send_seg = wrap(links.rank - step, n);
    const int recv_seg = wrap(links.rank - step - 1, n);
    const size_t recv_off = segment_begin(count, n, recv_seg);
    if (!exchange(links, data.data() + segment_begin(count, n, send_seg), seg_size(send_seg) * sizeof(T),
                  tmp.data() + recv_off, seg_size(recv_seg) * sizeof(T), links.recv_tmp_mh, error)) {
      return false;
    }
    for (size_t i = 0; i < seg_size(recv_seg); ++i) data[recv_off + i] += tmp[recv_off + i];
  }
  // All-gather: pass the reduced segments around the ring.
  for (int step = 0; step < n - 1; ++step) {
    at_step(n - 1 + step);
    const int send_seg = wrap(links.rank - step + 1, n);
    const int recv_seg = wrap(links.rank - step, n);
    if (!exchange(links, data.data() + segment_begin(count, n, send_seg), seg_size(send_seg) * sizeof(T),
                  data.data() + segment_begin(count, n, recv_seg), seg_size(recv_seg) * sizeof(T),
                  links.recv_data_mh, error)) {
      return false;
    }
  }
  if (links.progress) links.progress->step.store(-1);
  return true;
}

template bool ring_allreduce<uint32_t>(const RingLinks&, std::vector<uint32_t>&, std::vector<uint32_t>&,
                                       PluginError*);
template bool ring_allreduce<float>(const RingLinks&, std::vector<float>&, std::vector<float>&, PluginError*);

bool send_to_next(const RingLinks& links, const void* data, size_t bytes, PluginError* error) {
  return exchange(links, const_cast<void*>(data), bytes, nullptr, 0, nullptr, error);
}

bool recv_from_prev(const RingLinks& links, void* data, size_t bytes, void* recv_mh, PluginError* error) {
  return exchange(links, nullptr, 0, data, bytes, recv_mh, error);
}

uint64_t parse_bytes(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty size");
  size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument("not a size: '" + text + "' (examples: 4096, 64K, 1M, 1G)");
  }
  std::string unit = text.substr(pos);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit == "B") unit.clear();
  if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  if (!unit.empty() && unit.back() == 'I') unit.pop_back();
  uint64_t scale = 1;
  if (unit == "K")
    scale = 1ULL << 10;
  else if (unit == "M")
    scale = 1ULL << 20;
  else if (unit == "G")
    scale = 1ULL << 30;
  else if (!unit.empty())
    throw std::invalid_argument("not a size: '" + text + "' (examples: 4096, 64K, 1M, 1G)");
  return value * scale;
}

}  // namespace ncclfi::cpu_ring
