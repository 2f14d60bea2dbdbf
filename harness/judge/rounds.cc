#include "rounds.h"

#include <map>

namespace ncclfi::harness {

bool timing_decided(const Judgement& j) {
  return (j.outcome == Outcome::kClean || j.outcome == Outcome::kDegraded) && !j.timing.empty();
}

RoundsDecision decide_rounds(const std::vector<Judgement>& rounds) {
  RoundsDecision d;
  if (rounds.empty()) return d;
  if (rounds.size() == 1) {
    d.need_another = timing_decided(rounds.front());
    return d;
  }
  std::map<Outcome, size_t> votes;
  std::string list;
  for (const auto& r : rounds) {
    ++votes[r.outcome];
    list += (list.empty() ? "" : ", ") + std::string(to_string(r.outcome));
  }
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (votes[rounds[i].outcome] * 2 > rounds.size()) {
      // Of the rounds that agree, the one with the worst verdict is reported: agreeing on the outcome
      // must not hide another check that failed in one of them (no injection, wrong data, ...).
      d.chosen = i;
      for (size_t k = i + 1; k < rounds.size(); ++k) {
        if (rounds[k].outcome == rounds[i].outcome && rounds[k].verdict > rounds[d.chosen].verdict)
          d.chosen = k;
      }
      d.check = CheckResult{"rounds", Answer::kPass,
                            std::to_string(votes[rounds[i].outcome]) + " of " +
                                std::to_string(rounds.size()) + " rounds agree (" + list + "); round " +
                                std::to_string(d.chosen + 1) + "'s figures are reported"};
      return d;
    }
  }
  if (rounds.size() < kMaxTimingRounds) {
    d.need_another = true;
    return d;
  }
  d.check = CheckResult{"rounds", Answer::kUnknown,
                        "no majority of " + std::to_string(rounds.size()) + " rounds agrees (" + list +
                            "): the host's load changed too much for timing to decide"};
  return d;
}

void add_check(Judgement& judgement, CheckResult check) {
  judgement.checks.push_back(std::move(check));
  settle_verdict(judgement);
}

}  // namespace ncclfi::harness
