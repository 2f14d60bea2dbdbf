#include "op_call.h"

namespace ncclfi::preload {

const char* op_name(OpKind kind) {
  switch (kind) {
    case OpKind::kAllReduce:
      return "allreduce";
    case OpKind::kAllGather:
      return "allgather";
    case OpKind::kReduceScatter:
      return "reducescatter";
    case OpKind::kReduce:
      return "reduce";
    case OpKind::kBroadcast:
      return "broadcast";
    case OpKind::kAlltoAll:
      return "alltoall";
    case OpKind::kGather:
      return "gather";
    case OpKind::kScatter:
      return "scatter";
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
  }
  return "unknown";
}

size_t datatype_size(ncclDataType_t datatype) {
  switch (static_cast<int>(datatype)) {
    case ncclInt8:
    case ncclUint8:
      return 1;
    case ncclInt32:
    case ncclUint32:
      return 4;
    case ncclInt64:
    case ncclUint64:
      return 8;
    case ncclFloat16:
      return 2;
    case ncclFloat32:
      return 4;
    case ncclFloat64:
      return 8;
    case 9:
      return 2;  // ncclBfloat16 (2.10+)
    case 10:     // ncclFloat8e4m3 (2.24+)
    case 11:
      return 1;  // ncclFloat8e5m2
    default:
      return 0;
  }
}

static bool scales_with_ranks(OpKind kind) {
  return kind == OpKind::kAllGather || kind == OpKind::kReduceScatter || kind == OpKind::kAlltoAll ||
         kind == OpKind::kGather || kind == OpKind::kScatter;
}

uint64_t op_bytes(const OpCall& call, int nranks) {
  uint64_t n = nranks < 1 ? 1 : static_cast<uint64_t>(nranks);
  uint64_t bytes = static_cast<uint64_t>(call.count) * datatype_size(call.datatype);
  return scales_with_ranks(call.kind) ? bytes * n : bytes;
}

double op_bus_bytes(const OpCall& call, int nranks) {
  const double n = nranks < 1 ? 1.0 : static_cast<double>(nranks);
  const double bytes = static_cast<double>(op_bytes(call, nranks));
  switch (call.kind) {
    case OpKind::kAllReduce:
      return bytes * 2.0 * (n - 1.0) / n;
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAlltoAll:
    case OpKind::kGather:
    case OpKind::kScatter:
      return bytes * (n - 1.0) / n;
    case OpKind::kReduce:
    case OpKind::kBroadcast:
    case OpKind::kSend:
    case OpKind::kRecv:
      return bytes;
  }
  return bytes;
}

size_t op_result_elements(const OpCall& call, int rank, int nranks) {
  size_t n = nranks < 1 ? 1 : static_cast<size_t>(nranks);
  switch (call.kind) {
    case OpKind::kAllReduce:
    case OpKind::kReduceScatter:
    case OpKind::kBroadcast:
    case OpKind::kScatter:
    case OpKind::kRecv:
      return call.count;
    case OpKind::kAllGather:
    case OpKind::kAlltoAll:
      return call.count * n;
    case OpKind::kReduce:
      return rank == call.root ? call.count : 0;
    case OpKind::kGather:
      return rank == call.root ? call.count * n : 0;
    case OpKind::kSend:
      return 0;
  }
  return 0;
}

}  // namespace ncclfi::preload
