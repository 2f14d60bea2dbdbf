// The effects layer the front ends share (ncclfi/effects.h): the seeded draws, the words of an effect that
// changed nothing, and the report of the exception barrier.
#include "ncclfi/effects.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <set>

#include "ncclfi/point.h"

namespace ncclfi {
namespace {

constexpr std::string_view kNoEffectPrefix = "none: ";

// A draw of one purpose for one firing: the fault's id with the purpose appended is the key, so the
// jitter and the corruption of one firing, and the trigger's own `probability` draw (keyed by the bare
// id), are independent of each other.
uint64_t draw_bits(uint64_t seed, std::string_view fault_id, std::string_view purpose, uint64_t firing) {
  std::string key(fault_id);
  key += '/';
  key += purpose;
  return seeded_bits(seed, key, firing);
}

}  // namespace

double Delay::draw(uint64_t seed, std::string_view fault_id, uint64_t firing) const {
  if (jitter_ms <= 0) return ms;
  const double u = static_cast<double>(draw_bits(seed, fault_id, "jitter", firing) >> 11) * 0x1.0p-53;
  return ms + u * jitter_ms;  // jitter is added on top: 0..jitter_ms (docs/faults.md)
}

uint64_t corrupt_seed(std::optional<uint64_t> own_seed, uint64_t fault_seed, std::string_view fault_id,
                      uint64_t firing) {
  return draw_bits(own_seed.value_or(fault_seed), fault_id, "corrupt", firing);
}

double corrupt_draw(uint64_t corrupt_seed) {
  return static_cast<double>(corrupt_seed >> 11) * 0x1.0p-53;
}

std::vector<uint64_t> flip_bits(void* data, size_t bytes, uint64_t nbits, uint64_t seed) {
  const uint64_t total_bits = static_cast<uint64_t>(bytes) * 8;
  nbits = std::min(nbits, total_bits);
  std::set<uint64_t> chosen;
  // The raw engine output only (no distribution): the same bits for the same seed with every library.
  std::mt19937_64 gen(seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
  if (nbits * 2 > total_bits) {
    // Dense: pick the bits to keep instead, so the loop below stays short.
    std::set<uint64_t> keep;
    while (keep.size() < total_bits - nbits) keep.insert(gen() % total_bits);
    for (uint64_t b = 0; b < total_bits; ++b) {
      if (!keep.contains(b)) chosen.insert(b);
    }
  } else {
    while (chosen.size() < nbits) chosen.insert(gen() % total_bits);
  }
  auto* p = static_cast<unsigned char*>(data);
  for (uint64_t bit : chosen) p[bit / 8] = static_cast<unsigned char>(p[bit / 8] ^ (1U << (bit % 8)));
  return {chosen.begin(), chosen.end()};
}

std::string no_effect::cannot_act_at(std::string_view kind, std::string_view point) {
  return std::string(kind) + " cannot act at " + std::string(point);
}

void mark_no_effect(nlohmann::json& extra, std::string_view why) {
  extra["effect"] = std::string(kNoEffectPrefix) + std::string(why);
}

bool is_no_effect(std::string_view effect) {
  // "none" alone counts too: the prefix without its reason.
  return effect.starts_with(kNoEffectPrefix.substr(0, 4));
}

void report_internal_error(const char* front_end, const char* where, const char* what) noexcept {
  // Our own failure must never change the job: say so, a few times, and carry on.
  static std::atomic<int> reported{0};
  if (reported.fetch_add(1) < 8)
    std::fprintf(stderr, "ncclfi %s: internal error in %s: %s\n", front_end, where, what);
}

}  // namespace ncclfi
