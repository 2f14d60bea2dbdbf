#include "net_faults.h"

#include <algorithm>

namespace ncclfi::net {

void TokenBucket::set_rate(double bits_per_second) {
  std::lock_guard<std::mutex> lock(mu_);
  bits_per_second_ = bits_per_second;
}

int64_t TokenBucket::reserve(uint64_t bytes, int64_t earliest_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bits_per_second_ <= 0) return earliest_ns;
  const int64_t start = std::max(earliest_ns, next_free_ns_);
  next_free_ns_ = start + static_cast<int64_t>(static_cast<double>(bytes) * 8e9 / bits_per_second_);
  return next_free_ns_;
}

}  // namespace ncclfi::net
