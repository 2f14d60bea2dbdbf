// Fault windows: a fault that injects for `duration_s`, heals, and injects again every `every_s`, `times`
// times (trigger fields; docs/faults.md). This is the one place that decides which window a moment falls
// in: the in-process front ends (point.cc), the harness's proc schedule (proc_faults.cc), the dry run and
// the drill report all ask it.
#pragma once

#include <cstdint>
#include <optional>

#include "ncclfi/plan.h"

namespace ncclfi {

// Where a moment falls among a fault's windows, `since_first_ns` after the first window opened.
struct WindowPosition {
  uint64_t index = 0;                // 0-based window the moment falls in (or after)
  bool open = false;                 // inside that window: the fault may fire
  bool finished = false;             // every window is over: the fault never fires again
  int64_t opens_ns = 0;              // that window's start, from the first window's start
  std::optional<int64_t> closes_ns;  // its end (heal); nullopt: it never closes
};

WindowPosition window_at(const Trigger& trigger, int64_t since_first_ns);

// The start and end of window `index` (0-based), from the first window's start; nullopt end: open for ever.
struct WindowSpan {
  int64_t opens_ns = 0;
  std::optional<int64_t> closes_ns;
};
WindowSpan window_span(const Trigger& trigger, uint64_t index);

}  // namespace ncclfi
