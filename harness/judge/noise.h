// Timing against noise: is a finished run slower than its fault-free baseline by more than the
// baseline's own variation? One step sample per op/step event seq (the slowest rank's duration,
// warm-up steps left out). Two statistics are compared, each with its noise floor:
//  - the median step: a fault that slows every step (a delay, a throttled link);
//  - the mean step (total step time): a fault that slows a few steps a lot (a stall).
// The noise floor of a statistic is the larger of
//  - its sampling noise: the half-width of the 95% bootstrap interval of the statistic over the
//    pooled baseline steps, widened for the run's own sample (sqrt(1 + n_baseline / n_run));
//  - the spread between baseline runs (when two or more ran): the largest relative difference
//    of the statistic between two of them (a busy host shifts whole runs, not single steps).
// With too few step samples the runs' total times are compared instead; the noise is then known
// only from two or more baseline runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "history.h"

namespace ncclfi::harness {

// Fewer step samples than this in the run or a baseline: compare total times instead.
inline constexpr size_t kMinStepSamples = 10;

struct TimingComparison {
  std::string statistic;        // "median step", "mean step" or "total time"
  double run_s = 0;             // the statistic on the run
  double baseline_s = 0;        // and on the baseline (pooled)
  double effect = 0;            // run / baseline - 1 (0.31 = 31% slower)
  std::optional<double> noise;  // relative noise floor; unset: not enough samples to estimate it
  // The larger part of the noise floor that more samples cannot narrow: how far the baseline runs
  // differ among themselves (a host whose load drifts). Unset with fewer than two baseline runs.
  std::optional<double> between_runs;
  size_t run_samples = 0, baseline_samples = 0;

  // Slower than both the margin and the noise floor (without a noise estimate: than the margin):
  // degraded.
  bool slower_beyond(double margin) const { return effect > margin && (!noise || effect > *noise); }
  // Slower than the margin, but within the noise: clean as far as the judge can see, yet a
  // `degraded` expectation cannot be told apart from noise.
  bool hidden_by_noise(double margin) const { return effect > margin && noise && effect <= *noise; }
  // The noise floor is wider than the margin and the run is within it: a slow-down of the margin's size
  // could hide in the noise, so the evidence supports neither clean nor degraded.
  bool undecided(double margin) const { return noise && *noise > margin && effect <= *noise; }
  // What would narrow the noise under `margin`: "each run needs about 7x its steps" when sampling noise
  // dominates, or "a quieter host" when the baseline runs themselves differ by more than the margin.
  std::string how_to_decide(double margin) const;
  // "median step 12.0 ms vs baseline 2.9 ms: +310%, noise ±12% (60 vs 120 steps)"
  std::string text() const;
};

// The step durations (seconds) of `attempt`: per seq the longest duration any rank reported
// (op/step events with dur_us, dur_ms or dur_s; events marked warmup are left out). Events without
// a seq count one sample each.
std::vector<double> step_durations(const History& history, int attempt);

// Compares the run (its step samples and total time) with history.baselines (run before and after
// the faulted run, so that their spread covers a host whose load drifts). Empty when no
// baseline ran or nothing could be measured.
std::vector<TimingComparison> compare_with_baseline(const std::vector<double>& run_steps,
                                                    std::optional<double> run_total_s,
                                                    const std::vector<BaselineRun>& baselines);

std::optional<double> median(std::vector<double> values);  // nullopt for none

nlohmann::json to_json(const TimingComparison& c);
TimingComparison timing_comparison_from_json(const nlohmann::json& doc);

}  // namespace ncclfi::harness
