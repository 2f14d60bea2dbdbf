// SplitMix64: a tiny, fast, well-mixed generator. Used where a schedule must be the same for the same
// seed on every host and library version (std::mt19937 distributions are not portable across libs).
#pragma once

#include <cstdint>

namespace ncclfi {

inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return splitmix64_mix(state_);
  }

 private:
  uint64_t state_;
};

}  // namespace ncclfi
