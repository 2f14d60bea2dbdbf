// The suite's progress on stderr while `ncclfi run` runs. On a terminal: one line redrawn in place ("\r"
// and erase-line), never wider than the terminal less one column (a full line would wrap and leave a
// fragment behind at the next redraw). Elsewhere (a CI log, a file): a plain line at each scenario's start
// and at least every kPlainEvery_s while one runs, so a log never goes silent; each run's end has its own
// line (suite_runner.cc).
//
// The ETA: each run still to come is expected to take as long as its scenario's last run did (under
// --repeat), else its bound (the scenario's deadline for each pass it makes: baselines and every attempt
// of the faulted pass) scaled by how long the runs so far took against their bounds (the bound itself
// before any run finished: the most the suite can take, rounds aside).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "progress.h"
#include "scenario.h"

namespace ncclfi::cli {

// The longest one run of `s` may take, by its deadlines.
double run_bound_s(const Scenario& s);

class SuiteProgress {
 public:
  static constexpr double kPlainEvery_s = 30;
  struct Run {
    std::string scenario;
    double bound_s = 0;  // run_bound_s(); 0 for a run that is skipped
  };
  struct Position {
    size_t run = 0;  // 0-based among `runs`
    size_t scenario = 1, scenarios = 1;
    size_t repeat = 0, repeats = 0;  // under --repeat (0: once)
  };
  using Now = std::function<double()>;  // seconds on a monotonic clock
  using Width = std::function<size_t()>;

  SuiteProgress(std::ostream& out, bool terminal, Width width, std::vector<Run> runs, Now now);
  // A run begins: a plain line says so (not on a terminal: the redrawn line does).
  void start(const Position& position);
  // The attempt loop's state: drawn with the suite's position, elapsed time and ETA.
  void update(harness::ProgressState state);
  // The run ended (or was skipped): its duration counts for the ETA; the redrawn line is erased.
  void finish();
  // Seconds the rest of the suite should take, from `now`.
  double eta_s(double now) const;

 private:
  double estimate_s(size_t run) const;
  void draw(const harness::ProgressState& state);

  std::ostream& out_;
  const bool terminal_;
  Width width_;
  std::vector<Run> runs_;
  Now now_;
  double suite_start_ = 0, run_start_ = 0, last_plain_ = -1e18;
  Position at_;
  bool drawn_ = false;
  double done_actual_s_ = 0, done_bound_s_ = 0;
  std::map<std::string, double> last_duration_s_;
};

}  // namespace ncclfi::cli
