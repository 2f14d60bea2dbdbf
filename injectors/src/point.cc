// The per-call firing decision. Lock-free until a fault is about to fire; see point.h.
#include "ncclfi/point.h"

#include <algorithm>
#include <cstring>

#include <fiu.h>

#include "ncclfi/event_log.h"
#include "ncclfi/fault_window.h"
#include "splitmix.h"

namespace ncclfi {
namespace {
thread_local uint64_t t_last_firing = 0;
thread_local uint64_t t_last_call = 0;
thread_local uint64_t t_last_window = 0;
constexpr uint64_t kWindowShift = 32;
}  // namespace

bool target_matches(const Target& target, const CallSite& site) {
  switch (target.rank_select) {
    case Target::RankSelect::kAll:
      break;
    case Target::RankSelect::kList:
      if (std::find(target.ranks.begin(), target.ranks.end(), site.rank) == target.ranks.end()) return false;
      break;
    case Target::RankSelect::kRandom:  // the Injector resolves these to lists; this is the slow fallback
      if (!target.matches_rank(site.rank, site.world_size)) return false;
      break;
  }
  if (target.direction != Direction::kAny && site.direction != target.direction) return false;
  if (target.peer && site.peer != *target.peer) return false;
  if (site.bytes < target.min_bytes) return false;
  if (target.comm && site.comm != *target.comm) return false;
  // A call whose HCA or port is not known (a QP never moved to INIT with IBV_QP_PORT) is not on it.
  if (target.device && (site.device == nullptr || *target.device != site.device)) return false;
  if (target.port && site.port != *target.port) return false;
  return true;
}

uint64_t seeded_bits(uint64_t seed, std::string_view key, uint64_t index) {
  // FNV-1a over the key, mixed with the seed and the index: a pure function of its inputs, so the same
  // seed gives the same schedule whatever the threads and timing.
  uint64_t h = 1469598103934665603ULL;
  for (char c : key) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
  return splitmix64_mix(seed ^ splitmix64_mix(h ^ splitmix64_mix(index)));
}

double seeded_uniform(uint64_t seed, std::string_view fault_id, uint64_t call_index) {
  return static_cast<double>(seeded_bits(seed, fault_id, call_index) >> 11) * 0x1.0p-53;
}

ArmedFault::ArmedFault(Fault fault, uint64_t plan_seed, bool runtime_control)
    : fault_(std::move(fault)),
      seed_(fault_.trigger.seed != 0 ? fault_.trigger.seed : plan_seed),
      runtime_control_(runtime_control),
      control_point_("ncclfi/fault/" + fault_.id) {}

uint64_t ArmedFault::decide(const char* point_name) {
  const Trigger& trig = fault_.trigger;
  t_last_firing = 0;
  // A fault under runtime control counts calls only while armed (its libfiu control point enabled).
  if (runtime_control_ && fiu_fail(control_point_.c_str()) == 0) return 0;
  const uint64_t call = calls_.fetch_add(1, std::memory_order_relaxed) + 1;
  t_last_call = call;
  if (trig.after_ms != 0) {
    int64_t now = Clock::mono_ns();
    int64_t first = first_call_mono_ns_.load(std::memory_order_relaxed);
    if (first == 0 && first_call_mono_ns_.compare_exchange_strong(first, now)) first = now;
    if (now - first < static_cast<int64_t>(trig.after_ms) * 1000000) return 0;
  }
  if (call < trig.after_calls) return 0;
  if (trig.windowed()) return decide_in_window(point_name);
  if (trig.probability >= 1.0 && trig.after_ms == 0) {
    // Deterministic trigger: the call index alone decides, so under any number of threads exactly
    // calls after_calls .. after_calls+count-1 fire (a shared "fired" counter could let call N+1 win
    // the race against call N). A firing that libfiu vetoes is not handed to a later call.
    const uint64_t firing = call - trig.after_calls + 1;
    if (trig.count != 0 && firing > trig.count) return 0;
    if (fiu_fail(point_name) == 0) return 0;
    fired_.fetch_add(1, std::memory_order_relaxed);
    t_last_firing = firing;
    return firing;
  }
  if (trig.probability < 1.0 && seeded_uniform(seed_, fault_.id, call) >= trig.probability) return 0;
  uint64_t fired = fired_.load(std::memory_order_relaxed);
  if (trig.count != 0 && fired >= trig.count) return 0;
  // About to fire: libfiu has the last word (a point disabled at run time does not fire).
  if (fiu_fail(point_name) == 0) return 0;
  if (trig.count == 0) {
    t_last_firing = fired_.fetch_add(1, std::memory_order_relaxed) + 1;
    return t_last_firing;
  }
  while (fired < trig.count) {
    if (fired_.compare_exchange_weak(fired, fired + 1, std::memory_order_relaxed)) {
      t_last_firing = fired + 1;
      return t_last_firing;
    }
  }
  return 0;
}

uint64_t ArmedFault::decide_in_window(const char* point_name) {
  const Trigger& trig = fault_.trigger;
  t_last_window = 0;
  const int64_t now = Clock::mono_ns();
  int64_t first = first_window_mono_ns_.load(std::memory_order_relaxed);
  if (first == 0 && first_window_mono_ns_.compare_exchange_strong(first, now)) first = now;
  const WindowPosition pos = window_at(trig, now - first);
  if (!pos.open) return 0;
  if (trig.probability < 1.0 && seeded_uniform(seed_, fault_.id, t_last_call) >= trig.probability) return 0;
  const uint64_t window = pos.index + 1;
  uint64_t state = window_state_.load(std::memory_order_relaxed);
  if ((state >> kWindowShift) == window && trig.count != 0 && (state & 0xffffffffULL) >= trig.count) return 0;
  if (fiu_fail(point_name) == 0) return 0;
  // `count` firings per window: the counter restarts when a new window is seen.
  for (;;) {
    const uint64_t in_window = (state >> kWindowShift) == window ? (state & 0xffffffffULL) : 0;
    if (trig.count != 0 && in_window >= trig.count) return 0;
    // Saturates instead of carrying into the window bits (an unlimited count may fire 2^32 times).
    const uint64_t next = std::min<uint64_t>(in_window + 1, 0xffffffffULL);
    if (window_state_.compare_exchange_weak(state, (window << kWindowShift) | next,
                                            std::memory_order_relaxed))
      break;
  }
  t_last_window = window;
  t_last_firing = fired_.fetch_add(1, std::memory_order_relaxed) + 1;
  return t_last_firing;
}

bool ArmedFault::window_open_now() const {
  if (!fault_.trigger.windowed()) return true;
  const int64_t first = first_window_mono_ns_.load(std::memory_order_relaxed);
  if (first == 0) return true;  // no window opened yet: nothing to heal
  return window_at(fault_.trigger, Clock::mono_ns() - first).open;
}

void ArmedFault::record_heals(int rank) {
  const Trigger& trig = fault_.trigger;
  if (!trig.windowed() || heal_log_ == nullptr) return;
  const uint64_t fired_window = window_state_.load(std::memory_order_relaxed) >> kWindowShift;
  uint64_t healed = healed_windows_.load(std::memory_order_relaxed);
  if (fired_window == 0 || healed >= fired_window) return;
  const int64_t first = first_window_mono_ns_.load(std::memory_order_relaxed);
  const WindowSpan span = window_span(trig, fired_window - 1);
  const EventTime now = EventTime::now();
  if (!span.closes_ns || now.mono_ns - first < *span.closes_ns) return;
  if (!healed_windows_.compare_exchange_strong(healed, fired_window)) return;  // another thread wrote it
  // Stamped when the window closed, not when a call noticed it: the timeline shows the real window.
  const int64_t closed_mono = first + *span.closes_ns;
  const EventTime at{now.wall_ns - (now.mono_ns - closed_mono), closed_mono};
  heal_log_->write_for_rank(rank >= 0 ? rank : rank_, ev::kHeal,
                            {{"fault_id", fault_.id},
                             {"kind", fault_.kind},
                             {"layer", to_string(fault_.layer)},
                             {"window", fired_window},
                             {"attempt", attempt_}},
                            at);
}

uint64_t ArmedFault::last_window_on_this_thread() {
  return t_last_window;
}

uint64_t ArmedFault::last_firing_on_this_thread() {
  return t_last_firing;
}
uint64_t ArmedFault::last_call_on_this_thread() {
  return t_last_call;
}

FaultPoint::FaultPoint(const char* name) : name_(name) {}

const ArmedFault* FaultPoint::check_slow(const CallSite& site) {
  const std::vector<ArmedFault*>* faults = faults_.load(std::memory_order_acquire);
  if (faults == nullptr) return nullptr;
  for (ArmedFault* fault : *faults) {
    if (!target_matches(fault->fault().target, site)) continue;
    fault->record_heals(site.rank);
    if (fault->decide(name_) != 0) return fault;
  }
  return nullptr;
}

}  // namespace ncclfi
