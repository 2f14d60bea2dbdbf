// The effects of the net-layer fault actions, as small pure pieces the shim composes: the NCCL code
// of FailWithCode/ConnectFail, Delay with seeded jitter, the per-connection token bucket of Throttle,
// and the exact bit flips of CorruptBits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "ncclfi/fault_action.h"
#include "ncclfi/nccl_results.h"
#include "ncclfi_interpose/nccl_result.h"
#include "ncclfi_net/net_types.h"

namespace ncclfi::net {

// to_nccl_result(NcclError): ncclfi_interpose/nccl_result.h, shared with the preload.
using ncclfi::to_nccl_result;

// delay.ms plus a draw in [0, delay.jitter_ms] seeded by (seed, fault id, firing), in ns.
int64_t fault_delay_ns(const Delay& delay, const std::string& fault_id, uint64_t seed, uint64_t firing);

// Flips exactly min(nbits, 8*bytes) distinct bits of data[0, bytes), chosen from `seed`. Returns the bit
// positions flipped (ascending).
std::vector<uint64_t> flip_bits(void* data, size_t bytes, uint64_t nbits, uint64_t seed);

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
