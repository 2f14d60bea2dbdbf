// The effects of the net-layer fault kinds, as small pure pieces the shim composes (DESIGN.md, net):
// the asked NCCL code of `error`/`connect_fail`, delay with seeded jitter, the per-connection token
// bucket of `throttle`, and the exact bit flips of `corrupt`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ncclfi/plan.h"
#include "ncclfi_net/net_types.h"

namespace ncclfi::net {

// params.code as an int (2) or a name ("ncclRemoteError", "RemoteError", "remote"); `fallback` if absent
// or unknown.
ncclResult_t fault_error_code(const Fault& fault, ncclResult_t fallback);

// params.ms plus a seeded uniform draw in [0, jitter_ms], in ns.
int64_t fault_delay_ns(const Fault& fault, uint64_t plan_seed, uint64_t firing);

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
