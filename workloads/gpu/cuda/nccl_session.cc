#include "nccl_session.h"

#include <dlfcn.h>

#include <thread>

namespace ncclfi::workload {
namespace {

using RootedFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
using AlltoAllFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);

// RTLD_DEFAULT finds the first definition in the process, so an LD_PRELOADed interposer sees these calls
// exactly as it sees the directly linked ones.
template <typename Fn>
Fn lookup(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

RootedFn gather_fn() {
  static const RootedFn fn = lookup<RootedFn>("ncclGather");
  return fn;
}
RootedFn scatter_fn() {
  static const RootedFn fn = lookup<RootedFn>("ncclScatter");
  return fn;
}
AlltoAllFn alltoall_fn() {
  static const AlltoAllFn fn = lookup<AlltoAllFn>("ncclAlltoAll");
  return fn;
}

const char* at(const void* base, uint64_t elements, size_t esize) {
  return static_cast<const char*>(base) + elements * esize;
}
char* at(void* base, uint64_t elements, size_t esize) {
  return static_cast<char*>(base) + elements * esize;
}

// Grouped point-to-point forms of the ops an older NCCL lacks.
ncclResult_t p2p_op(const OpLayout& l, DType dtype, const void* send, void* recv, ncclComm_t comm,
                    cudaStream_t stream) {
  const ncclDataType_t type = to_nccl(dtype);
  const size_t esize = dtype_size(dtype);
  ncclResult_t first = ncclGroupStart();
  if (first != ncclSuccess) return first;
  ncclResult_t result = ncclSuccess;
  const auto keep = [&](ncclResult_t r) {
    if (result == ncclSuccess && r != ncclSuccess && r != ncclInProgress) result = r;
  };
  for (int peer = 0; peer < l.nranks; ++peer) {
    const uint64_t p = static_cast<uint64_t>(peer);
    switch (l.op) {
      case OpKind::kAllToAll:
        keep(ncclSend(at(send, p * l.chunk, esize), l.chunk, type, peer, comm, stream));
        keep(ncclRecv(at(recv, p * l.chunk, esize), l.chunk, type, peer, comm, stream));
        break;
      case OpKind::kGather:
        if (peer == l.root) keep(ncclSend(send, l.chunk, type, l.root, comm, stream));
        if (l.rank == l.root) keep(ncclRecv(at(recv, p * l.chunk, esize), l.chunk, type, peer, comm, stream));
        break;
      case OpKind::kScatter:
        if (l.rank == l.root) keep(ncclSend(at(send, p * l.chunk, esize), l.chunk, type, peer, comm, stream));
        if (peer == l.root) keep(ncclRecv(recv, l.chunk, type, l.root, comm, stream));
        break;
      default:
        break;
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  return result != ncclSuccess ? result : end;
}

}  // namespace

// DType is numbered as ncclDataType_t, so the conversion is a cast (and device_kernels.cu switches on
// NCCL's enumerators directly).
static_assert(static_cast<int>(DType::kInt8) == ncclInt8 && static_cast<int>(DType::kUint8) == ncclUint8 &&
              static_cast<int>(DType::kInt32) == ncclInt32 && static_cast<int>(DType::kInt64) == ncclInt64 &&
              static_cast<int>(DType::kHalf) == ncclFloat16 &&
              static_cast<int>(DType::kFloat) == ncclFloat32 &&
              static_cast<int>(DType::kDouble) == ncclFloat64 &&
              static_cast<int>(DType::kBfloat16) == ncclBfloat16);

ncclDataType_t to_nccl(DType dtype) {
  return static_cast<ncclDataType_t>(static_cast<int>(dtype));
}

const char* op_implementation(OpKind op) {
  switch (op) {
    case OpKind::kGather:
      return gather_fn() != nullptr ? "native" : "p2p";
    case OpKind::kScatter:
      return scatter_fn() != nullptr ? "native" : "p2p";
    case OpKind::kAllToAll:
      return alltoall_fn() != nullptr ? "native" : "p2p";
    case OpKind::kSendRecv:
      return "p2p";
    default:
      return "native";
  }
}

ncclResult_t enqueue_op(const OpLayout& l, DType dtype, const void* send, void* recv, ncclComm_t comm,
                        cudaStream_t stream) {
  const ncclDataType_t type = to_nccl(dtype);
  switch (l.op) {
    case OpKind::kAllReduce:
      return ncclAllReduce(send, recv, l.chunk, type, ncclSum, comm, stream);
    case OpKind::kAllGather:
      return ncclAllGather(send, recv, l.chunk, type, comm, stream);
    case OpKind::kReduceScatter:
      return ncclReduceScatter(send, recv, l.chunk, type, ncclSum, comm, stream);
    case OpKind::kReduce:
      return ncclReduce(send, recv, l.chunk, type, ncclSum, l.root, comm, stream);
    case OpKind::kBroadcast:
      return ncclBroadcast(send, recv, l.chunk, type, l.root, comm, stream);
    case OpKind::kAllToAll:
      if (alltoall_fn() != nullptr) return alltoall_fn()(send, recv, l.chunk, type, comm, stream);
      return p2p_op(l, dtype, send, recv, comm, stream);
    case OpKind::kGather:
      if (gather_fn() != nullptr) return gather_fn()(send, recv, l.chunk, type, l.root, comm, stream);
      return p2p_op(l, dtype, send, recv, comm, stream);
    case OpKind::kScatter:
      if (scatter_fn() != nullptr) return scatter_fn()(send, recv, l.chunk, type, l.root, comm, stream);
      return p2p_op(l, dtype, send, recv, comm, stream);
    case OpKind::kSendRecv: {
      const int next = (l.rank + 1) % l.nranks;
      const int prev = (l.rank + l.nranks - 1) % l.nranks;
      ncclResult_t r = ncclGroupStart();
      if (r != ncclSuccess) return r;
      const ncclResult_t s = ncclSend(send, l.chunk, type, next, comm, stream);
      const ncclResult_t v = ncclRecv(recv, l.chunk, type, prev, comm, stream);
      r = ncclGroupEnd();
      if (s != ncclSuccess && s != ncclInProgress) return s;
      if (v != ncclSuccess && v != ncclInProgress) return v;
      return r;
    }
  }
  return ncclInvalidArgument;
}

ncclResult_t await_nonblocking(ncclComm_t comm, ncclResult_t result) {
  while (result == ncclInProgress) {
    std::this_thread::yield();
    ncclResult_t state = ncclSuccess;
    const ncclResult_t query = ncclCommGetAsyncError(comm, &state);
    if (query != ncclSuccess) return query;
    result = state;
  }
  return result;
}

std::string nccl_version_string() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return "unknown";
  // 2.x codes since 2.9: major*10000 + minor*100 + patch.
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

}  // namespace ncclfi::workload
