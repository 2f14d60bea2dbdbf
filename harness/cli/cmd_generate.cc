// The hidden `ncclfi help-man` and `ncclfi completion bash|zsh|fish`: the build runs them to make
// ncclfi.1 and the completion scripts from the command model (cli_docs.cc, cli_complete.h); the scripts
// call the hidden `ncclfi __complete WORD...` at each <TAB>. The hidden `ncclfi doc-table NAME` prints a
// table that docs/*.md holds verbatim, generated from its registry (scripts/update-doc-tables pastes them;
// unit tests compare).
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "build_info.h"
#include "cli_complete.h"
#include "cli_docs.h"
#include "cmd_lab.h"
#include "commands.h"
#include "lab_catalogue.h"
#include "lab_grading.h"
#include "launcher_spec.h"
#include "mechanisms.h"
#include "ncclfi/fault_kinds.h"
#include "ncclfi/fault_sites.h"
#include "ncclfi/plan.h"
#include "observe.h"
#include "signature_family.h"
#include "suite_runner.h"

namespace ncclfi::cli {
namespace {

// What completion reads from outside the command line; a catalogue or plan that cannot be read offers
// nothing (a <TAB> never prints an error).
DynamicValues dynamic_values() {
  DynamicValues v;
  v.labs = [] {
    std::vector<std::string> names;
    try {
      for (const auto& lab : lab::load_lab_catalogue(default_lab_catalogue())) names.push_back(lab.name);
    } catch (const std::exception&) {
    }
    return names;
  };
  v.causes = [] {
    std::vector<std::string> names;
    for (const auto& c : lab::cause_vocabulary()) names.push_back(c.name);
    return names;
  };
  v.report_formats = [] {
    std::vector<std::string> names;
    for (const harness::ReportSpec* spec : harness::report_specs()) names.emplace_back(spec->name);
    return names;
  };
  v.fault_ids = [](const std::string& run_dir) {
    std::vector<std::string> ids;
    try {
      for (const auto& f : load_plan_file(run_dir + "/plan.json").faults) ids.push_back(f.id);
    } catch (const std::exception&) {
    }
    return ids;
  };
  return v;
}

}  // namespace

int print_completions(const CLI::App& app, const std::vector<std::string>& words) {
  std::cout << completion_text(complete(command_model(app), words, dynamic_values()));
  return kAllPassed;
}

void add_generator_commands(CLI::App& app, int& status) {
  auto* man = app.add_subcommand("help-man", "Print the man page ncclfi.1 (troff).")->group("");
  man->callback([&app, &status] {
    std::cout << render_man_page(command_model(app), kVersion);
    status = kAllPassed;
  });
  auto shell = std::make_shared<std::string>("bash");
  auto* completion = app.add_subcommand("completion", "Print a shell completion script.")->group("");
  add_choice_option<std::string>(*completion, "shell", *shell,
                                 {{"bash", "bash"}, {"zsh", "zsh"}, {"fish", "fish"}}, "SHELL", "the shell",
                                 "bash");
  completion->callback([&app, shell, &status] {
    const std::string name = app.get_name();
    std::cout << (*shell == "zsh"    ? zsh_completion_script(name)
                  : *shell == "fish" ? fish_completion_script(name)
                                     : bash_completion_script(name));
    status = kAllPassed;
  });
  // name -> the function that renders it; one line per generated table.
  static const std::map<std::string, std::string (*)()> kTables = {
      {"faults", [] { return fault_catalogue_markdown(); }},
      {"sites", [] { return fault_sites_markdown(); }},
      {"launchers", [] { return launcher_catalogue_markdown(); }},
      {"reports", [] { return harness::report_catalogue_markdown(); }},
      {"mechanisms", [] { return harness::mechanism_catalogue_markdown(); }},
      {"patterns", [] { return harness::builtin_patterns_markdown(); }},
      {"signatures", [] { return harness::signature_catalogue_markdown(); }},
  };
  auto table = std::make_shared<std::string>();
  std::vector<std::string> names;
  for (const auto& [name, render] : kTables) names.push_back(name);
  auto* doc_table = app.add_subcommand("doc-table", "Print a generated table of the docs.")->group("");
  describe_value(doc_table->add_option("name", *table, "the table")->required()->check(CLI::IsMember(names)),
                 ValueKind::kText, "NAME");
  doc_table->callback([table, &status] {
    std::cout << kTables.at(*table)();
    status = kAllPassed;
  });
}

}  // namespace ncclfi::cli
