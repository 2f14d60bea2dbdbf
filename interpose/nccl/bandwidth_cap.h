// The `bandwidth_cap` fault: the op's stream is held after the op until the op has taken `seconds` in all,
// the time its bus bytes need at the capped rate. Two host functions on the stream measure and hold: one
// before the op notes when the stream reached it, one after it sleeps for what is left. The hold is on the
// GPU's timeline, not the caller's, so ops queued ahead are each held in turn, as on a slow link.
#pragma once

#include <string>

#include <nccl.h>

namespace ncclfi::preload {

class BandwidthHold {
 public:
  // On `stream` (its context; for the NULL stream `device`'s primary context).
  BandwidthHold(cudaStream_t stream, int device, double seconds);
  ~BandwidthHold();
  BandwidthHold(const BandwidthHold&) = delete;
  BandwidthHold& operator=(const BandwidthHold&) = delete;

  // Before the op: the mark that notes when the stream reaches it. Skip it when the op was queued earlier
  // (in a group, or by a non-blocking comm): the hold is then the whole `seconds`, after the op.
  std::string mark_start();
  // After the op: the hold. "" when enqueued, else why not.
  std::string hold_after();

  struct Mark;

 private:
  cudaStream_t stream_;
  int device_;
  Mark* mark_;
  bool handed_over_ = false;  // the stream owns the mark (a host function will use it)
};

}  // namespace ncclfi::preload
