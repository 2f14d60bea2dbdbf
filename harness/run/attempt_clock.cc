#include "attempt_clock.h"

#include <time.h>

namespace ncclfi::cli {

const AttemptClock& AttemptClock::system() {
  static const AttemptClock clock{};
  return clock;
}

int64_t seconds_to_ns(double seconds) {
  return static_cast<int64_t>(seconds * 1e9);
}

void sleep_ns(int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  nanosleep(&ts, nullptr);
}

}  // namespace ncclfi::cli
