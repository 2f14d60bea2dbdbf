// The timeout recommendation of a sweep (`ncclfi sweep` over a timeout): the smallest timeout that never
// fired on a survivable stall, with its detection time on a real hang. Pure functions; the runner builds
// the trials and report/sweep_report.h renders the matrix.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "judge.h"

namespace ncclfi::harness {

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
