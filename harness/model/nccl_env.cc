#include "nccl_env.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "text_format.h"

namespace ncclfi::harness {
namespace {

constexpr std::string_view kPrefix = "NCCL_";
constexpr std::string_view kInfo = "NCCL INFO ";
constexpr std::string_view kSetBy = " set by environment to ";
constexpr std::string_view kInvalid = "Invalid value ";
constexpr std::string_view kUsingDefault = ", using default ";
constexpr std::string_view kVersion = "NCCL version ";
// The NCCL whose source nccl_known_variables.cc lists.
constexpr std::string_view kKnownVersion = "2.28.9";
constexpr size_t kMaxSuggestions = 3;

bool is_variable_name(std::string_view s) {
  return s.size() > kPrefix.size() && s.substr(0, kPrefix.size()) == kPrefix &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) {
           return std::isupper(c) != 0 || std::isdigit(c) != 0 || c == '_';
         });
}

bool is_integer(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::string_view trim_end(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

// NCCL_PARAM's line ends its %lld with a full stop ("to 22."); string values are printed bare.
std::string_view without_full_stop(std::string_view value) {
  if (!value.empty() && value.back() == '.' && is_integer(value.substr(0, value.size() - 1)))
    value.remove_suffix(1);
  return value;
}

bool is_known(const std::string& name) {
  const auto& known = known_nccl_variables();
  return std::binary_search(known.begin(), known.end(), name);
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& also) {
  const auto nearest = nearest_nccl_names(name, also);
  return nearest.empty() ? "" : " (did you mean " + join(nearest, " or ") + "?)";
}

}  // namespace

std::map<std::string, std::string> given_nccl_env(const std::map<std::string, std::string>& inherited,
                                                  const std::map<std::string, std::string>& scenario) {
  // Where NCCL and nccl-tests are, for build systems and scenarios' commands ({env:NCCL_TESTS_DIR}),
  // and NCCL_VERSION, which NVIDIA's CUDA container images set to the packaged release (2.28.3-1 on the
  // project's GPU host): set in many shells and never meant for NCCL itself, so the inherited ones are
  // not noted.
  static const std::set<std::string, std::less<>> kPathsForTools = {
      "NCCL_DIR",  "NCCL_HOME",     "NCCL_INCLUDE_DIR", "NCCL_LIB_DIR", "NCCL_LIBRARY",
      "NCCL_ROOT", "NCCL_ROOT_DIR", "NCCL_TESTS_DIR",   "NCCL_VERSION"};
  std::map<std::string, std::string> given;
  for (const auto& [name, value] : inherited) {
    if (name.rfind(kPrefix, 0) == 0 && kPathsForTools.count(name) == 0) given[name] = value;
  }
  for (const auto& [name, value] : scenario) {
    if (name.rfind(kPrefix, 0) == 0) given[name] = value;
  }
  return given;
}

void add_nccl_env_read(NcclEnvObserved& observed, const nlohmann::json& fields) {
  if (!fields.is_object() || !fields.contains("read") || !fields.at("read").is_object()) return;
  const nlohmann::json& read = fields.at("read");
  // Only libnccl's own reads make the record whole: a process without it (ncclfi-cpu-ring, whose net
  // plugin and preload read a few NCCL_* names) says nothing of what NCCL would have read.
  const auto lib = fields.find("nccl_lib");
  const auto version = fields.find("nccl_version");
  if ((lib != fields.end() && lib->is_string() && !lib->empty()) ||
      (version != fields.end() && version->is_string()))
    observed.recorded = true;
  if (const auto v = fields.find("nccl_version");
      v != fields.end() && v->is_string() && observed.version.empty())
    observed.version = v->get<std::string>();
  for (const auto& [name, value] : read.items()) {
    if (!is_variable_name(name) || observed.read.count(name) != 0) continue;
    if (value.is_string()) {
      observed.read[name] = value.get<std::string>();
    } else if (value.is_null()) {
      observed.read[name] = std::nullopt;
    }
  }
}

std::optional<NcclInfoLine> parse_nccl_info_line(std::string_view line) {
  const size_t info = line.find(kInfo);
  if (info == std::string_view::npos) return std::nullopt;
  std::string_view rest = trim_end(line.substr(info + kInfo.size()));
  if (rest.substr(0, kVersion.size()) == kVersion) {
    rest.remove_prefix(kVersion.size());
    const std::string_view version = rest.substr(0, rest.find_first_of("+ "));
    if (version.empty()) return std::nullopt;
    return NcclInfoLine{NcclInfoLine::Kind::kVersion, "", std::string(version)};
  }
  if (rest.substr(0, kInvalid.size()) == kInvalid) {
    // "Invalid value %s for %s, using default %lld.": the value may hold anything, the rest may not.
    const size_t using_default = rest.rfind(kUsingDefault);
    const size_t for_name = rest.rfind(" for NCCL_", using_default);
    if (using_default == std::string_view::npos || for_name == std::string_view::npos) return std::nullopt;
    const std::string_view name = rest.substr(for_name + 5, using_default - for_name - 5);
    const std::string_view fallback = without_full_stop(rest.substr(using_default + kUsingDefault.size()));
    if (!is_variable_name(name) || !is_integer(fallback)) return std::nullopt;
    return NcclInfoLine{NcclInfoLine::Kind::kRefused, std::string(name), std::string(fallback)};
  }
  const size_t set_by = rest.find(kSetBy);
  if (set_by == std::string_view::npos || !is_variable_name(rest.substr(0, set_by))) return std::nullopt;
  return NcclInfoLine{NcclInfoLine::Kind::kSet, std::string(rest.substr(0, set_by)),
                      std::string(without_full_stop(rest.substr(set_by + kSetBy.size())))};
}

void observe_nccl_info_line(NcclEnvObserved& observed, std::string_view line) {
  const auto parsed = parse_nccl_info_line(line);
  if (!parsed) return;
  switch (parsed->kind) {
    case NcclInfoLine::Kind::kVersion:
      if (observed.version.empty()) observed.version = parsed->value;
      break;
    case NcclInfoLine::Kind::kRefused:
      observed.info_refused.emplace(parsed->name, parsed->value);
      break;
    case NcclInfoLine::Kind::kSet:
      observed.info_set.emplace(parsed->name, parsed->value);
      break;
  }
}

std::vector<std::string> nearest_nccl_names(const std::string& name, const std::vector<std::string>& also) {
  // Distances between the parts after NCCL_, which every name shares: "TIMEOUT" is 3 edits from
  // "IB_TIMEOUT", "IB_TIMOUT" 1. A typo is at most a third of the longer part wrong (at least 2 edits).
  const std::string typed = name.rfind(kPrefix, 0) == 0 ? name.substr(kPrefix.size()) : name;
  std::vector<std::pair<size_t, std::string>> close;
  for (const auto* names : {&known_nccl_variables(), &also}) {
    for (const auto& candidate : *names) {
      if (candidate == name || candidate.rfind(kPrefix, 0) != 0) continue;
      const std::string part = candidate.substr(kPrefix.size());
      const size_t distance = edit_distance(typed, part);
      if (distance <= std::max<size_t>(2, std::max(typed.size(), part.size()) / 3))
        close.emplace_back(distance, candidate);
    }
  }
  std::sort(close.begin(), close.end());
  close.erase(std::unique(close.begin(), close.end()), close.end());
  std::vector<std::string> nearest;
  for (const auto& [distance, candidate] : close) {
    if (distance != close.front().first || nearest.size() == kMaxSuggestions) break;
    nearest.push_back(candidate);
  }
  return nearest;
}

std::vector<std::string> nccl_env_notes(const NcclEnvObserved& observed) {
  const std::string nccl = observed.version.empty() ? "NCCL" : "NCCL " + observed.version;
  std::vector<std::string> read_names;
  for (const auto& entry : observed.read) read_names.push_back(entry.first);
  std::vector<std::string> notes;
  for (const auto& [name, value] : observed.given) {
    const std::string head = name + "=" + value + ": ";
    const auto read = observed.read.find(name);
    const auto set = observed.info_set.find(name);
    const bool seen = read != observed.read.end() || set != observed.info_set.end();
    if (const auto refused = observed.info_refused.find(name); refused != observed.info_refused.end()) {
      notes.push_back(head + nccl + " refused this value and used its default, " + refused->second);
    } else if (!seen && observed.recorded && is_known(name)) {
      // NCCL reads some variables only where they apply (NCCL_IB_* with an InfiniBand transport).
      notes.push_back(head + nccl + " did not read this variable in this run");
    } else if (!seen && observed.recorded) {
      notes.push_back(head + nccl + " does not read this variable" + did_you_mean(name, read_names));
    } else if (!seen && !is_known(name)) {
      // No record of NCCL's reads (the preload was not loaded): the names of NCCL's source tell.
      notes.push_back(head + "NCCL " + std::string(kKnownVersion) + " has no variable of this name" +
                      did_you_mean(name, read_names));
    } else if (read != observed.read.end() && read->second != value) {
      notes.push_back(head + nccl +
                      (read->second ? " read " + name + "=" + *read->second : " found it unset") +
                      ": the program, its launcher or an nccl.conf changed it after the launch");
    } else if (set != observed.info_set.end() && set->second != value) {
      notes.push_back(head + nccl + " took it as " + set->second);
    }
  }
  return notes;
}

}  // namespace ncclfi::harness
