#include "op_spec.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace ncclfi::workload {
namespace {

// Indexed by OpKind.
constexpr std::array<OpSpec, kOpKindCount> kOps = {{
    {OpKind::kAllReduce, "all_reduce", "allreduce", false, false, false},
    {OpKind::kAllGather, "all_gather", "allgather", false, true, false},
    {OpKind::kReduceScatter, "reduce_scatter", "reducescatter", false, true, false},
    {OpKind::kReduce, "reduce", "reduce", true, false, false},
    {OpKind::kBroadcast, "broadcast", "broadcast", true, false, false},
    {OpKind::kAllToAll, "all_to_all", "alltoall", false, true, false},
    {OpKind::kSendRecv, "sendrecv", "send", false, false, false},
    {OpKind::kGather, "gather", "gather", true, true, true},
    {OpKind::kScatter, "scatter", "scatter", true, true, true},
}};

}  // namespace

std::span<const OpSpec> all_ops() {
  return kOps;
}

const OpSpec& op_spec(OpKind kind) {
  return kOps.at(static_cast<size_t>(kind));
}

std::optional<OpKind> parse_op(std::string_view name) {
  for (const OpSpec& spec : kOps) {
    if (spec.name == name || spec.point == name) return spec.kind;
  }
  struct Alias {
    std::string_view name;
    OpKind kind;
  };
  static constexpr Alias kAliases[] = {
      {"all-reduce", OpKind::kAllReduce},
      {"all-gather", OpKind::kAllGather},
      {"reduce-scatter", OpKind::kReduceScatter},
      {"all-to-all", OpKind::kAllToAll},
      {"alltoall", OpKind::kAllToAll},
      {"send_recv", OpKind::kSendRecv},
      {"send-recv", OpKind::kSendRecv},
      {"ring", OpKind::kSendRecv},
      {"bcast", OpKind::kBroadcast},
  };
  for (const Alias& alias : kAliases) {
    if (alias.name == name) return alias.kind;
  }
  return std::nullopt;
}

OpLayout make_layout(OpKind op, uint64_t bytes, uint64_t elem_size, int rank, int nranks, uint64_t seq) {
  if (elem_size == 0 || nranks <= 0 || rank < 0 || rank >= nranks) {
    throw std::invalid_argument("make_layout: bad element size, rank or world size");
  }
  const OpSpec& spec = op_spec(op);
  const uint64_t n = static_cast<uint64_t>(nranks);
  const uint64_t total = std::max<uint64_t>(bytes / elem_size, 1);
  OpLayout layout;
  layout.op = op;
  layout.rank = rank;
  layout.nranks = nranks;
  layout.root = spec.has_root ? static_cast<int>(seq % n) : 0;
  layout.chunk = spec.split_by_rank ? std::max<uint64_t>(total / n, 1) : total;
  switch (op) {
    case OpKind::kAllReduce:
    case OpKind::kReduce:
    case OpKind::kBroadcast:
    case OpKind::kSendRecv:
      layout.send_count = layout.chunk;
      layout.recv_count = layout.chunk;
      break;
    case OpKind::kAllGather:
    case OpKind::kGather:
      layout.send_count = layout.chunk;
      layout.recv_count = layout.chunk * n;
      break;
    case OpKind::kReduceScatter:
    case OpKind::kScatter:
      layout.send_count = layout.chunk * n;
      layout.recv_count = layout.chunk;
      break;
    case OpKind::kAllToAll:
      layout.send_count = layout.chunk * n;
      layout.recv_count = layout.chunk * n;
      break;
  }
  return layout;
}

uint64_t defined_elements(const OpLayout& layout) {
  const bool rooted_output = layout.op == OpKind::kReduce || layout.op == OpKind::kGather;
  return rooted_output && layout.rank != layout.root ? 0 : layout.recv_count;
}

uint64_t op_bytes(const OpLayout& layout, uint64_t elem_size) {
  const bool split = op_spec(layout.op).split_by_rank;
  return (split ? layout.chunk * static_cast<uint64_t>(layout.nranks) : layout.chunk) * elem_size;
}

double busbw_factor(OpKind op, int nranks) {
  const double n = static_cast<double>(nranks);
  switch (op) {
    case OpKind::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllToAll:
    case OpKind::kGather:
    case OpKind::kScatter:
      return (n - 1.0) / n;
    case OpKind::kReduce:
    case OpKind::kBroadcast:
    case OpKind::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

Bandwidth compute_bandwidth(OpKind op, uint64_t bytes, double seconds, int nranks) {
  Bandwidth bw;
  if (seconds <= 0) return bw;
  bw.algbw_gbps = static_cast<double>(bytes) / 1.0e9 / seconds;
  bw.busbw_gbps = bw.algbw_gbps * busbw_factor(op, nranks);
  return bw;
}

}  // namespace ncclfi::workload
