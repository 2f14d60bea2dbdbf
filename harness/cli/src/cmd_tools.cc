// `ncclfi validate`, `list`, `report`, `arm` and `disarm`.
#include <unistd.h>

#include <filesystem>
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "ncclfi/fault_kinds.h"
#include "ncclfi/injector.h"
#include "rank_launcher.h"
#include "reports.h"
#include "scenario.h"
#include "suite_runner.h"

namespace ncclfi::cli {

void add_validate_command(CLI::App& app, int& status) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("validate", "Check scenario files without running anything.");
  cmd->add_option("paths", *paths, "scenario files or directories")->required();
  cmd->footer(
      "Errors read `file: /json/pointer: expected X, got Y`; exit 2 when any file is bad.\n"
      "Examples:\n"
      "  ncclfi validate scenarios/\n"
      "  ncclfi validate my-scenario.json");
  cmd->callback([paths, &status] {
    int bad = 0, good = 0;
    try {
      for (const auto& file : expand_scenario_paths(*paths)) {
        try {
          const Scenario s = load_scenario(file);
          std::cout << "ok   " << file << " (" << s.name << ": " << s.expected_text() << ")\n";
          ++good;
        } catch (const ScenarioError& e) {
          std::cerr << e.what() << "\n";
          ++bad;
        }
      }
    } catch (const ScenarioError& e) {
      std::cerr << e.what() << "\n";
      ++bad;
    }
    std::cout << good << " valid, " << bad << " invalid\n";
    status = bad > 0 ? kBadInput : kAllPassed;
  });
}

namespace {

void list_scenarios(const std::vector<std::string>& roots) {
  for (const auto& file : expand_scenario_paths(roots)) {
    try {
      const Scenario s = load_scenario(file);
      std::cout << std::left << std::setw(34) << s.name << " " << std::setw(44) << s.expected_text() << " "
                << file << "\n    " << s.summary << "\n";
    } catch (const ScenarioError& e) {
      std::cout << "INVALID " << file << "\n    " << e.what() << "\n";
    }
  }
}

}  // namespace

void add_list_command(CLI::App& app, int& status) {
  auto what = std::make_shared<std::string>();
  auto roots = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("list", "List fault kinds, injection points or scenarios.");
  cmd->add_option("what", *what, "faults | points | scenarios")
      ->required()
      ->check(CLI::IsMember({"faults", "points", "scenarios"}));
  cmd->add_option("paths", *roots, "for `scenarios`: where to look (default: scenarios/)");
  cmd->footer(
      "Examples:\n"
      "  ncclfi list faults\n"
      "  ncclfi list points\n"
      "  ncclfi list scenarios scenarios/cpu");
  cmd->callback([what, roots, &status] {
    status = kAllPassed;
    if (*what == "faults") {
      // The same text docs/faults.md contains (a unit test compares them).
      std::cout << fault_catalogue_markdown();
    } else if (*what == "points") {
      for (const auto& p : all_point_names()) std::cout << p << "\n";
    } else {
      try {
        // Without a path: the catalogue this ncclfi came with (build tree or install prefix), not the
        // working directory's.
        list_scenarios(roots->empty()
                           ? std::vector<std::string>{Installation::discover().data_dir + "/scenarios"}
                           : *roots);
      } catch (const ScenarioError& e) {
        std::cerr << e.what() << "\n";
        status = kBadInput;
      }
    }
  });
}

void add_report_command(CLI::App& app, int& status) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("report", "Re-render the reports of a run, a suite or a whole runs/ tree.");
  cmd->add_option("run_dir", *dir, "a run directory, runs/<scenario>/latest, or runs/")->required();
  cmd->footer(
      "Writes summary.json, junit.xml and report.html into RUN_DIR and prints the table.\n"
      "Examples:\n"
      "  ncclfi report runs/net-drop-recv-hang/latest\n"
      "  ncclfi report runs/");
  cmd->callback([dir, &status] {
    if (!std::filesystem::exists(*dir)) {
      std::cerr << "ncclfi report: " << *dir << ": no such directory\n";
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
      std::cout << harness::rerender_reports(*dir, isatty(STDOUT_FILENO) != 0);
      status = exit_status_for(records);
    } catch (const std::exception& e) {
      std::cerr << "ncclfi report: " << e.what() << "\n";
      status = kHarnessError;
    }
  });
}

void add_control_commands(CLI::App& app, int& status) {
  for (const bool arm : {true, false}) {
    auto dir = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto timeout_ms = std::make_shared<int>(2000);
    auto* cmd = app.add_subcommand(arm ? "arm" : "disarm",
                                   arm ? "Arm a fault of a running job (the plan needs \"control\": true)."
                                       : "Disarm a fault of a running job.");
    cmd->add_option("run_dir", *dir, "the run directory of the running job")
        ->required()
        ->check(CLI::ExistingDirectory);
    cmd->add_option("fault_id", *id, "the fault's id in the scenario")->required();
    cmd->add_option("--timeout-ms", *timeout_ms, "per-process wait for an answer")->capture_default_str();
    cmd->footer(std::string("Writes to the libfiu control FIFO of every live rank; dead ranks are skipped.\n"
                            "Example:\n  ncclfi ") +
                (arm ? "arm" : "disarm") + " runs/net-delay-armed-at-runtime/latest slow");
    cmd->callback([arm, dir, id, timeout_ms, &status] {
      const auto r = send_control(*dir, *id, arm, *timeout_ms);
      std::cout << (arm ? "armed " : "disarmed ") << *id << ": " << r.acknowledged << " acknowledged, "
                << r.skipped_dead << " dead skipped, " << r.timed_out << " timed out\n";
      status = r.acknowledged > 0 ? kAllPassed : kSomeFailed;
    });
  }
}

}  // namespace ncclfi::cli
