// NCCLFI_TIME_OPS: how long each op takes as a watchdog sees it, from the call that enqueues it to the moment
// its stream has finished it (a host function after the op notes that moment). `ncclfi timeouts` turns these
// op_time events of the healthy job into its "longest collective", which a collective timeout must clear.
#pragma once

#include <chrono>
#include <cstdint>

#include "ncclfi/point.h"
#include "op_call.h"

namespace ncclfi::preload {

struct CommInfo;

// After the op was handed to NCCL (rc: what NCCL returned). In a group the op reaches the stream at the
// outermost ncclGroupEnd, so the note is enqueued then; ops of a non-blocking comm still in progress and ops
// on a stream being captured into a CUDA graph are not timed.
// `called`: when the application called the op.
void time_op(const OpCall& call, const CallSite& site, uint64_t seq, CommInfo* comm, ncclResult_t rc,
             std::chrono::steady_clock::time_point called);

}  // namespace ncclfi::preload
