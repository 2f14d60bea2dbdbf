// Sweep rendering: the matrix of outcomes and detection times over the product of `--set` values
// (text and JSON). Pure functions; the runner builds the points and prints.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge.h"
#include "run_record.h"

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

}  // namespace ncclfi::harness
