// The NCCL side of ncclfi-workload: dtype mapping, one enqueue function per op (through NCCL's
// collectives, or grouped send/recv where this NCCL lacks one), and the non-blocking wait.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "dtype.h"
#include "expected_values.h"

namespace ncclfi::workload {

ncclDataType_t to_nccl(DType dtype);

// How an op is carried out by the NCCL in this process: "native" (ncclGather, ...) or "p2p" (a group
// of ncclSend/ncclRecv, for an NCCL older than 2.28 where ncclGather/ncclScatter/ncclAlltoAll are missing).
// Looked up at run time with dlsym, so the binary loads against any NCCL 2.x.
const char* op_implementation(OpKind op);

// Enqueues one step of `layout.op` on `stream`. Returns what NCCL returned (ncclInProgress is normal
// on a non-blocking communicator: wait with await_nonblocking).
ncclResult_t enqueue_op(const OpLayout& layout, DType dtype, const void* send, void* recv, ncclComm_t comm,
                        cudaStream_t stream);

// For a non-blocking communicator: while `result` is ncclInProgress, polls ncclCommGetAsyncError until
// the state settles, and returns it. Blocking calls come back unchanged.
ncclResult_t await_nonblocking(ncclComm_t comm, ncclResult_t result);

std::string nccl_version_string();

}  // namespace ncclfi::workload
