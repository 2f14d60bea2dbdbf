// Sweep rendering: the matrix of outcomes and detection times over the product of `--set` values,
// and the timeout recommendation (smallest timeout that never fired on a survivable stall, with its
// detection time on a real hang). Pure functions; the runner builds the points and prints.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge.h"
#include "reports.h"

namespace ncclfi::harness {

// One run of the sweep: the values set (one per axis, in axis order) and what was judged.
struct SweepPoint {
  std::vector<std::string> values;  // same order as SweepAxes::pointers
  Outcome outcome = Outcome::kClean;
  std::optional<double> detection_s;
  std::vector<std::string> mechanisms;
  RunStatus status = RunStatus::kUnknown;  // run_status() of the point's run: errors and skips included
};

struct SweepAxes {
  std::vector<std::string> pointers;             // JSON pointers given to --set
  std::vector<std::vector<std::string>> values;  // per axis, the values in the order given
};

// With one axis: a list (value | outcome | detection | verdict). With two or more: rows = first axis,
// columns = the combinations of the others; each cell "outcome detection_s". Missing points show "-".
std::string render_sweep_matrix(const SweepAxes& axes, const std::vector<SweepPoint>& points);
nlohmann::json sweep_json(const SweepAxes& axes, const std::vector<SweepPoint>& points);

// A timeout sweep: each trial ran with a timeout value against either a survivable stall (the job
// would finish if nobody timed out) or a real hang.
struct TimeoutTrial {
  double timeout_s = 0;
  bool real_hang = false;  // false: survivable stall
  Outcome outcome = Outcome::kClean;
  std::optional<double> detection_s;
  // A timeout fired: the outcome is detected/recovered, or a mechanism other than harness_deadline
  // detected something. For a stall this is a false positive.
  bool fired = false;
};
// Fills `fired` from a judged point.
TimeoutTrial make_timeout_trial(double timeout_s, bool real_hang, const Judgement& judgement);

struct TimeoutRecommendation {
  std::optional<double> timeout_s;         // smallest timeout with no firing on any stall trial,
                                           // and no firing at any larger timeout either
  std::optional<double> hang_detection_s;  // detection time on a real hang at that timeout (the
                                           // largest if several trials)
  bool hang_detected = false;              // a hang trial at that timeout was detected at all
  std::string reason;                      // one readable sentence with the evidence
};
TimeoutRecommendation recommend_timeout(const std::vector<TimeoutTrial>& trials);

}  // namespace ncclfi::harness
