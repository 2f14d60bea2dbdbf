// `ncclfi diagnose`: the culprit of a failed NCCL job from its logs alone (harness/apps/diagnose/).
#include <iostream>

#include "atomic_file.h"
#include "commands.h"
#include "diagnosis.h"
#include "exit_status.h"

namespace ncclfi::cli {

void add_diagnose_command(CLI::App& app, int& status) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto json_path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "diagnose", "Name the culprit of a failed NCCL job (rank, host, site) from its logs alone.");
  cmd->add_option("paths", *paths,
                  "a run directory of ncclfi, a directory of any job's logs (read recursively), or log files")
      ->required();
  cmd->add_option("--json", *json_path, "also write the diagnosis as JSON to FILE");
  describe_values(*cmd, {{"paths", ValueKind::kFile, "PATH"}, {"--json", ValueKind::kFile, "FILE"}});
  cmd->footer(
      "Reads what the job printed (never a run's plan, events or verdict), classifies every line with the\n"
      "signature catalogue and decides, with the lines quoted as file:line: the first failure, the culprit\n"
      "ranks and hosts against those that only lost a peer, the likely site and symptom, a confidence and\n"
      "what would decide between the remaining sites. Heuristics: docs/diagnose.md.\n"
      "Exit status: 0 a diagnosis was made (a failure, or a run slower than its baselines), 1 the logs show\n"
      "no failure, 2 bad input.\n"
      "Examples:\n"
      "  ncclfi diagnose runs/net-drop-recv-hang/latest\n"
      "  ncclfi diagnose /shared/job-4242/logs/ --json diagnosis.json\n"
      "  ncclfi diagnose node1.log node2.log node2-kern.log");
  cmd->callback([paths, json_path, &status] {
    diagnose::InputSet inputs;
    try {
      inputs = diagnose::collect_inputs(*paths);
    } catch (const std::invalid_argument& e) {
      std::cerr << "ncclfi diagnose: " << e.what() << "\n";
      status = kBadInput;
      return;
    }
    if (inputs.files.empty()) {
      std::cerr << "ncclfi diagnose: no log files to read in " << paths->front()
                << (paths->size() > 1 ? " and the others" : "") << "\n";
      status = kBadInput;
      return;
    }
    const diagnose::Diagnosis d = diagnose::diagnose(inputs);
    std::cout << diagnose::diagnosis_text(d);
    if (!json_path->empty()) {
      try {
        // A log's bytes need not be UTF-8: invalid ones become U+FFFD in the JSON.
        harness::write_file_atomic(
            *json_path,
            diagnose::diagnosis_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
      } catch (const std::exception& e) {
        std::cerr << "ncclfi diagnose: " << e.what() << "\n";
        status = kHarnessError;
        return;
      }
    }
    status = d.failure || d.slow ? kAllPassed : kSomeFailed;
  });
}

}  // namespace ncclfi::cli
