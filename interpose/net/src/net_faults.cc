#include "net_faults.h"

#include "ncclfi/point.h"

#include <algorithm>
#include <random>
#include <set>
#include <string>

namespace ncclfi::net {

int64_t fault_delay_ns(const Delay& delay, const std::string& fault_id, uint64_t seed, uint64_t firing) {
  double total_ms = delay.ms;
  if (delay.jitter_ms > 0) {
    const double u = seeded_uniform(seed, fault_id + "/jitter", firing);
    total_ms += u * delay.jitter_ms;  // jitter is added on top: 0..jitter_ms (docs/faults.md)
  }
  return static_cast<int64_t>(std::max(0.0, total_ms) * 1e6);
}

std::vector<uint64_t> flip_bits(void* data, size_t bytes, uint64_t nbits, uint64_t seed) {
  const uint64_t total_bits = static_cast<uint64_t>(bytes) * 8;
  nbits = std::min(nbits, total_bits);
  std::set<uint64_t> chosen;
  std::mt19937_64 gen(seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
  if (nbits * 2 > total_bits) {
    // Dense: pick the bits to keep instead, so the loop below stays short.
    std::set<uint64_t> keep;
    while (keep.size() < total_bits - nbits) keep.insert(gen() % total_bits);
    for (uint64_t b = 0; b < total_bits; ++b) {
      if (!keep.count(b)) chosen.insert(b);
    }
  } else {
    while (chosen.size() < nbits) chosen.insert(gen() % total_bits);
  }
  auto* p = static_cast<unsigned char*>(data);
  for (uint64_t bit : chosen) p[bit / 8] = static_cast<unsigned char>(p[bit / 8] ^ (1u << (bit % 8)));
  return {chosen.begin(), chosen.end()};
}

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
