// The declaration table of every NCCL entry point the preload wraps: one line per function.
// Each X-macro row carries the name, the parameter list as nccl.h declares it, the argument list that
// forwards them unchanged, and (for ops) how to describe the call to the fault points. The wrappers are
// generated from these rows in wrappers.cc; only the odd cases (constructors, group calls,
// ncclCommGetAsyncError) are written by hand there, but their signatures still come from here.
//
// Rows are grouped by the NCCL release that introduced them, so the preload builds against any nccl.h
// from 2.18 on; at run time a symbol missing from the loaded NCCL is resolved lazily and only fails
// (ncclInvalidUsage) if the application calls it.
#pragma once

#include <nccl.h>

#ifndef NCCL_VERSION_CODE
#error "nccl.h without NCCL_VERSION_CODE is too old for ncclfi (needs 2.18+)"
#endif

// clang-format off

// Collectives and point-to-point: X(name, params, args, describe). `describe` builds an OpCall
// (op_call.h) from the arguments; the recv buffer it names is the one `corrupt` alters.
#define NCCLFI_OPS_BASE(X) \
  X(ncclAllReduce, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, op, comm, stream), (OpCall{OpKind::kAllReduce, comm, stream, recvbuff, count, datatype, -1, -1})) \
  X(ncclAllGather, (const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, sendcount, datatype, comm, stream), (OpCall{OpKind::kAllGather, comm, stream, recvbuff, sendcount, datatype, -1, -1})) \
  X(ncclReduceScatter, (const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, recvcount, datatype, op, comm, stream), (OpCall{OpKind::kReduceScatter, comm, stream, recvbuff, recvcount, datatype, -1, -1})) \
  X(ncclReduce, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, op, root, comm, stream), (OpCall{OpKind::kReduce, comm, stream, recvbuff, count, datatype, root, -1})) \
  X(ncclBroadcast, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm, stream), (OpCall{OpKind::kBroadcast, comm, stream, recvbuff, count, datatype, root, -1})) \
  X(ncclBcast, (void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream), (buff, count, datatype, root, comm, stream), (OpCall{OpKind::kBroadcast, comm, stream, buff, count, datatype, root, -1})) \
  X(ncclSend, (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream), (sendbuff, count, datatype, peer, comm, stream), (OpCall{OpKind::kSend, comm, stream, nullptr, count, datatype, -1, peer})) \
  X(ncclRecv, (void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream), (recvbuff, count, datatype, peer, comm, stream), (OpCall{OpKind::kRecv, comm, stream, recvbuff, count, datatype, -1, peer}))

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define NCCLFI_OPS_2_28(X) \
  X(ncclAlltoAll, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, comm, stream), (OpCall{OpKind::kAlltoAll, comm, stream, recvbuff, count, datatype, -1, -1})) \
  X(ncclGather, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm, stream), (OpCall{OpKind::kGather, comm, stream, recvbuff, count, datatype, root, -1})) \
  X(ncclScatter, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm, stream), (OpCall{OpKind::kScatter, comm, stream, recvbuff, count, datatype, root, -1}))
#else
#define NCCLFI_OPS_2_28(X)
#endif

#define NCCLFI_OPS(X) NCCLFI_OPS_BASE(X) NCCLFI_OPS_2_28(X)

// Calls passed through untouched (registration, memory, reduction ops, ids): X(name, params, args).
#define NCCLFI_PASSTHROUGH_BASE(X) \
  X(ncclGetUniqueId, (ncclUniqueId* uniqueId), (uniqueId)) \
  X(ncclRedOpCreatePreMulSum, (ncclRedOp_t* op, void* scalar, ncclDataType_t datatype, ncclScalarResidence_t residence, ncclComm_t comm), (op, scalar, datatype, residence, comm)) \
  X(ncclRedOpDestroy, (ncclRedOp_t op, ncclComm_t comm), (op, comm))

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
#define NCCLFI_PASSTHROUGH_2_19(X) \
  X(ncclMemAlloc, (void** ptr, size_t size), (ptr, size)) \
  X(ncclMemFree, (void* ptr), (ptr)) \
  X(ncclCommRegister, (const ncclComm_t comm, void* buff, size_t size, void** handle), (comm, buff, size, handle)) \
  X(ncclCommDeregister, (const ncclComm_t comm, void* handle), (comm, handle))
#else
#define NCCLFI_PASSTHROUGH_2_19(X)
#endif

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
#define NCCLFI_PASSTHROUGH_2_27(X) \
  X(ncclCommWindowRegister, (ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags), (comm, buff, size, win, winFlags)) \
  X(ncclCommWindowDeregister, (ncclComm_t comm, ncclWindow_t win), (comm, win))
#else
#define NCCLFI_PASSTHROUGH_2_27(X)
#endif

#define NCCLFI_PASSTHROUGH(X) NCCLFI_PASSTHROUGH_BASE(X) NCCLFI_PASSTHROUGH_2_19(X) NCCLFI_PASSTHROUGH_2_27(X)

// Communicator constructors: X(name, params, args). Hand-written bodies in wrappers.cc, because
// each one tells the rank, size and new communicator(s) differently.
#define NCCLFI_CONSTRUCTORS_BASE(X) \
  X(ncclCommInitRank, (ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank), (comm, nranks, commId, rank)) \
  X(ncclCommInitRankConfig, (ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config), (comm, nranks, commId, rank, config)) \
  X(ncclCommInitAll, (ncclComm_t* comm, int ndev, const int* devlist), (comm, ndev, devlist)) \
  X(ncclCommSplit, (ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config), (comm, color, key, newcomm, config))

// Communicator teardown: X(name, params, args). The registry forgets the comm after Destroy/Abort.
#define NCCLFI_TEARDOWN_BASE(X) \
  X(ncclCommFinalize, (ncclComm_t comm), (comm)) \
  X(ncclCommDestroy, (ncclComm_t comm), (comm)) \
  X(ncclCommAbort, (ncclComm_t comm), (comm))

// Group calls and the async error poll: hand-written, declared here for completeness.
//   ncclGroupStart(), ncclGroupEnd(), ncclGroupSimulateEnd(ncclSimInfo_t*) [2.22+],
//   ncclCommGetAsyncError(ncclComm_t, ncclResult_t*), ncclCommInitRankScalable [2.23+],
//   ncclCommShrink [2.27+], ncclCommRevoke [2.28.7+, passed through].

// clang-format on
