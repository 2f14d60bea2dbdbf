// Where the attempt loop and its parts read the time, and the loop's pace. Every duration an attempt
// measures (the deadline, the grace period, proc-fault timers, the RAS probe's moment, progress ticks,
// the agents' start and end) is on the monotonic clock: a wall clock stepped by NTP or by hand must not
// end an attempt early or keep it past its deadline. The wall clock only stamps what a person reads.
#pragma once

#include <cstdint>

#include "ncclfi/event_log.h"

namespace ncclfi::cli {

// The default reads the system's clocks; tests give one whose wall clock jumps, to prove that no
// deadline follows it.
class AttemptClock {
 public:
  virtual ~AttemptClock() = default;
  virtual EventTime now() const { return EventTime::now(); }
  static const AttemptClock& system();
};

inline constexpr int64_t kAttemptPollNs = 5'000'000;  // 5 ms: the resolution of output-line timestamps

int64_t seconds_to_ns(double seconds);
void sleep_ns(int64_t ns);

}  // namespace ncclfi::cli
