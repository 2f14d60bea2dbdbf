// What each api-layer fault action does to the call it fired on. The wrappers decide *whether* a fault
// fires (FaultPoint::check); this decides *what happens*, records the injection, and calls NCCL
// (`forward`) when the kind lets the call through.
#pragma once

#include <cstdint>

#include <nccl.h>

#include "comm_registry.h"
#include "function_ref.h"
#include "ncclfi/point.h"
#include "op_call.h"

namespace ncclfi::preload {

// Calls NCCL at most once and remembers the result, so the callers know whether NCCL was reached
// (exceptions in our own code must never call NCCL twice or not at all).
class Forwarder {
 public:
  explicit Forwarder(FunctionRef<ncclResult_t()> call) : call_(call) {}
  ncclResult_t operator()() {
    if (!done_) {
      rc_ = call_();
      done_ = true;
    }
    return rc_;
  }
  bool done() const { return done_; }
  ncclResult_t rc() const { return rc_; }

 private:
  FunctionRef<ncclResult_t()> call_;
  bool done_ = false;
  ncclResult_t rc_ = ncclSuccess;
};

struct FiredFault {
  const ArmedFault* fault = nullptr;
  const char* point = nullptr;
  CallSite site;
  CommInfo* comm = nullptr;  // the comm of the call, when it has one
  uint64_t seq = 0;          // the op's sequence number on its comm (0: not an op)
};

// Carries out the action of `fired` (its fault's ApiAction): Delay/Hang hold the call then forward
// (Hang without ms blocks for ever); GpuHang puts a wait on the op's stream ahead of the op, then
// forwards; Skip returns ncclSuccess; FailWithCode returns its code;
// AsyncError marks the comm then forwards; CorruptElements forwards then schedules the alteration of
// `op`'s receive buffer; DieBySignal/ExitWithCode end the process. Returns what the wrapper returns.
ncclResult_t apply_fault(const FiredFault& fired, Forwarder& forward, const OpCall* op);

// Blocks the calling thread for ever (hang and init_hang without ms).
[[noreturn]] void hang_forever();

// Runs the corruptions a non-blocking comm was waiting for (its ops are now enqueued).
void flush_pending(CommInfo& comm);

}  // namespace ncclfi::preload
