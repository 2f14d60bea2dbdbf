// The timeout recommendation of a sweep (sweep.h).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "mechanisms.h"
#include "sweep.h"
#include "text_format.h"

namespace ncclfi::harness {

TimeoutTrial make_timeout_trial(double timeout_s, bool real_hang, const Judgement& judgement) {
  TimeoutTrial t;
  t.timeout_s = timeout_s;
  t.real_hang = real_hang;
  t.outcome = judgement.outcome;
  t.detection_s = judgement.detection_s;
  const bool stopped_by_detection =
      judgement.outcome == Outcome::kDetected || judgement.outcome == Outcome::kRecovered;
  const bool some_mechanism =
      std::any_of(judgement.mechanisms.begin(), judgement.mechanisms.end(),
                  [](const std::string& m) { return m != kHarnessDeadlineMechanism.name; });
  t.fired = stopped_by_detection || some_mechanism;
  if (!t.fired) t.detection_s.reset();
  return t;
}

TimeoutRecommendation recommend_timeout(const std::vector<TimeoutTrial>& trials) {
  TimeoutRecommendation rec;
  std::set<double> timeouts;
  std::map<double, bool> stall_fired;  // timeout -> some stall trial fired
  for (const auto& t : trials) {
    timeouts.insert(t.timeout_s);
    if (!t.real_hang) stall_fired[t.timeout_s] = stall_fired[t.timeout_s] || t.fired;
  }
  if (stall_fired.empty()) {
    rec.reason = "no survivable-stall trial in the sweep: cannot tell which timeouts fire falsely";
    return rec;
  }
  // Smallest timeout whose stall trials never fired, with no firing at any larger timeout either
  // (a larger timeout that fired means the stall is not reliably survived there: not monotone, so
  // the smaller one is not trustworthy).
  std::optional<double> best;
  for (auto it = stall_fired.rbegin(); it != stall_fired.rend(); ++it) {
    if (it->second) break;
    best = it->first;
  }
  char buf[256];
  if (!best) {
    std::snprintf(buf, sizeof buf,
                  "every timeout tried (up to %gs) fired on a stall the job survives: try larger values",
                  stall_fired.rbegin()->first);
    rec.reason = buf;
    return rec;
  }
  rec.timeout_s = best;
  for (const auto& t : trials) {
    if (!t.real_hang || t.timeout_s != *best) continue;
    if (t.fired) {
      rec.hang_detected = true;
      if (t.detection_s) rec.hang_detection_s = std::max(rec.hang_detection_s.value_or(0.0), *t.detection_s);
    }
  }
  bool any_hang_trial = std::any_of(trials.begin(), trials.end(), [&](const TimeoutTrial& t) {
    return t.real_hang && t.timeout_s == *best;
  });
  std::snprintf(buf, sizeof buf,
                "recommended timeout %gs: the smallest that never fired on a survivable stall", *best);
  rec.reason = buf;
  if (!any_hang_trial) {
    rec.reason += "; no real-hang trial ran at that timeout, so its detection time is unmeasured";
  } else if (!rec.hang_detected) {
    rec.reason += "; but a real hang at that timeout was NOT detected (only the harness deadline ended it)";
  } else {
    rec.reason += "; it detects a real hang in " + format_seconds(rec.hang_detection_s);
  }
  return rec;
}

}  // namespace ncclfi::harness
