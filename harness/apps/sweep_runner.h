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
  std::string pointer;  // a JSON pointer ("/deadline_s") or a parameter name ("timeout_s")
  std::vector<std::string> values;
};

struct SweepOptions {
  std::string scenario_path;
  std::vector<std::string> sets;   // "PARAM=v1,v2" or "POINTER=v1,v2"
  std::string hang_scenario_path;  // optional: timeout recommendation
  std::string out_root = "runs";
  bool quiet = false;
  bool json = false;  // sweep.json on stdout instead of the matrix
};

// Parses "--set" text. Throws std::invalid_argument with a readable message.
SweepAxis parse_sweep_axis(const std::string& text);
// `doc` with `value` set at `axis`: for a parameter name, as the default of that parameter
// (scenario_params.h; it must be declared); for a JSON pointer, at that place. The value is a string
// where the current value is a string (workload args), else the value parsed as JSON when it parses,
// else a string. Throws std::invalid_argument for an undeclared parameter or a pointer whose parent
// does not exist.
nlohmann::json apply_sweep_value(const nlohmann::json& doc, const std::string& axis,
                                 const std::string& value);
// Every combination, first axis slowest.
std::vector<std::vector<std::string>> sweep_combinations(const std::vector<SweepAxis>& axes);

int run_sweep(const SweepOptions& options);

}  // namespace ncclfi::cli
