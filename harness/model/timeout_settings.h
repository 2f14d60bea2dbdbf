// The settings file of `ncclfi timeouts` (docs/timeouts.md): each setting is one configuration under
// test, read and validated here before anything runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::cli {

// One configuration under test: scenario parameters, environment and restart budget.
struct TimeoutSetting {
  std::string name;
  std::string summary;                           // what it is, for the table's legend
  std::map<std::string, nlohmann::json> params;  // {param:NAME} values (e.g. pg_timeout_s)
  std::map<std::string, std::string> env;        // TORCH_NCCL_* and friends
  std::optional<int> max_restarts;               // torchrun --max-restarts
  std::optional<double> timeout_s;               // the collective timeout this setting declares
};

// Reads {"settings": [{name, summary, params, env, max_restarts, timeout_s}, ...]}. Throws
// std::invalid_argument naming `file`, the JSON pointer and what was expected.
std::vector<TimeoutSetting> parse_timeout_settings(const nlohmann::json& doc, const std::string& file);

}  // namespace ncclfi::cli
