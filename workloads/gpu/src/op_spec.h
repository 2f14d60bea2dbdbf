// The table of operations (nccl-tests style): names, how a byte size becomes counts per rank, which
// ops have a root, and the bus bandwidth factor nccl-tests uses for each.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "expected_values.h"

namespace ncclfi::workload {

struct OpSpec {
  OpKind kind;
  std::string_view name;   // all_reduce, all_gather, ...
  std::string_view point;  // the preload's point suffix: allreduce, allgather, ... (send for the ring)
  bool has_root;
  bool split_by_rank;    // the size is divided into one block per rank
  bool needs_nccl_2_28;  // ncclGather / ncclScatter
};

std::span<const OpSpec> all_ops();
const OpSpec& op_spec(OpKind kind);
// Accepts the names above and aliases (allreduce, all-to-all, alltoall, send_recv, ring, ...).
std::optional<OpKind> parse_op(std::string_view name);

// The buffers of `rank` for one step of `op` on `bytes` bytes of elements of `elem_size` bytes, as
// nccl-tests sizes them: `bytes` is the total data of the op (the gathered output, the scattered input,
// the per-rank all_to_all buffer). A split op gets at least one element per rank. Rooted ops rotate
// their root with the step: root = seq % nranks.
OpLayout make_layout(OpKind op, uint64_t bytes, uint64_t elem_size, int rank, int nranks, uint64_t seq);

// How many receive elements the op defines on this rank (0 for a non-root in reduce and gather).
uint64_t defined_elements(const OpLayout& layout);

// The bytes counted for bandwidth (nccl-tests' "size" column) for this layout.
uint64_t op_bytes(const OpLayout& layout, uint64_t elem_size);

// nccl-tests' bus bandwidth factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all,
// gather, scatter (n-1)/n; reduce, broadcast, send/recv 1.
double busbw_factor(OpKind op, int nranks);

struct Bandwidth {
  double algbw_gbps = 0;  // GB/s (1e9 bytes), bytes / time
  double busbw_gbps = 0;  // algbw * busbw_factor
};
Bandwidth compute_bandwidth(OpKind op, uint64_t bytes, double seconds, int nranks);

}  // namespace ncclfi::workload
