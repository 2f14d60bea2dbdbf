// `ncclfi sweep`: runs a scenario over the product of `--set JSON_POINTER=v1,v2,...` values and
// prints the matrix of outcomes and detection times. With --hang SCENARIO (the same job with a real
// hang instead of a survivable stall), each timeout value also runs against the hang, and the sweep
// names the smallest timeout that never fired on the stall, with its detection time on the hang.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli {

struct SweepAxis {
  std::string pointer;
  std::vector<std::string> values;
};

struct SweepOptions {
  std::string scenario_path;
  std::vector<std::string> sets;   // "POINTER=v1,v2"
  std::string hang_scenario_path;  // optional: timeout recommendation
  std::string out_root = "runs";
  bool quiet = false;
};

// Parses "--set" text. Throws std::invalid_argument with a readable message.
SweepAxis parse_sweep_axis(const std::string& text);
// `doc` with `value` set at `pointer`: a string where the current value is a string (workload args),
// else the value parsed as JSON when it parses, else a string. Throws std::invalid_argument when the
// pointer's parent does not exist.
nlohmann::json apply_sweep_value(const nlohmann::json& doc, const std::string& pointer,
                                 const std::string& value);
// Every combination, first axis slowest.
std::vector<std::vector<std::string>> sweep_combinations(const std::vector<SweepAxis>& axes);

int run_sweep(const SweepOptions& options);

}  // namespace ncclfi::cli
