// `ncclfi validate`, `list`, `report`, `arm` and `disarm`.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "cli_json.h"
#include "commands.h"
#include "console_text.h"
#include "drill_abort.h"
#include "drill_report.h"
#include "host_env.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "markdown_list.h"
#include "mechanisms.h"
#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"
#include "ncclfi/fault_kinds.h"
#include "ncclfi/fault_sites.h"
#include "ncclfi/injector.h"
#include "ncclfi/plan.h"
#include "reports.h"
#include "run_control.h"
#include "scenario.h"
#include "scenario_yaml.h"
#include "suite_runner.h"
#include "terminal.h"
#include "verdict_input.h"

namespace ncclfi::cli {

namespace {

// A bare fault plan ({"seed", "control", "faults"}, what NCCLFI_PLAN names) rather than a scenario:
// a JSON object with faults and none of a scenario's own keys (a scenario that lacks its workload is
// still a scenario, and is told so).
bool is_fault_plan_file(const std::string& path) {
  if (is_yaml_path(path)) return false;
  // Bounded and non-blocking like every input (a FIFO or a huge file is the scenario loader's to refuse).
  std::string text;
  if (!read_regular_file(path, kMaxInputFileBytes, text).empty()) return false;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.contains("faults") && !doc.contains("workload") && !doc.contains("name") &&
         !doc.contains("expect");
}

}  // namespace

void add_validate_command(CLI::App& app, int& status) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto as_json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("validate", "Check scenario files without running anything.");
  cmd->add_option("paths", *paths, "scenario files (JSON or YAML), fault plan files, or directories")
      ->required();
  cmd->add_flag("--json", *as_json, "print {files: [{file, valid, name, errors}], valid, invalid} on stdout");
  describe_values(*cmd, {{"paths", ValueKind::kScenario, "PATH"}});
  cmd->footer(
      "Errors read `file: /json/pointer: expected X, got Y` (`file:line: ...` for YAML); exit 2 when any\n"
      "file is bad. A file with \"faults\" and no \"name\", \"workload\" or \"expect\" is checked as a bare "
      "fault plan (NCCLFI_PLAN).\n"
      "Examples:\n"
      "  ncclfi validate scenarios/\n"
      "  ncclfi validate my-scenario.json --json");
  cmd->callback([paths, as_json, &status] {
    int bad = 0, good = 0;
    nlohmann::json files = nlohmann::json::array();
    auto report_error = [&](const ScenarioError& e) {
      if (*as_json) {
        files.push_back(scenario_error_json(e));
      } else {
        std::cerr << e.what() << "\n";
      }
      ++bad;
    };
    try {
      for (const auto& file : expand_scenario_paths(*paths)) {
        if (is_fault_plan_file(file)) {
          try {
            const FaultPlan plan = load_plan_file(file);
            if (*as_json) {
              files.push_back(
                  {{"file", file}, {"valid", true}, {"kind", "plan"}, {"faults", plan.faults.size()}});
            } else {
              std::cout << "ok   " << file << " (fault plan: " << plan.faults.size() << " fault(s))\n";
            }
            ++good;
          } catch (const PlanError& e) {
            report_error(ScenarioError(file, {{e.pointer(), e.expected(), e.found()}}));
          }
          continue;
        }
        try {
          const Scenario s = load_scenario(file);
          if (*as_json) {
            files.push_back(scenario_json(s));
          } else {
            std::cout << "ok   " << file << " (" << s.name << ": " << s.expected_text() << ")\n";
            for (const auto& w : s.warnings) std::cout << "warn " << w << "\n";
          }
          ++good;
        } catch (const ScenarioError& e) {
          report_error(e);
        }
      }
    } catch (const ScenarioError& e) {
      report_error(e);
    }
    if (*as_json) {
      std::cout << nlohmann::json{{"files", files}, {"valid", good}, {"invalid", bad}}.dump(2) << "\n";
    } else {
      std::cout << good << " valid, " << bad << " invalid\n";
    }
    status = bad > 0 ? kBadInput : kAllPassed;
  });
}

namespace {

// Which scenarios of the catalogue use each (layer, kind): every scenario file that loads, by name, once.
KindUses kind_uses(const std::vector<std::string>& roots) {
  KindUses uses;
  std::vector<std::string> files;
  try {
    files = expand_scenario_paths(roots);
  } catch (const ScenarioError&) {
    return uses;  // no catalogue here: the table lists no scenarios
  }
  for (const auto& file : files) {
    try {
      const Scenario s = load_scenario(file);
      for (const Fault& f : s.plan.faults) {
        auto& names = uses[{to_string(f.layer), f.kind}];
        if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
      }
    } catch (const ScenarioError&) {
      // `ncclfi validate` reports broken files; the table only counts the ones that load.
    }
  }
  for (auto& [key, names] : uses) std::sort(names.begin(), names.end());
  return uses;
}

// How `list` prints: a narrow list that fits the terminal, the Markdown the docs hold, or JSON.
enum class ListFormat { kList, kMarkdown, kJson };

// One scenario: its name, then its expectation, file and summary, wrapped and indented (a narrow list),
// or a Markdown table row.
std::string scenario_entry(const Scenario& s, const std::string& file, ListFormat format) {
  if (format == ListFormat::kMarkdown) {
    return "| " + s.name + " | " + s.expected_text() + " | " + file + " | " + s.summary + " |\n";
  }
  const size_t width = wrap_width(STDOUT_FILENO);
  return s.name + "\n" + harness::wrap("expect: " + s.expected_text(), width, 6, 4) +
         harness::wrap("file: " + file, width, 6, 4) + harness::wrap(s.summary, width, 4);
}

void list_scenarios(const std::vector<std::string>& roots, ListFormat format) {
  nlohmann::json list = nlohmann::json::array();
  if (format == ListFormat::kMarkdown)
    std::cout << "| scenario | expected | file | summary |\n| --- | --- | --- | --- |\n";
  for (const auto& file : expand_scenario_paths(roots)) {
    try {
      const Scenario s = load_scenario(file);
      if (format == ListFormat::kJson) {
        list.push_back(scenario_json(s));
      } else {
        std::cout << scenario_entry(s, file, format);
      }
    } catch (const ScenarioError& e) {
      if (format == ListFormat::kJson) {
        list.push_back(scenario_error_json(e));
      } else if (format == ListFormat::kMarkdown) {
        std::cout << "| INVALID | | " << file << " | " << e.what() << " |\n";
      } else {
        std::cout << "INVALID " << file << "\n" << harness::wrap(e.what(), wrap_width(STDOUT_FILENO), 4);
      }
    }
  }
  if (format == ListFormat::kJson) std::cout << list.dump(2) << "\n";
}

}  // namespace

namespace {

// The registries `list` prints as a Markdown table (the docs hold the same text; unit tests compare) or,
// with --json, as JSON (nullptr: the table either way).
struct Catalogue {
  std::string (*markdown)() = nullptr;
  nlohmann::json (*json)() = nullptr;
};

const std::map<std::string, Catalogue>& catalogues() {
  static const std::map<std::string, Catalogue> all = {
      {"faults", {[] { return fault_catalogue_markdown(); }, [] { return fault_catalogue_json(); }}},
      {"launchers", {[] { return launcher_catalogue_markdown(); }, [] { return launcher_catalogue_json(); }}},
      {"mechanisms",
       {[] { return harness::mechanism_catalogue_markdown(); },
        [] { return harness::mechanism_catalogue_json(); }}},
      {"reports", {[] { return harness::report_catalogue_markdown(); }, nullptr}},
  };
  return all;
}

void list_points(bool as_json) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : all_point_names()) {
    if (as_json) {
      points.push_back(std::string(p));
    } else {
      std::cout << p << "\n";
    }
  }
  if (as_json) std::cout << points.dump(2) << "\n";
}

// A Markdown catalogue as `format` asks: as it is, or as a list that fits the terminal.
void print_catalogue(const std::string& markdown, ListFormat format) {
  std::cout << (format == ListFormat::kMarkdown
                    ? markdown
                    : harness::markdown_as_list(markdown, wrap_width(STDOUT_FILENO)));
}

// Prints what `ncclfi list WHAT` shows; returns the exit status.
int print_list(const std::string& what, const std::vector<std::string>& paths, ListFormat format) {
  const bool as_json = format == ListFormat::kJson;
  // Without a path: the catalogue this ncclfi came with (build tree or install prefix), not the working
  // directory's.
  const std::vector<std::string> roots =
      paths.empty() ? std::vector<std::string>{Installation::discover().data_dir + "/scenarios"} : paths;
  if (const auto it = catalogues().find(what); it != catalogues().end()) {
    if (as_json && it->second.json != nullptr) {
      std::cout << it->second.json().dump(2) << "\n";
    } else {
      print_catalogue(it->second.markdown(), as_json ? ListFormat::kMarkdown : format);
    }
  } else if (what == "sites") {
    // The table of docs/faults.md ("Fault sites"), with the scenarios of the catalogue that use each kind.
    const KindUses uses = kind_uses(roots);
    if (as_json) {
      std::cout << fault_sites_json(uses).dump(2) << "\n";
    } else {
      print_catalogue(fault_sites_markdown(uses), format);
    }
  } else if (what == "points") {
    list_points(as_json);
  } else {
    try {
      list_scenarios(roots, format);
    } catch (const ScenarioError& e) {
      std::cerr << e.what() << "\n";
      return kBadInput;
    }
  }
  return kAllPassed;
}

}  // namespace

void add_list_command(CLI::App& app, int& status) {
  auto what = std::make_shared<std::string>();
  auto roots = std::make_shared<std::vector<std::string>>();
  auto as_json = std::make_shared<bool>(false);
  auto format = std::make_shared<std::string>("list");
  auto* cmd = app.add_subcommand(
      "list",
      "List fault kinds, injection points, fault sites, launchers, detection mechanisms, report formats or "
      "scenarios.");
  const std::vector<std::string> lists = {"faults",     "points",  "sites",    "launchers",
                                          "mechanisms", "reports", "scenarios"};
  register_choices(cmd->add_option("what", *what, "what to list")->required()->check(CLI::IsMember(lists)),
                   lists, "WHAT");
  cmd->add_option("paths", *roots,
                  "for `scenarios` and `sites`: where to look (default: the installed catalogue)");
  cmd->add_flag("--json", *as_json, "print a JSON array on stdout");
  const std::vector<std::string> formats = {"list", "markdown"};
  register_choices(
      cmd->add_option(
             "--format", *format,
             "list: a name per entry, then its text wrapped to the terminal's width (80 columns "
             "when the output is not a terminal and COLUMNS is unset); markdown: the tables of the docs")
          ->check(CLI::IsMember(formats))
          ->capture_default_str(),
      formats, "FORMAT");
  describe_values(*cmd, {{"paths", ValueKind::kScenario, "PATH"}});
  cmd->footer(
      "Examples:\n"
      "  ncclfi list faults\n"
      "  ncclfi list faults --format markdown\n"
      "  ncclfi list points --json\n"
      "  ncclfi list sites\n"
      "  ncclfi list launchers\n"
      "  ncclfi list mechanisms --json\n"
      "  ncclfi list scenarios scenarios/cpu");
  cmd->callback([what, roots, as_json, format, &status] {
    const ListFormat chosen = *as_json                ? ListFormat::kJson
                              : *format == "markdown" ? ListFormat::kMarkdown
                                                      : ListFormat::kList;
    status = print_list(*what, *roots, chosen);
  });
}

void add_report_command(CLI::App& app, int& status) {
  auto dir = std::make_shared<std::string>();
  auto markdown = std::make_shared<bool>(false);
  auto reports = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("report", "Re-render the reports of a run, a suite or a whole runs/ tree.");
  add_report_options(*cmd, *reports);
  describe_value(
      cmd->add_option("run_dir", *dir,
                      "a run directory, runs/<scenario>/latest, a suite (runs/suites/<time>) or runs/")
          ->required(),
      ValueKind::kRunDir, "RUN_DIR");
  cmd->add_flag("--markdown", *markdown,
                "print the drill report of each run (Markdown for a postmortem: what was injected where and "
                "when, what each rank saw, detection, recovery, the verdict per expectation) instead");
  cmd->footer(
      "Writes summary.json, junit.xml and report.html into RUN_DIR (more with --report) and prints the "
      "table.\n"
      "Examples:\n"
      "  ncclfi report runs/net-drop-recv-hang/latest\n"
      "  ncclfi report --markdown runs/drill-rank-kill-restart/latest >> postmortem.md\n"
      "  ncclfi report runs/\n"
      "  ncclfi report runs/suites/20261202T101500Z   (a suite: the runs its summary.json lists)");
  cmd->callback([dir, markdown, reports, &status] {
    std::vector<harness::ReportRequest> requests;
    try {
      requests = report_requests(*reports);
    } catch (const std::invalid_argument& e) {
      std::cerr << "ncclfi report: " << e.what() << "\n";
      status = kBadInput;
      return;
    }
    if (!std::filesystem::exists(*dir)) {
      std::cerr << "ncclfi report: " << *dir << ": no such directory\n";
      status = kBadInput;
      return;
    }
    // A verdict that cannot be read is bad input: said with its file and field, and nothing is written.
    if (const auto problems = harness::unreadable_verdicts(*dir); !problems.empty()) {
      for (const auto& problem : problems) std::cerr << "ncclfi report: " << problem << "\n";
      status = kBadInput;
      return;
    }
    try {
      const auto records = harness::load_runs(*dir);
      if (records.empty()) {
        std::cerr << "ncclfi report: no verdict.json at or under " << *dir << "\n";
        status = kBadInput;
        return;
      }
      if (*markdown) {
        for (size_t i = 0; i < records.size(); ++i)
          std::cout << (i > 0 ? "\n" : "") << harness::drill_report_markdown(records[i]);
      } else {
        std::cout << harness::rerender_reports(
            *dir, {use_color(STDOUT_FILENO), output_width(STDOUT_FILENO), ""}, requests);
      }
      status = exit_status_for(records);
    } catch (const std::exception& e) {
      std::cerr << "ncclfi report: " << e.what() << "\n";
      status = kHarnessError;
    }
  });
}

namespace {

// The ids of the faults of the run in `run_dir` (its plan.json), in plan order. Throws
// std::runtime_error when the directory holds no readable plan.
std::vector<std::string> run_fault_ids(const std::string& run_dir) {
  const std::string plan_path = run_dir + "/plan.json";
  if (!std::filesystem::exists(plan_path)) {
    throw std::runtime_error(run_dir +
                             " has no plan.json: give the run directory of a running job "
                             "(runs/<scenario>/latest)");
  }
  std::vector<std::string> ids;
  for (const auto& f : load_plan_file(plan_path).faults) ids.push_back(f.id);
  return ids;
}

}  // namespace

void add_control_commands(CLI::App& app, int& status) {
  for (const bool arm : {true, false}) {
    auto dir = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto timeout_ms = std::make_shared<int>(2000);
    const std::string name = arm ? "arm" : "disarm";
    auto* cmd =
        app.add_subcommand(name, arm ? "Arm a fault of a running job (the plan needs \"control\": true)."
                                     : "Disarm a fault of a running job.");
    cmd->add_option("run_dir", *dir, "the run directory of the running job")
        ->required()
        ->check(CLI::ExistingDirectory);
    cmd->add_option("fault_id", *id, "the fault's id in the scenario")->required();
    cmd->add_option("--timeout-ms", *timeout_ms, "per-process wait for an answer")->capture_default_str();
    describe_values(*cmd, {{"run_dir", ValueKind::kRunDir, "RUN_DIR"},
                           {"fault_id", ValueKind::kFaultId, "FAULT_ID"},
                           {"--timeout-ms", ValueKind::kText, "MS"}});
    cmd->footer(
        "Writes to the libfiu control FIFO of every live rank; dead ranks are skipped. The command is\n"
        "recorded in the run's events.jsonl (event \"control\") and drawn on the report's timeline.\n"
        "Only a job running here as yours: a finished run, one whose harness is gone, another user's or\n"
        "another host's is refused, and nothing is sent or recorded.\n"
        "Exit status: 0 some rank acknowledged, 1 none did, 2 no such fault in the run or not a running job "
        "of yours.\n"
        "Example:\n  ncclfi " +
        name + " runs/net-delay-armed-at-runtime/latest slow");
    cmd->callback([arm, name, dir, id, timeout_ms, &status] {
      std::vector<std::string> ids;
      try {
        ids = run_fault_ids(*dir);
      } catch (const std::exception& e) {
        std::cerr << "ncclfi " << name << ": " << e.what() << "\n";
        status = kBadInput;
        return;
      }
      if (std::find(ids.begin(), ids.end(), *id) == ids.end()) {
        std::string known;
        for (const auto& i : ids) known += (known.empty() ? "" : ", ") + i;
        std::cerr << "ncclfi " << name << ": the run in " << *dir << " has no fault '" << *id
                  << "'; its faults: " << (known.empty() ? "none" : known) << "\n";
        status = kBadInput;
        return;
      }
      if (const RunControlState state = run_control_state(*dir);
          state.kind != RunControlState::Kind::kRunning) {
        std::cerr << "ncclfi " << name << ": " << state.why << "; nothing was sent or recorded\n";
        status = kBadInput;
        return;
      }
      // Stamped when the command was given: a rank armed by it may inject before the answers are in.
      const EventTime given = EventTime::now();
      const auto r = send_control(*dir, *id, arm, *timeout_ms);
      // On the run's own timeline, beside the injections it enables or stops.
      EventLog(*dir + "/events.jsonl", "control")
          .write_for_rank(-1, ev::kControl,
                          {{"action", name},
                           {"fault_id", *id},
                           {"acknowledged", r.acknowledged},
                           {"skipped_dead", r.skipped_dead},
                           {"timed_out", r.timed_out},
                           {"refused", r.refused}},
                          given);
      std::cout << (arm ? "armed " : "disarmed ") << *id << ": " << r.acknowledged << " acknowledged, "
                << r.skipped_dead << " dead skipped, " << r.timed_out << " timed out"
                << (r.refused > 0 ? ", " + std::to_string(r.refused) + " refused (not a live rank's own FIFO)"
                                  : "")
                << "\n";
      status = r.acknowledged > 0 ? kAllPassed : kSomeFailed;
    });
  }
  add_abort_command(app, status);
}

void add_abort_command(CLI::App& app, int& status) {
  auto dir = std::make_shared<std::string>();
  auto timeout_s = std::make_shared<double>(30);
  auto* cmd =
      app.add_subcommand("abort", "Stop a running drill at once: disarm every fault, tear the job down.");
  cmd->add_option("run_dir", *dir, "the run directory of the running job")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--timeout-s", *timeout_s, "how long to wait for the harness to confirm the teardown")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  describe_values(*cmd, {{"run_dir", ValueKind::kRunDir, "RUN_DIR"}, {"--timeout-s", ValueKind::kText, "S"}});
  cmd->footer(
      "Disarms every fault in every live rank (control FIFOs), records a control event \"abort\" in the "
      "run's\n"
      "events.jsonl, and asks the harness to tear the job down and launch nothing more (it ends the run "
      "like\n"
      "Ctrl-C: a partial verdict, exit 3). Only a job running here as yours: a finished run, another user's\n"
      "or another host's is refused and left as it is; where the harness died without a verdict, kills the\n"
      "run's leftover processes.\n"
      "Exit status: 0 the job is down, 1 the harness did not confirm in time, 2 not a run directory or not "
      "a\n"
      "running job of yours.\n"
      "Example:\n  ncclfi abort runs/drill-flapping-link/latest");
  cmd->callback([dir, timeout_s, &status] { status = abort_run(*dir, *timeout_s, std::cout); });
}

}  // namespace ncclfi::cli
