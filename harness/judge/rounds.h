// Timing verdicts by repeated rounds. A clean or degraded outcome rests on a timing comparison with
// fault-free baselines, and the baselines cannot see a load spike that hits only the faulted run: on a
// busy host one such spike made a healthy run look 3x slower than the baselines around it. So a run
// whose outcome timing decided is made again, in a round of its own (own baselines, own faulted run),
// and the outcome stands only when a majority of rounds agree on it: two of two, else two of three.
// A transient spike then costs a third round instead of a wrong verdict; a real effect (or a real
// absence of one) shows in every round.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "judge.h"

namespace ncclfi::harness {

inline constexpr size_t kMaxTimingRounds = 3;

// True when the judgement's outcome was decided by comparing timings with the baselines.
bool timing_decided(const Judgement& judgement);

struct RoundsDecision {
  bool need_another = false;  // run another round before deciding
  size_t chosen = 0;          // the round the run reports: of those a majority agrees with, the worst verdict
  // Set when more than one round ran: a `rounds` check for the chosen judgement (pass when a majority
  // agreed, unknown when none did).
  std::optional<CheckResult> check;
};

// What to do after the rounds judged so far (at least one).
RoundsDecision decide_rounds(const std::vector<Judgement>& rounds);

// Adds `check` to `judgement` and recomputes its verdict and reasons from its checks.
void add_check(Judgement& judgement, CheckResult check);

}  // namespace ncclfi::harness
