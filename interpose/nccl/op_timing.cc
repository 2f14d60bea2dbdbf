#include "op_timing.h"

#include <chrono>
#include <string>

#include "comm_registry.h"
#include "cuda_driver.h"
#include "preload_state.h"

namespace ncclfi::preload {
namespace {

using Clock = std::chrono::steady_clock;

struct PendingOp {
  Clock::time_point enqueued;
  nlohmann::json fields;
  int rank;
};

void CUDA_CB note_done(void* data) {
  auto* op = static_cast<PendingOp*>(data);
  const auto took = std::chrono::duration<double, std::micro>(Clock::now() - op->enqueued);
  op->fields["dur_us"] = took.count();
  // Host functions may not call CUDA; writing an event line is plain I/O.
  injector().events().write_for_rank(op->rank, ev::kOpTime, op->fields);
  delete op;
}

void enqueue_note(cudaStream_t stream, int device, PendingOp* op) {
  std::string error;
  const CudaDriver* cu = cuda_driver(&error);
  auto cu_stream = reinterpret_cast<CUstream>(stream);
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cu == nullptr || cu->stream_is_capturing == nullptr ||
      cu->stream_is_capturing(cu_stream, &capture) != CUDA_SUCCESS ||
      capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    delete op;
    return;
  }
  const StreamContext context(*cu, cu_stream, device);
  if (!context.error().empty() || cu->launch_host_func(cu_stream, &note_done, op) != CUDA_SUCCESS) delete op;
}

}  // namespace

void time_op(const OpCall& call, const CallSite& site, uint64_t seq, CommInfo* comm, ncclResult_t rc,
             Clock::time_point called) {
  if (rc != ncclSuccess) return;  // failed, or (ncclInProgress) enqueued later by a non-blocking comm
  auto* op = new PendingOp{
      called, {{"comm", site.comm}, {"seq", seq}, {"op", site.op}, {"bytes", site.bytes}}, site.rank};
  const int device = comm != nullptr ? comm->device.load() : -1;
  GroupState& group = group_state();
  if (group.depth > 0) {
    op->fields["in_group"] = true;
    group.deferred.emplace_back(comm,
                                [stream = call.stream, device, op] { enqueue_note(stream, device, op); });
    return;
  }
  enqueue_note(call.stream, device, op);
}

}  // namespace ncclfi::preload
