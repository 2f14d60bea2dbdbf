// The timing comparison behind clean vs degraded (noise.h explains the statistics).
#include "noise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>

#include "ncclfi/event_log.h"

namespace ncclfi::harness {
namespace {

constexpr int kBootstrapRounds = 1000;
constexpr uint64_t kBootstrapSeed = 0x6e63636c6669;  // fixed: the same history gives the same verdict

std::optional<double> number_field(const nlohmann::json& fields, const char* key) {
  auto it = fields.find(key);
  if (it == fields.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

using Statistic = double (*)(const std::vector<double>&);
double median_of(const std::vector<double>& v) {
  return median(v).value_or(0);
}

// Half-width of the 95% bootstrap interval of stat(sample), relative to stat(sample).
double bootstrap_half_width(const std::vector<double>& sample, Statistic stat) {
  const double centre = stat(sample);
  if (sample.size() < 2 || centre <= 0) return 0;
  std::mt19937_64 rng(kBootstrapSeed);
  std::uniform_int_distribution<size_t> pick(0, sample.size() - 1);
  std::vector<double> estimates(kBootstrapRounds), resample(sample.size());
  for (auto& estimate : estimates) {
    for (auto& x : resample) x = sample[pick(rng)];
    estimate = stat(resample);
  }
  std::sort(estimates.begin(), estimates.end());
  const double lo = estimates[static_cast<size_t>(0.025 * kBootstrapRounds)];
  const double hi = estimates[static_cast<size_t>(0.975 * kBootstrapRounds) - 1];
  return (hi - lo) / 2 / centre;
}

// The largest relative difference of the statistic between two baseline runs (0 with one).
double between_runs_spread(const std::vector<double>& per_run) {
  double spread = 0;
  for (size_t i = 0; i < per_run.size(); ++i) {
    for (size_t j = 0; j < per_run.size(); ++j) {
      if (i != j && per_run[j] > 0) spread = std::max(spread, per_run[i] / per_run[j] - 1);
    }
  }
  return spread;
}

TimingComparison compare_steps(const char* name, Statistic stat, const std::vector<double>& run,
                               const std::vector<BaselineRun>& baselines) {
  std::vector<double> pooled;
  std::vector<double> per_run;
  for (const auto& b : baselines) {
    pooled.insert(pooled.end(), b.step_s.begin(), b.step_s.end());
    per_run.push_back(stat(b.step_s));
  }
  TimingComparison c;
  c.statistic = name;
  c.run_s = stat(run);
  c.baseline_s = stat(pooled);
  c.effect = c.baseline_s > 0 ? c.run_s / c.baseline_s - 1 : 0;
  c.run_samples = run.size();
  c.baseline_samples = pooled.size();
  const double sampling =
      bootstrap_half_width(pooled, stat) *
      std::sqrt(1.0 + static_cast<double>(pooled.size()) / static_cast<double>(run.size()));
  if (per_run.size() >= 2) c.between_runs = between_runs_spread(per_run);
  c.noise = std::max(sampling, c.between_runs.value_or(0));
  return c;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.0f%%", fraction * 100);
  return buf;
}

std::string duration(double seconds) {
  char buf[32];
  if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.2f ms", seconds * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  return buf;
}

}  // namespace

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
  double m = values[mid];
  if (values.size() % 2 == 0) {
    m = (m + *std::max_element(values.begin(), values.begin() + static_cast<long>(mid))) / 2;
  }
  return m;
}

std::optional<StepSample> step_sample(const HistoryEvent& e) {
  if (e.event != ev::kOp && e.event != "step") return std::nullopt;
  if (auto w = e.fields.find("warmup"); w != e.fields.end() && w->is_boolean() && w->get<bool>())
    return std::nullopt;
  StepSample sample;
  if (auto us = number_field(e.fields, "dur_us"))
    sample.seconds = *us / 1e6;
  else if (auto ms = number_field(e.fields, "dur_ms"))
    sample.seconds = *ms / 1e3;
  else if (auto s = number_field(e.fields, "dur_s"))
    sample.seconds = *s;
  else
    return std::nullopt;
  if (auto seq = e.fields.find("seq"); seq != e.fields.end() && seq->is_number_integer())
    sample.seq = seq->get<int64_t>();
  return sample;
}

std::vector<double> step_durations(const History& history, int attempt) {
  std::map<int64_t, double> by_seq;  // seq -> slowest rank's duration
  std::vector<double> unnumbered;
  auto add = [&](std::optional<int64_t> seq, double d) {
    if (!seq) {
      unnumbered.push_back(d);
      return;
    }
    double& slowest = by_seq[*seq];
    slowest = std::max(slowest, d);
  };
  for (const auto& e : history.events) {
    if (e.attempt != attempt) continue;
    if (const auto sample = step_sample(e)) add(sample->seq, sample->seconds);
  }
  // The events the history counted instead of holding left their durations (history.h).
  if (const auto it = history.folded_steps.find(attempt); it != history.folded_steps.end()) {
    const FoldedSteps& folded = it->second;
    for (size_t seq = 0; seq < folded.slowest_by_seq.size(); ++seq) {
      if (!std::isnan(folded.slowest_by_seq[seq])) add(static_cast<int64_t>(seq), folded.slowest_by_seq[seq]);
    }
    for (const auto& [seq, d] : folded.sparse_seqs) add(seq, d);
    unnumbered.insert(unnumbered.end(), folded.unnumbered.begin(), folded.unnumbered.end());
  }
  for (const auto& [seq, d] : by_seq) unnumbered.push_back(d);
  return unnumbered;
}

std::vector<TimingComparison> compare_with_baseline(const std::vector<double>& run_steps,
                                                    std::optional<double> run_total_s,
                                                    const std::vector<BaselineRun>& baselines) {
  if (baselines.empty()) return {};
  const bool enough_steps = run_steps.size() >= kMinStepSamples &&
                            std::all_of(baselines.begin(), baselines.end(), [](const BaselineRun& b) {
                              return b.step_s.size() >= kMinStepSamples;
                            });
  if (enough_steps) {
    return {compare_steps("median step", median_of, run_steps, baselines),
            compare_steps("mean step", mean, run_steps, baselines)};
  }
  std::vector<double> totals;
  for (const auto& b : baselines) {
    if (b.total_s && *b.total_s > 0) totals.push_back(*b.total_s);
  }
  if (!run_total_s || totals.empty()) return {};
  TimingComparison c;
  c.statistic = "total time";
  c.run_s = *run_total_s;
  c.baseline_s = mean(totals);
  c.effect = c.run_s / c.baseline_s - 1;
  c.run_samples = 1;
  c.baseline_samples = totals.size();
  if (totals.size() >= 2) c.noise = c.between_runs = between_runs_spread(totals);
  return {c};
}

std::string TimingComparison::how_to_decide(double margin) const {
  char buf[160];
  if (between_runs && *between_runs > margin) {
    std::snprintf(buf, sizeof buf,
                  "the baseline runs differ among themselves by %.0f%%, so more samples will not help: run "
                  "on a quieter host or raise degraded_margin",
                  *between_runs * 100);
    return buf;
  }
  if (statistic == "total time") {
    return "the runs are too short to time step by step: give the workload at least " +
           std::to_string(kMinStepSamples) + " timed steps";
  }
  // The sampling noise shrinks with the square root of the samples in the run and its baselines.
  const double ratio = noise ? *noise / margin : 1;
  std::snprintf(buf, sizeof buf,
                "the sampling noise shrinks with more steps: each run needs about %.0fx its %zu steps "
                "(longer runs, or more baseline_runs and iterations)",
                std::ceil(ratio * ratio), run_samples);
  return buf;
}

std::string TimingComparison::text() const {
  std::string s = statistic + " " + duration(run_s) + " vs baseline " + duration(baseline_s) + ": " +
                  percent(effect) + ", noise ";
  if (noise) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "\u00b1%.0f%%", *noise * 100);
    s += buf;
  } else {
    s += "unknown";
  }
  const char* unit = statistic == "total time" ? " run(s)" : " steps";
  s += " (" + std::to_string(run_samples) + " vs " + std::to_string(baseline_samples) + unit + ")";
  return s;
}

nlohmann::json to_json(const TimingComparison& c) {
  return {{"statistic", c.statistic},
          {"run_s", c.run_s},
          {"baseline_s", c.baseline_s},
          {"effect", c.effect},
          {"noise", c.noise ? nlohmann::json(*c.noise) : nlohmann::json()},
          {"between_runs", c.between_runs ? nlohmann::json(*c.between_runs) : nlohmann::json()},
          {"run_samples", c.run_samples},
          {"baseline_samples", c.baseline_samples}};
}

TimingComparison timing_comparison_from_json(const nlohmann::json& doc) {
  TimingComparison c;
  c.statistic = doc.value("statistic", std::string());
  c.run_s = doc.value("run_s", 0.0);
  c.baseline_s = doc.value("baseline_s", 0.0);
  c.effect = doc.value("effect", 0.0);
  if (auto it = doc.find("noise"); it != doc.end() && it->is_number()) c.noise = it->get<double>();
  if (auto it = doc.find("between_runs"); it != doc.end() && it->is_number())
    c.between_runs = it->get<double>();
  c.run_samples = doc.value("run_samples", size_t{0});
  c.baseline_samples = doc.value("baseline_samples", size_t{0});
  return c;
}

}  // namespace ncclfi::harness
