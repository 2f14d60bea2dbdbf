// Settings that do nothing: the NCCL_* variables a job was given against what NCCL read. NCCL has no
// NCCL_TIMEOUT, and a misspelt NCCL_IB_TIMOUT=22 passes silently; both show as notes on the verdict
// (never as a failure). Two sources tell what NCCL read: the preload's nccl_env_read events (every
// NCCL_* lookup libnccl made, with the value it got) and, when the job ran with NCCL_DEBUG=INFO, NCCL's
// "X set by environment to V" lines.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::harness {

struct NcclEnvObserved {
  // The NCCL_* variables the ranks were given: the harness's inherited environment, then the scenario's
  // env over it (given_nccl_env). The variables ncclfi sets itself (NCCL_NET_PLUGIN, ...) are not in it.
  std::map<std::string, std::string> given;
  bool recorded = false;  // an nccl_env_read event of libnccl's came: `read` is every lookup NCCL made
  std::string version;    // "2.28.9": from the record, else from NCCL's "NCCL version" line
  // Every variable NCCL looked up, on any rank: the value it got, nullopt when it was unset.
  std::map<std::string, std::optional<std::string>> read;
  std::map<std::string, std::string> info_set;      // "X set by environment to V": X -> V
  std::map<std::string, std::string> info_refused;  // "Invalid value S for X, using default D": X -> D
};

// The NCCL_* entries of `inherited`, then those of `scenario` over them. Inherited paths for tools
// (NCCL_HOME, NCCL_TESTS_DIR, ...) are left out: shells set them for builds, not for NCCL.
std::map<std::string, std::string> given_nccl_env(const std::map<std::string, std::string>& inherited,
                                                  const std::map<std::string, std::string>& scenario);

// Takes one nccl_env_read event's fields (nccl_version, read: {name: value or null}); fields of the
// wrong type are passed over.
void add_nccl_env_read(NcclEnvObserved& observed, const nlohmann::json& fields);

// One line of NCCL's INFO output about its environment (NCCL 2.28.9, src/misc/param.cc and the callers
// of INFO(NCCL_ENV, ...)); the line as NCCL prints it, "host:pid:tid [dev] NCCL INFO " first:
//   "NCCL_IB_TIMEOUT set by environment to 22."        (NCCL_PARAM values: %lld and a full stop)
//   "NCCL_SOCKET_IFNAME set by environment to eth0"    (strings, as NCCL took them)
//   "Invalid value 9x99 for NCCL_IB_TIMEOUT, using default 20."
//   "NCCL version 2.28.9+cuda12.9"
struct NcclInfoLine {
  enum class Kind { kSet, kRefused, kVersion };
  Kind kind = Kind::kSet;
  std::string name;   // the variable; empty for kVersion
  std::string value;  // kSet: the value NCCL took; kRefused: the default it used; kVersion: "2.28.9"
};
std::optional<NcclInfoLine> parse_nccl_info_line(std::string_view line);
// parse_nccl_info_line, kept in `observed`.
void observe_nccl_info_line(NcclEnvObserved& observed, std::string_view line);

// The NCCL parameter names of NCCL 2.28.9's source (nccl_known_variables.cc).
const std::vector<std::string>& known_nccl_variables();
// The real names closest to `name` (a typo's distance: a few edits of the part after NCCL_), among the
// known ones and `also` (what NCCL read in the run), nearest first, at most 3; empty when none is close.
std::vector<std::string> nearest_nccl_names(const std::string& name,
                                            const std::vector<std::string>& also = {});

// One line per given variable that did nothing or not what was written, e.g.
//   "NCCL_TIMEOUT=5: NCCL 2.28.9 does not read this variable (did you mean NCCL_IB_TIMEOUT?)"
// Nothing for a variable NCCL read with the value given.
std::vector<std::string> nccl_env_notes(const NcclEnvObserved& observed);

}  // namespace ncclfi::harness
