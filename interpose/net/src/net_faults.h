// The effects of the net-layer fault actions that only the shim has, as small pure pieces it composes: the
// NCCL code of FailWithCode/ConnectFail and the per-connection token bucket of Throttle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "ncclfi/effects.h"
#include "ncclfi/fault_action.h"
#include "ncclfi/nccl_results.h"
#include "ncclfi_interpose/nccl_result.h"
#include "ncclfi_net/net_types.h"

namespace ncclfi::net {

// to_nccl_result(NcclError): ncclfi_interpose/nccl_result.h, shared with the preload.
using ncclfi::to_nccl_result;

// A Delay's hold (Delay::draw), the corruption seed and flip_bits come from the effects layer every front
// end shares (ncclfi/effects.h).

// A token bucket with no burst: each reservation of `bytes` starts when the previous one ended (or now),
// so a stream through it runs at exactly `bits_per_second`.
class TokenBucket {
 public:
  void set_rate(double bits_per_second);
  bool active() const { return bits_per_second_ > 0; }
  double rate() const { return bits_per_second_; }
  // Reserves `bytes` that could start flowing at `earliest_ns`; returns the monotonic time (ns) at which
  // they have passed through. Reservations queue behind each other (one link).
  int64_t reserve(uint64_t bytes, int64_t earliest_ns);

 private:
  std::mutex mu_;
  double bits_per_second_ = 0;
  int64_t next_free_ns_ = 0;
};

}  // namespace ncclfi::net
