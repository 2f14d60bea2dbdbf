// Fault windows (fault_window.h): pure arithmetic on the trigger's duration_s, every_s and times.
#include "ncclfi/fault_window.h"

namespace ncclfi {
namespace {
int64_t to_ns(double seconds) {
  return static_cast<int64_t>(seconds * 1e9);
}
}  // namespace

WindowSpan window_span(const Trigger& trigger, uint64_t index) {
  WindowSpan span;
  const int64_t every = to_ns(trigger.every_s);
  span.opens_ns = static_cast<int64_t>(index) * every;
  if (trigger.duration_s) {
    span.closes_ns = span.opens_ns + to_ns(*trigger.duration_s);
  } else if (trigger.times > 1 && index + 1 < trigger.times) {
    span.closes_ns = span.opens_ns + every;  // without a duration a window lasts until the next one
  }
  return span;
}

WindowPosition window_at(const Trigger& trigger, int64_t since_first_ns) {
  WindowPosition pos;
  if (since_first_ns < 0) return pos;  // before the first window
  const int64_t every = to_ns(trigger.every_s);
  pos.index = every > 0 ? static_cast<uint64_t>(since_first_ns / every) : 0;
  if (pos.index >= trigger.times) {
    pos.index = trigger.times - 1;
    pos.finished = true;
  }
  const WindowSpan span = window_span(trigger, pos.index);
  pos.opens_ns = span.opens_ns;
  pos.closes_ns = span.closes_ns;
  pos.open = !pos.finished && (!span.closes_ns || since_first_ns < *span.closes_ns);
  if (!pos.open && pos.index + 1 >= trigger.times) pos.finished = true;
  return pos;
}

}  // namespace ncclfi
