#include "suite_progress.h"

#include <algorithm>

#include "reports.h"

namespace ncclfi::cli {

double run_bound_s(const Scenario& s) {
  const int baselines = s.needs_baseline() ? std::max(1, s.baseline_runs) : 0;
  return s.deadline_s * (baselines + s.restart.max + 1);
}

SuiteProgress::SuiteProgress(std::ostream& out, bool terminal, Width width, std::vector<Run> runs, Now now)
    : out_(out), terminal_(terminal), width_(std::move(width)), runs_(std::move(runs)), now_(std::move(now)) {
  suite_start_ = now_();
  run_start_ = suite_start_;
}

void SuiteProgress::start(const Position& position) {
  at_ = position;
  run_start_ = now_();
  if (terminal_) return;
  harness::ProgressState st;
  st.phase = "starting";
  if (position.run < runs_.size()) st.scenario = runs_[position.run].scenario;
  st.deadline_s = 0;
  last_plain_ = -1e18;  // a run's start is always told
  update(st);
}

void SuiteProgress::update(harness::ProgressState st) {
  if (at_.run < runs_.size()) st.scenario = runs_[at_.run].scenario;
  st.index = at_.scenario;
  st.total = at_.scenarios;
  st.repeat = at_.repeat;
  st.repeats = at_.repeats;
  const double now = now_();
  st.suite_elapsed_s = now - suite_start_;
  st.eta_s = eta_s(now);
  if (!terminal_ && now - last_plain_ < kPlainEvery_s) return;
  draw(st);
  last_plain_ = now;
}

void SuiteProgress::draw(const harness::ProgressState& st) {
  if (terminal_) {
    out_ << "\r\033[K" << harness::format_progress_line(st, width_()) << std::flush;
    drawn_ = true;
  } else {
    // A log line: the width only when one was asked for ($COLUMNS), whole otherwise.
    const size_t width = width_();
    out_ << harness::format_progress_line(st, width == 0 ? 0 : width + 1) << "\n" << std::flush;
  }
}

void SuiteProgress::finish() {
  const double took = now_() - run_start_;
  if (at_.run < runs_.size() && runs_[at_.run].bound_s > 0) {
    done_actual_s_ += took;
    done_bound_s_ += runs_[at_.run].bound_s;
    last_duration_s_[runs_[at_.run].scenario] = took;
  }
  if (terminal_ && drawn_) out_ << "\r\033[K" << std::flush;
  drawn_ = false;
  ++at_.run;
  run_start_ = now_();
}

double SuiteProgress::estimate_s(size_t run) const {
  const Run& r = runs_[run];
  if (r.bound_s <= 0) return 0;
  if (const auto it = last_duration_s_.find(r.scenario); it != last_duration_s_.end()) return it->second;
  const double pace = done_bound_s_ > 0 ? done_actual_s_ / done_bound_s_ : 1.0;
  return r.bound_s * pace;
}

double SuiteProgress::eta_s(double now) const {
  double left = 0;
  if (at_.run < runs_.size()) left += std::max(0.0, estimate_s(at_.run) - (now - run_start_));
  for (size_t i = at_.run + 1; i < runs_.size(); ++i) left += estimate_s(i);
  return left;
}

}  // namespace ncclfi::cli
