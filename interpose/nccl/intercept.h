// The slow path of every wrapper (a plan or the op trace is active): re-entrancy guard, communicator
// lookup, op sequence and trace, the fault point check, then apply_fault or forward. Each function
// calls `forward` (NCCL) at most once, and exactly once unless a fault keeps the call from NCCL.
// None of them lets an exception out.
#pragma once

#include <nccl.h>

#include "function_ref.h"
#include "op_call.h"

namespace ncclfi::preload {

using ForwardFn = FunctionRef<ncclResult_t()>;

ncclResult_t intercept_op(const OpCall& call, ForwardFn forward);
ncclResult_t intercept_group_start(ForwardFn forward);
// simulate: ncclGroupSimulateEnd (ends the group without launching; never a fault site).
ncclResult_t intercept_group_end(ForwardFn forward, bool simulate);
ncclResult_t intercept_get_async_error(ncclComm_t comm, ncclResult_t* async_error, ForwardFn forward);

// A communicator constructor, as the point nccl/comm/init sees it.
struct InitCall {
  const char* api = "";  // the NCCL function, for logs
  int rank = -1;         // the new comm's rank when known from the arguments
  int nranks = -1;
  ncclComm_t parent = nullptr;    // Split/Shrink: rank and size come from the parent
  ncclComm_t* outputs = nullptr;  // the new comm(s)
  int n_outputs = 1;              // InitAll: one per device, rank i
  const int* devlist = nullptr;   // InitAll
};
ncclResult_t intercept_init(const InitCall& call, ForwardFn forward);

// Finalize (forget=false), Destroy and Abort (forget=true: the registry drops the comm). Abort is also the
// fault point nccl/comm/abort (`fault_point` set).
ncclResult_t intercept_teardown(ncclComm_t comm, bool forget, bool fault_point, ForwardFn forward);

// What a wrapper returns when the loaded NCCL lacks its symbol (logged once per name with NCCLFI_LOG).
ncclResult_t missing_symbol(const char* name);

}  // namespace ncclfi::preload
