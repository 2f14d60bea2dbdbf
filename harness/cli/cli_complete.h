// Shell completion for every shell from one engine in ncclfi itself: the scripts of `ncclfi completion
// bash|zsh|fish` pass the words typed so far to the hidden `ncclfi __complete WORD...` (the last word is
// the one being completed, maybe empty) and show what it prints. What fits where is decided here, once,
// from the command model (cli_model.h): subcommands at every level, each command's options and the
// global ones, an option's values by their kind (only the accepted values of a fixed set, scenario
// files, directories, lab names, the fault ids of the run being armed), also after a global option
// that comes before the command.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli_model.h"

namespace ncclfi::cli {

struct Completion {
  // words: the candidates below; files, scenarios (*.json, *.yaml, *.yml and directories), directories:
  // the shell completes paths itself; nothing: no candidate.
  enum class Kind { kWords, kFiles, kScenarios, kDirectories, kNothing };
  Kind kind = Kind::kNothing;
  std::vector<std::pair<std::string, std::string>> words;  // candidate, description (may be empty)
};

// Values that come from outside the command line (the lab catalogue, the run being controlled).
struct DynamicValues {
  std::function<std::vector<std::string>()> labs, causes, report_formats;
  std::function<std::vector<std::string>(const std::string& run_dir)> fault_ids;
};

// What may come at the last of `words` (the words after the program name).
Completion complete(const CommandModel& root, const std::vector<std::string>& words,
                    const DynamicValues& values);
// The protocol the scripts read: the kind on the first line (words, files, scenarios, dirs, nothing),
// then one candidate a line, "WORD\tDESCRIPTION" where there is a description.
std::string completion_text(const Completion& completion);

// The scripts, for the program `name`.
std::string bash_completion_script(const std::string& name);
std::string zsh_completion_script(const std::string& name);
std::string fish_completion_script(const std::string& name);

}  // namespace ncclfi::cli
