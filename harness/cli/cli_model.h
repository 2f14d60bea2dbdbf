// ncclfi's own description of its command line: each command, its options and positionals, and what
// each value is (a scenario file, a run directory, one of a fixed set, a lab name, ...). The help, the
// man page and the shell completion are all written from it, so none of them depends on how CLI11
// spells its types ("ENUM:value in {always->1,...}"), and a value the parser would refuse is never
// offered. The commands register a value's kind beside the CLI11 option (describe_value); the rest
// (names, help, defaults, required) is read from the CLI11 definition through its public accessors.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace ncclfi::cli {

// What a value is: decides its completion and its placeholder in the help.
enum class ValueKind {
  kNone,          // a flag: no value
  kText,          // free text: nothing to complete
  kChoice,        // one of `choices`
  kScenario,      // a scenario file (*.json, *.yaml, *.yml) or a directory of them
  kFile,          // any file
  kDirectory,     // any directory
  kRunDir,        // a run (or suite, or runs/) directory
  kLab,           // a lab name of the catalogue
  kCause,         // a cause of `ncclfi lab causes`
  kFaultId,       // a fault id of the run named by the first positional
  kReportFormat,  // FORMAT or FORMAT=PATH, FORMAT a report format
};

struct ValueSpec {
  ValueKind kind = ValueKind::kText;
  std::string name = "VALUE";        // the placeholder in the help: WHEN, PATH, N
  std::vector<std::string> choices;  // kChoice: every accepted value, in the order the help lists them
};

// Records what `opt`'s value is; returns `opt` for chaining.
CLI::Option* describe_value(CLI::Option* opt, ValueKind kind, const std::string& name);
// describe_value for several options of `cmd` by name ("--out", or a positional's "paths"); a name
// `cmd` does not have throws (at start-up: a test catches it).
struct Described {
  const char* name;
  ValueKind kind;
  const char* value_name;
};
void describe_values(CLI::App& cmd, std::initializer_list<Described> values);
// The spec recorded for `opt`; for an option without one: kNone for a flag, else kText named VALUE.
ValueSpec value_spec(const CLI::Option* opt);

// An option whose value is one of `choices` (matched without regard to case) and sets `target` to the
// paired value; any other value is refused by the parser. `fallback` is the choice shown as default.
template <typename T>
CLI::Option* add_choice_option(CLI::App& cmd, const std::string& name, T& target,
                               const std::vector<std::pair<std::string, T>>& choices,
                               const std::string& value_name, const std::string& help,
                               const std::string& fallback);

struct OptionModel {
  std::vector<std::string> names;  // "--color", "-q"; a positional: its one name ("paths")
  bool positional = false;
  ValueSpec value;
  bool repeatable = false;  // takes several values (or may be given several times)
  bool required = false;
  std::string default_text;
  std::string help;
};

struct CommandModel {
  std::string name;
  std::string path;  // "ncclfi lab start"
  std::string description, footer;
  bool hidden = false;  // the generators: not in the help, man page or completion
  std::vector<OptionModel> options, positionals;
  std::vector<CommandModel> commands;
};

// The model of `app` and all its subcommands, hidden ones flagged.
CommandModel command_model(const CLI::App& app);
// The model of one option (positional or not).
OptionModel option_model(const CLI::Option* opt);
// "always|auto|never".
std::string choices_text(const ValueSpec& spec);
// "--color WHEN", "-q, --quiet", "--filter PATTERN ..."; a positional: "PATHS..." (its name in capitals).
std::string option_label(const OptionModel& option);
// The help text led by the accepted values, the default and whether it is required:
// "always|auto|never (default auto): colour the console output".
std::string option_description(const OptionModel& option);

// ---- template definition ----
void register_choices(CLI::Option* opt, const std::vector<std::string>& names, const std::string& value_name);

template <typename T>
CLI::Option* add_choice_option(CLI::App& cmd, const std::string& name, T& target,
                               const std::vector<std::pair<std::string, T>>& choices,
                               const std::string& value_name, const std::string& help,
                               const std::string& fallback) {
  std::vector<std::string> names;
  for (const auto& choice : choices) names.push_back(choice.first);
  // IsMember rewrites the value to the member's spelling, so the function sees the exact name.
  auto* opt = cmd.add_option_function<std::string>(
      name,
      [&target, choices](const std::string& value) {
        for (const auto& [choice, mapped] : choices) {
          if (choice == value) target = mapped;
        }
      },
      help);
  opt->check(CLI::IsMember(names, CLI::ignore_case))->default_str(fallback);
  register_choices(opt, names, value_name);
  return opt;
}

}  // namespace ncclfi::cli
