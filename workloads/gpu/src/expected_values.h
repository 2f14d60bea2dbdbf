// The deterministic inputs and the expected result of every operation, element by element.
// Shared verbatim by the host (unit tests, host-side checks) and the CUDA kernels (fill and verify),
// so what the tests prove is what runs on the GPU.
//
// Every input is a small integer (1..8), so every sum over up to 15 ranks is exact in every dtype
// (int8 included; bfloat16 up to 32 ranks) whatever order NCCL adds in: a result is right or wrong,
// never "close". Inputs never contain 0, so a zeroed buffer is always caught. The step number
// `seq` is mixed in, so a result left over from an earlier step (a skipped op) does not verify
// (except by chance in a buffer of a handful of elements).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define NCCLFI_HD __host__ __device__
#else
#define NCCLFI_HD
#endif

namespace ncclfi::workload {

enum class OpKind : int {
  kAllReduce = 0,
  kAllGather,
  kReduceScatter,
  kReduce,
  kBroadcast,
  kAllToAll,
  kSendRecv,  // ring: send to rank+1, receive from rank-1
  kGather,
  kScatter,
};
inline constexpr int kOpKindCount = 9;

// What one rank's buffers hold for one step of one op. `chunk` is the per-rank block for the ops that
// split their buffer by rank (all_gather, reduce_scatter, all_to_all, gather, scatter), else the count.
struct OpLayout {
  OpKind op = OpKind::kAllReduce;
  int rank = 0;
  int nranks = 1;
  int root = 0;             // reduce, broadcast, gather, scatter
  uint64_t chunk = 0;       // elements per rank block (or the whole count for unsplit ops)
  uint64_t send_count = 0;  // elements in the send buffer
  uint64_t recv_count = 0;  // elements in the receive buffer
};

// Input element `index` of `rank`'s send buffer at step `seq`: an integer in 1..8, from a small integer
// hash. A linear formula would not do: (a + 3r) % 8 over 8 ranks sums to the same value whatever a is,
// and a constant result cannot tell a fresh step from a stale one.
NCCLFI_HD inline int64_t input_value(int rank, uint64_t index, uint64_t seq) {
  uint32_t h = static_cast<uint32_t>(index) * 0x9e3779b1u + static_cast<uint32_t>(index >> 32) * 0x27d4eb2fu +
               static_cast<uint32_t>(rank) * 0x85ebca77u + static_cast<uint32_t>(seq) * 0xc2b2ae3du;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  h *= 0x297a2d39u;
  h ^= h >> 15;
  return 1 + static_cast<int64_t>(h >> 29);
}

NCCLFI_HD inline int64_t sum_over_ranks(int nranks, uint64_t index, uint64_t seq) {
  int64_t sum = 0;
  for (int r = 0; r < nranks; ++r) sum += input_value(r, index, seq);
  return sum;
}

// The expected value of receive element `i` on `layout.rank` after step `seq`. Returns false when the
// op leaves that element undefined on this rank (the receive buffer of a non-root in reduce and gather).
NCCLFI_HD inline bool expected_output(const OpLayout& layout, uint64_t i, uint64_t seq, int64_t* value) {
  const uint64_t chunk = layout.chunk;
  const uint64_t rank = static_cast<uint64_t>(layout.rank);
  switch (layout.op) {
    case OpKind::kAllReduce:
      *value = sum_over_ranks(layout.nranks, i, seq);
      return true;
    case OpKind::kAllGather:
      *value = input_value(static_cast<int>(i / chunk), i % chunk, seq);
      return true;
    case OpKind::kReduceScatter:
      *value = sum_over_ranks(layout.nranks, rank * chunk + i, seq);
      return true;
    case OpKind::kReduce:
      if (layout.rank != layout.root) return false;
      *value = sum_over_ranks(layout.nranks, i, seq);
      return true;
    case OpKind::kBroadcast:
      *value = input_value(layout.root, i, seq);
      return true;
    case OpKind::kAllToAll:
      *value = input_value(static_cast<int>(i / chunk), rank * chunk + i % chunk, seq);
      return true;
    case OpKind::kSendRecv:
      *value = input_value((layout.rank + layout.nranks - 1) % layout.nranks, i, seq);
      return true;
    case OpKind::kGather:
      if (layout.rank != layout.root) return false;
      *value = input_value(static_cast<int>(i / chunk), i % chunk, seq);
      return true;
    case OpKind::kScatter:
      *value = input_value(layout.root, rank * chunk + i, seq);
      return true;
  }
  return false;
}

}  // namespace ncclfi::workload
