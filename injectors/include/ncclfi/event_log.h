// The event log: JSON lines appended to $NCCLFI_EVENTS by every rank process and the harness.
// Each line is written with a single write(2) on an O_APPEND descriptor, so lines from threads and
// processes never interleave. Every line carries ts_ns (wall clock), mono_ns (CLOCK_MONOTONIC), rank,
// pid, host and source, plus the event's own fields.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ncclfi {

// Event names shared by the workloads, the injectors and the harness (their fields: docs/faults.md,
// Events).
namespace ev {
inline constexpr const char* kStart = "start";     // workload started: world_size, args
inline constexpr const char* kInject = "inject";   // a fault fired: fault_id, kind, layer, point, call, ...
inline constexpr const char* kOp = "op";           // op milestone: seq, op, bytes, dur_us
inline constexpr const char* kOpTime = "op_time";  // preload op timing: comm, seq, op, bytes, dur_us
inline constexpr const char* kOpTrace = "op_enqueue";  // preload op trace: comm, seq, op, bytes
// the NCCL_* variables libnccl looked up: nccl_version, nccl_lib, read {name: value or null}
inline constexpr const char* kNcclEnvRead = "nccl_env_read";
inline constexpr const char* kWatchdogFired = "watchdog_fired";    // op, seq, waited_ms, reason
inline constexpr const char* kAbort = "abort";                     // reason
inline constexpr const char* kNcclError = "nccl_error";            // code, where
inline constexpr const char* kAsyncError = "async_error";          // code
inline constexpr const char* kResultMismatch = "result_mismatch";  // op, seq, wrong, checked
inline constexpr const char* kNanDetected = "nan_detected";        // step, value
inline constexpr const char* kCheckpoint = "checkpoint";           // iter, path
inline constexpr const char* kResume = "resume";                   // iter, path
// ncclfi-workload --recover shrink: a step failed and the rank recovers in place (error, step); the
// communicator was shrunk to the survivors (resume_step, survivors, excluded, revoke, ...); the first
// step after the recovery completed (step).
inline constexpr const char* kRecovering = "recovering";
inline constexpr const char* kRecovered = "recovered";
inline constexpr const char* kResumed = "resumed";
inline constexpr const char* kDone = "done";  // iters, seconds, verified
inline constexpr const char* kExit = "exit";  // code
inline constexpr const char* kHeal = "heal";  // a fault window closed: fault_id, kind, layer, window, attempt
inline constexpr const char* kRefused =
    "injection_refused";                            // this host is outside the allow-list: host, allowed
inline constexpr const char* kControl = "control";  // ncclfi arm/disarm: action, fault_id, acknowledged, ...
// the harness's teardown signalled a rank (not a fault: a proc kill fault is an `inject`): pid, signal, why
inline constexpr const char* kKill = "kill";
// lost: lines this writer could not write (disk full, I/O error) before this one; the harness judges
// a run whose records are incomplete unknown.
inline constexpr const char* kEventsLost = "events_lost";
}  // namespace ev

struct Clock {
  static int64_t wall_ns();
  static int64_t mono_ns();
};

// When something happened, on both clocks: an event written after the fact carries it (the harness
// stamps a proc fault just before its kill(2), then logs it once the signal went out).
struct EventTime {
  int64_t wall_ns = 0;
  int64_t mono_ns = 0;
  static EventTime now() { return {Clock::wall_ns(), Clock::mono_ns()}; }
};

// This host's name as every event line records it ("host"); "unknown" when it cannot be read.
std::string host_name();

class EventLog {
 public:
  EventLog() = default;  // disabled: write() does nothing
  // Opens (creating) `path` for appending. An empty path gives a disabled log.
  explicit EventLog(const std::string& path, std::string source, int rank = -1);
  EventLog(EventLog&&) noexcept;
  EventLog& operator=(EventLog&&) noexcept;
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  ~EventLog();

  bool enabled() const { return fd_ >= 0; }
  void set_rank(int rank) { rank_ = rank; }
  int rank() const { return rank_; }
  // Appends {"ts_ns","mono_ns","rank","pid","host","source","event", ...fields}. Thread-safe,
  // async-signal-unsafe. Returns false if the line could not be written whole; such lines are counted
  // (lost()) and the next line that can be written is preceded by an `events_lost` line saying how
  // many went missing, so the harness never mistakes a log with holes for a whole one.
  bool write(const std::string& event, const nlohmann::json& fields = nlohmann::json::object()) const;
  // Same, with an explicit rank (the preload knows each communicator's rank).
  bool write_for_rank(int rank, const std::string& event, const nlohmann::json& fields) const;
  // Same, stamped with `at` instead of the time of writing.
  bool write_for_rank(int rank, const std::string& event, const nlohmann::json& fields, EventTime at) const;
  // Lines that could not be written so far.
  uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }

 private:
  bool write_line(int rank, const std::string& event, const nlohmann::json& fields, EventTime at) const;

  int fd_ = -1;
  mutable std::atomic<uint64_t> lost_{0};
  mutable std::atomic<uint64_t> unreported_{0};  // lost lines no events_lost line has named yet
  std::string source_;
  std::string host_;
  int rank_ = -1;
};

}  // namespace ncclfi
