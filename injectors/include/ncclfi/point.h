// Fault points and the per-call firing decision.
//
// A front end declares one FaultPoint per site (static storage) and calls check() on every call.
// The hot path, when nothing in the process is armed, is one relaxed atomic load and a branch
// (gate_open()). When faults are armed, check() matches the call against each fault's target and
// trigger without locks; libfiu is consulted only when a fault is about to fire (is the point still
// enabled?), or on every matching call for faults under runtime control (armed/disarmed by
// `ncclfi arm|disarm` through libfiu's remote-control FIFO). docs/decisions.md says why.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ncclfi/plan.h"

namespace ncclfi {

// What a call looks like to a fault's target. Unknown fields stay at their defaults (match anything).
struct CallSite {
  int rank = -1;
  int world_size = -1;
  int comm = -1;             // communicator creation index (api layer)
  const char* op = nullptr;  // "allreduce", "isend", ...
  int peer = -1;
  Direction direction = Direction::kAny;
  uint64_t bytes = 0;
  const char* device = nullptr;  // verbs: the HCA's name ("mlx5_0"), when known
  int port = -1;                 // verbs: the port (1-based) of the QP or of the query, when known
};

class ArmedFault;
class EventLog;

// The global "anything armed in this process" flag.
inline std::atomic<bool> g_any_armed{false};
inline bool gate_open() {
  return g_any_armed.load(std::memory_order_relaxed);
}

class FaultPoint {
 public:
  // `name` must have static storage (a string literal).
  explicit FaultPoint(const char* name);
  const char* name() const { return name_; }

  // The fault that fires on this call, or nullptr. Thread-safe; lock-free unless a fault fires or a
  // fault is under runtime control. The returned pointer lives as long as the process's Injector.
  const ArmedFault* check(const CallSite& site) {
    if (!gate_open()) return nullptr;
    return check_slow(site);
  }

 private:
  friend class Injector;
  const ArmedFault* check_slow(const CallSite& site);
  const char* name_;
  // Faults attached to this point, published once by Injector::install (then immutable).
  std::atomic<const std::vector<ArmedFault*>*> faults_{nullptr};
};

// One fault as installed in a process: the parsed Fault plus its lock-free trigger state.
class ArmedFault {
 public:
  ArmedFault(Fault fault, uint64_t plan_seed, bool runtime_control);
  const Fault& fault() const { return fault_; }
  const std::string& control_point() const { return control_point_; }  // "ncclfi/fault/<id>"
  // The seed of this fault's draws: the trigger's seed, else the plan's.
  uint64_t seed() const { return seed_; }

  // The trigger decision for one matching call (the target already matched). Returns the 1-based index
  // of this firing, or 0 when it does not fire. `point_name` is checked against libfiu before firing.
  uint64_t decide(const char* point_name);
  uint64_t matching_calls() const { return calls_.load(std::memory_order_relaxed); }
  uint64_t firings() const { return fired_.load(std::memory_order_relaxed); }
  // The 1-based firing index of the most recent decide() on this thread (for event records).
  static uint64_t last_firing_on_this_thread();
  static uint64_t last_call_on_this_thread();
  // The 1-based window of the most recent firing on this thread (0: the fault has no windows).
  static uint64_t last_window_on_this_thread();

  // Windowed faults (trigger.duration_s / every_s / times): whether the fault may fire now (false once
  // its window closed: an effect that outlives a call, such as a throttled connection, ends then).
  // Faults without windows are always open.
  bool window_open_now() const;
  // Where this fault's `heal` events go (each window that closed after firing writes one, stamped with
  // the moment it closed, at the next matching call after that). Set once by the Injector.
  void set_heal_log(const EventLog* log, int rank, int attempt) {
    heal_log_ = log;
    rank_ = rank;
    attempt_ = attempt;
  }
  // Writes the heal events of windows that closed since the last call (a cheap no-op without windows).
  void record_heals(int rank);

 private:
  uint64_t decide_in_window(const char* point_name);
  Fault fault_;
  uint64_t seed_;
  bool runtime_control_;
  std::string control_point_;
  // Written by every matching call on every thread: on a cache line of its own, so the writes do not
  // evict the read-mostly fields above from the other threads' caches (false sharing).
  alignas(64) std::atomic<uint64_t> calls_{0};
  alignas(64) std::atomic<uint64_t> fired_{0};
  std::atomic<int64_t> first_call_mono_ns_{0};
  // Windows: when the first one opened (the first eligible call), the current window and its firings
  // packed as (1-based window << 32 | firings in it), and the windows whose heal was recorded.
  std::atomic<int64_t> first_window_mono_ns_{0};
  std::atomic<uint64_t> window_state_{0};
  std::atomic<uint64_t> healed_windows_{0};
  const EventLog* heal_log_ = nullptr;
  int rank_ = -1;
  int attempt_ = 0;
};

// True when `site` is inside `target` (rank, ops, peer, direction, min_bytes, comm).
bool target_matches(const Target& target, const CallSite& site);

// The deterministic per-call draw behind `probability`: a value in [0,1) from (seed, fault id, call).
double seeded_uniform(uint64_t seed, std::string_view fault_id, uint64_t call_index);
// The 64 bits that draw is made of; `key` is a fault id, or a fault id with a suffix naming what the draw
// is for ("<id>/jitter"), so draws for different purposes of one firing are independent.
uint64_t seeded_bits(uint64_t seed, std::string_view key, uint64_t index);

}  // namespace ncclfi
