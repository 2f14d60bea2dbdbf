// The frame of a run's timeline in report.html (internal to html_timeline.cc): the span drawn, the zero
// of its axis, the lanes, where a moment and a rank are drawn, and labels that stay inside the picture.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "history.h"

namespace ncclfi::harness::timeline {

inline constexpr int kWidth = 960;  // the viewBox's width; the page scales it to its own width
inline constexpr int kRight = 10;
inline constexpr int kTop = 28;     // room for attempt and fault labels
inline constexpr int kJobRow = 22;  // the job's own row (harness actions, control commands)
inline constexpr int kLane = 64;    // one rank's lane
inline constexpr int kAxis = 30;    // the time axis below the lanes

std::string fixed(double v, int decimals);

struct Frame {
  int left = 90;           // room for the lane labels (the longest host name widens it)
  int64_t t0 = 0, t1 = 0;  // the span drawn: from the faulted attempt's launch to the run's end
  // The axis's zero: the first injection (else the start of the span), as detection times are counted.
  int64_t zero = 0;
  bool from_injection = false;
  int max_rank = 0;  // the last rank with a lane
  int lanes_top = kTop + kJobRow;
  int height = 0;

  double x_of(int64_t t) const;
  // Whether a moment falls in the span: what lies before it (a baseline, an attempt before the faulted
  // one) is not drawn, so nothing lands left of the lanes' labels.
  bool shows(int64_t t) const { return t >= t0 && t <= t1; }
  // A rank outside the lanes (out of contract) is drawn on the job's row.
  int lane_top(int rank) const { return rank < 0 || rank > max_rank ? kTop : lanes_top + rank * kLane; }
  int lane_bottom(int rank) const {
    return rank < 0 || rank > max_rank ? kTop + kJobRow : lanes_top + (rank + 1) * kLane;
  }
  int lanes_bottom() const { return lane_bottom(max_rank); }
  std::string rel(int64_t t) const;  // "+1.250 s" from the zero
  double seconds(int64_t t) const { return static_cast<double>(t - zero) / 1e9; }
};

// The frame of a run's history, or nullopt when nothing is timed.
std::optional<Frame> make_frame(const History& history);

// A <text> at (x, y) that stays inside the picture: anchored at its end when it would run past the
// right edge, moved right of the lane labels when it would start among them. Widths are estimated
// (0.6 em a character), generously for the fonts a browser may pick.
std::string svg_label(const Frame& f, double x, double y, const std::string& text, int font_size,
                      const std::string& cls, const std::string& fill);

// The time axis: seconds from the zero, at a round step.
std::string time_axis(const Frame& f);

}  // namespace ncclfi::harness::timeline
