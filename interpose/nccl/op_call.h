// How the preload sees one collective or point-to-point call: its kind, communicator, stream, the
// buffer it writes on this rank, and the sizes that fault targets (min_bytes) and the op trace use.
#pragma once

#include <cstddef>
#include <cstdint>

#include <nccl.h>

namespace ncclfi::preload {

enum class OpKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kReduce,
  kBroadcast,  // ncclBroadcast and ncclBcast (in place) alike
  kAlltoAll,
  kGather,
  kScatter,
  kSend,
  kRecv,
};
inline constexpr int kOpKindCount = 10;

struct OpCall {
  OpKind kind;
  ncclComm_t comm;
  cudaStream_t stream;
  void* recvbuff;  // the buffer this op writes on this rank (nullptr for send)
  size_t count;    // the count argument as passed (per rank for allgather/alltoall/gather/scatter)
  ncclDataType_t datatype;
  int root;  // -1 when the op has no root
  int peer;  // -1 when the op has no peer
};

// "allreduce", "send", ... (the op names of fault targets and of the op trace).
const char* op_name(OpKind kind);

// Size of one element of `datatype` in bytes, or 0 for an unknown type.
size_t datatype_size(ncclDataType_t datatype);

// The op's size as nccl-tests reports it: the larger of its send and receive buffers in bytes
// (count * nranks for allgather, reducescatter, alltoall, gather, scatter). nranks < 1 counts as 1.
uint64_t op_bytes(const OpCall& call, int nranks);
// The bytes each rank's links carry for the op, as nccl-tests counts them for busbw (all_reduce
// 2(n-1)/n of the buffer, all_gather and friends (n-1)/n of the whole, broadcast and point-to-point all).
double op_bus_bytes(const OpCall& call, int nranks);

// Elements the op writes into recvbuff on `rank` (0 when it writes none there: send, a reduce or
// gather on a non-root rank).
size_t op_result_elements(const OpCall& call, int rank, int nranks);

}  // namespace ncclfi::preload
