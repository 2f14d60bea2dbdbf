// `ncclfi lab` for instructors (docs/labs.md): debrief, key, gradebook.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>

#include "cmd_lab.h"
#include "console_text.h"
#include "lab_debrief.h"
#include "lab_gradebook.h"
#include "lab_progress.h"
#include "lab_ticket.h"
#include "lab_workspace.h"
#include "log_diagnosis_text.h"
#include "ncclfi/bounded_input.h"
#include "reports.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using namespace ncclfi::cli::lab;

namespace {

// The run's history from its verdict.json: injections, detections and exits on one timeline.
void print_timeline(const std::string& run_dir) {
  std::string text;
  if (!read_regular_file((fs::path(run_dir) / "verdict.json").string(), 256 << 20, text).empty()) return;
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.contains("history")) return;
  const auto& h = doc["history"];
  const int64_t start = h.value("start_ns", int64_t{0});
  std::vector<std::pair<int64_t, std::string>> lines;
  std::map<std::string, int> injections;
  for (const auto& e : h.value("events", nlohmann::json::array())) {
    if (e.value("event", "") != "inject") continue;
    const auto& f = e.value("fields", nlohmann::json::object());
    const std::string id = f.value("fault_id", "?");
    if (injections[id]++ > 0) continue;
    lines.emplace_back(e.value("ts_ns", int64_t{0}), "injection: " + f.value("layer", "") + " " +
                                                         f.value("kind", "") + " on rank " +
                                                         std::to_string(e.value("rank", -1)) + " at " +
                                                         f.value("point", "") + " (fault " + id + ")");
  }
  for (const auto& d : h.value("detections", nlohmann::json::array())) {
    lines.emplace_back(d.value("ts_ns", int64_t{0}), "detection: " + d.value("mechanism", "") + " on rank " +
                                                         std::to_string(d.value("rank", -1)) + ": " +
                                                         d.value("evidence", "").substr(0, 120));
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& [ts, line] : lines) {
    std::cout << "  +" << std::fixed << std::setprecision(3) << static_cast<double>(ts - start) / 1e9
              << " s  " << line << "\n";
  }
  for (const auto& [id, n] : injections) std::cout << "  fault " << id << " fired " << n << " time(s)\n";
}

// What `ncclfi diagnose` made of the run's logs alone, beside the truth (kept in its verdict.json).
void print_log_diagnosis(const std::string& run_dir) {
  std::string text;
  if (!read_regular_file((fs::path(run_dir) / "verdict.json").string(), 256 << 20, text).empty()) return;
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.contains("diagnosis") || !doc["diagnosis"].is_object()) return;
  const harness::RunRecord record = harness::run_record_from_json(doc);
  if (!record.diagnosis) return;
  const std::string agreement = harness::diagnosis_agreement_text(*record.diagnosis);
  std::cout << "  from the logs alone (ncclfi diagnose): "
            << harness::diagnosis_answer_text(*record.diagnosis)
            << (agreement.empty() ? "" : "; it " + agreement + " with the truth") << "\n";
  if (!record.diagnosis->first_failure.empty())
    std::cout << "  first failure in the logs: " << harness::terminal_safe(record.diagnosis->first_failure)
              << "\n";
}

// The student's progress as the debrief tells it: only a verified file is counted.
void print_progress(const OpenTicket& t) {
  const ProgressRead read = read_progress(t.key_path, t.owner, t.secret);
  if (!read.verified()) {
    std::cout << "\nProgress: " << state_word(read.state) << ", not counted: " << read.problem << "\n";
    return;
  }
  int best = 0;
  bool right = false;
  for (const auto& a : read.doc["attempts"]) {
    best = std::max(best, a["grade"]["score"].get<int>());
    right = right || a["grade"]["right"].get<bool>();
  }
  std::cout << "\nProgress: " << read.doc["attempts"].size() << " attempt(s), "
            << read.doc["hints_used"].get<int>() << " hint(s), best score " << best
            << (right ? ", answered right" : ", not answered right yet") << "\n";
}

int cmd_debrief(const std::string& workspace, const std::string& key_dir) {
  const OpenTicket t = open_ticket(workspace, key_dir, WorkspaceCheck::kSameStudent);
  const auto& doc = t.key;
  const auto& answer = doc.at("answer");
  std::cout << "# " << doc.value("title", "") << " (" << doc.value("lab", "") << ", variant "
            << doc.value("variant", 0) << ": " << doc.at("values").dump() << ")\n\nThe truth: cause "
            << answer.value("cause", "");
  if (answer.contains("ranks") && !answer["ranks"].is_null())
    std::cout << ", rank(s) " << answer["ranks"].dump();
  if (answer.contains("details") && !answer["details"].empty()) std::cout << ", " << answer["details"].dump();
  std::cout << "\n\n" << doc.value("explanation", "") << "\n\nTimeline:\n";
  for (const auto& run : doc.value("runs", nlohmann::json::array())) {
    std::cout << " " << fs::path(run.get<std::string>()).parent_path().filename().string() << ":\n";
    print_timeline(run.get<std::string>());
    print_log_diagnosis(run.get<std::string>());
  }
  std::cout << "\nThe evidence in the workspace:\n";
  for (const auto& e : doc.value("evidence", nlohmann::json::array()))
    std::cout << "  - " << e.get<std::string>() << "\n";
  print_progress(t);
  return kAllPassed;
}

int cmd_key(const std::string& workspace, const std::string& key_dir) {
  const OpenTicket t = open_ticket(workspace, key_dir, WorkspaceCheck::kSameStudent);
  auto doc = t.key;
  const ProgressRead read = read_progress(t.key_path, t.owner, t.secret);
  doc["progress"] =
      read.verified() ? read.doc : nlohmann::json(nullptr);  // the file itself stays as evidence
  doc["progress_check"] = state_word(read.state);
  if (!read.verified()) doc["progress_problem"] = read.problem;
  std::cout << doc.dump(2) << "\n";
  return kAllPassed;
}

// Exit 0 when every row's progress verified, 1 when some did not (their rows say which; stderr why).
// Without workspaces, every ticket of the key directory (lab_gradebook.h); a workspace that is gone
// is a warning, never a missing row.
int cmd_gradebook(const std::vector<std::string>& workspaces, const std::string& key_dir, bool as_json,
                  bool misconceptions) {
  std::vector<nlohmann::json> rows;
  if (workspaces.empty()) {
    std::vector<std::string> warnings;
    rows = gradebook_rows_from_key_dir(key_dir, &warnings);
    for (const auto& w : warnings) std::cerr << "ncclfi lab gradebook: warning: " << w << "\n";
  } else {
    for (const auto& ws : workspaces) rows.push_back(gradebook_row(ws, key_dir));
  }
  bool all_verified = true;
  for (const auto& r : rows) {
    if (r["progress"] == "ok") continue;
    all_verified = false;
    std::cerr << "ncclfi lab gradebook: "
              << (r["workspace"].get<std::string>().empty() ? r["student"].get<std::string>()
                                                            : r["workspace"].get<std::string>())
              << ": not counted: " << r.value("problem", std::string("?")) << "\n";
  }
  if (misconceptions) {
    const nlohmann::json histogram = misconception_histogram(rows);
    std::cout << (as_json ? histogram.dump(2) + "\n" : misconception_csv(histogram));
  } else {
    std::cout << (as_json ? nlohmann::json(rows).dump(2) + "\n" : gradebook_csv(rows));
  }
  return all_verified ? kAllPassed : kSomeFailed;
}

}  // namespace

void add_instructor_commands(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status) {
  auto* debrief = lab.add_subcommand(
      "debrief",
      "Student: once the answer is final, the answer and the lines of the workspace that show it. "
      "Instructor (--key-dir): the truth, the timeline with the injection, and the evidence.");
  debrief->add_option("workspace", args->workspace, "the workspace")->required();
  debrief->add_option("--key-dir", args->key_dir, "the key directory (the instructor's debrief)");
  debrief->add_option("--server", args->server, "the lab service (default: the one the workspace came from)");
  describe_values(*debrief, {{"workspace", ValueKind::kDirectory, "WORKSPACE"},
                             {"--key-dir", ValueKind::kDirectory, "DIR"},
                             {"--server", ValueKind::kFile, "SOCKET"}});
  debrief->callback([args, &status] {
    guarded(status, [&] {
      if (!args->key_dir.empty()) return cmd_debrief(args->workspace, args->key_dir);
      const std::string server = service_of_workspace(*args);
      return server.empty() ? cmd_student_debrief(args->workspace)
                            : ask_service_about_ticket(*args, server, "debrief");
    });
  });

  auto* key = lab.add_subcommand("key", "Instructor: the truth of a workspace as JSON.");
  key->add_option("workspace", args->workspace, "the workspace")->required();
  key->add_option("--key-dir", args->key_dir, "the key directory")->required();
  describe_values(
      *key, {{"workspace", ValueKind::kDirectory, "WORKSPACE"}, {"--key-dir", ValueKind::kDirectory, "DIR"}});
  key->callback(
      [args, &status] { guarded(status, [&] { return cmd_key(args->workspace, args->key_dir); }); });

  auto* book = lab.add_subcommand(
      "gradebook", "Instructor: one CSV (or JSON) line per student and lab, from the key directory.");
  book->add_option("workspaces", args->workspaces,
                   "only these workspaces (default: every ticket of the key directory)");
  book->add_option("--key-dir", args->key_dir, "the key directory")->required();
  book->add_flag("--json", args->as_json, "JSON instead of CSV");
  book->add_flag("--misconceptions", args->misconceptions,
                 "instead of the rows: how often each wrong cause was given per lab (lab,cause,count)");
  describe_values(*book, {{"workspaces", ValueKind::kDirectory, "WORKSPACE"},
                          {"--key-dir", ValueKind::kDirectory, "DIR"}});
  book->callback([args, &status] {
    guarded(status, [&] {
      return cmd_gradebook(args->workspaces, args->key_dir, args->as_json, args->misconceptions);
    });
  });
}

}  // namespace ncclfi::cli
