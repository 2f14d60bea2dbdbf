#include "lab_gradebook.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "lab_grading.h"
#include "lab_key_dir.h"
#include "lab_progress.h"
#include "lab_ticket.h"
#include "lab_workspace.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

nlohmann::json empty_row(const std::string& workspace) {
  return {{"student", ""},
          {"lab", ""},
          {"variant", nullptr},
          {"attempts", nullptr},
          {"hints", nullptr},
          {"first_score", nullptr},
          {"best_score", nullptr},
          {"score", nullptr},
          {"right", nullptr},
          {"time_to_answer_s", nullptr},
          {"wrong_causes", nlohmann::json::array()},
          {"workspace", workspace},
          {"workspace_state", "ok"},
          {"progress", "error"}};
}

std::string key_text(const nlohmann::json& key, const char* field) {
  return key.contains(field) && key[field].is_string() ? key[field].get<std::string>() : std::string();
}

// Fills the counted part of `row` from the ticket's progress. A progress that does not verify is never
// counted: the row says why, and the file is left as it is.
void count_progress(nlohmann::json& row, const std::string& ticket_dir, const nlohmann::json& key,
                    const ProgressOwner& owner, const std::string& secret) {
  row["student"] = owner.student;
  row["lab"] = owner.lab;
  if (key.contains("variant") && key["variant"].is_number_integer()) row["variant"] = key["variant"];
  const ProgressRead read = read_progress(ticket_dir, owner, secret);
  row["progress"] = state_word(read.state);
  if (!read.verified()) {
    row["problem"] = read.problem;
    return;
  }
  const auto& attempts = read.doc["attempts"];
  const AttemptSummary s = summarize_attempts(attempts);
  row["attempts"] = s.attempts;
  row["hints"] = read.doc["hints_used"];
  row["first_score"] = s.attempts > 0 ? nlohmann::json(s.first_score) : nlohmann::json(nullptr);
  row["best_score"] = s.best_score;
  row["score"] = s.score;
  row["right"] = s.right;
  if (s.right) {
    row["time_to_answer_s"] =
        static_cast<double>(attempts[static_cast<size_t>(s.right_attempt)].value("ts_ns", int64_t{0}) -
                            key.value("started_ns", int64_t{0})) /
        1e9;
  }
  const std::string truth =
      key.contains("answer") && key["answer"].is_object() ? key["answer"].value("cause", "") : "";
  for (const auto& a : attempts) {
    const std::string cause = a.value("cause", "");
    if (cause != truth) row["wrong_causes"].push_back(cause);
  }
}

}  // namespace

nlohmann::json gradebook_row(const std::string& workspace, const std::string& key_dir) {
  nlohmann::json row = empty_row(workspace);
  try {
    std::optional<OpenTicket> t;
    try {
      t = open_ticket(workspace, key_dir, WorkspaceCheck::kSameStudent);
    } catch (const std::exception& e) {
      row["problem"] = e.what();
      try {  // who the workspace claims to be, to find the row by
        const Ticket claimed = read_ticket(workspace);
        row["student"] = claimed.student;
        row["lab"] = claimed.lab;
      } catch (const std::exception&) {
      }
      return row;
    }
    count_progress(row, t->key_path, t->key, t->owner, t->secret);
  } catch (const std::exception& e) {  // a key.json of the wrong shape: this row only
    row["progress"] = "error";
    row["problem"] = e.what();
  }
  return row;
}

std::vector<nlohmann::json> gradebook_rows_from_key_dir(const std::string& key_dir,
                                                        std::vector<std::string>* warnings) {
  const std::string secret = read_secret(key_dir);  // no secret: not a key directory, nothing to count
  std::vector<nlohmann::json> rows;
  for (const auto& entry : fs::directory_iterator(key_dir)) {
    std::error_code ec;
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    const std::string ticket_dir = entry.path().string();
    if (!fs::exists(entry.path() / "key.json", ec)) continue;  // not a ticket (a start that never ran)
    nlohmann::json row = empty_row("");
    try {
      const nlohmann::json key = read_key(ticket_dir);
      const ProgressOwner owner{key_text(key, "lab"), key_text(key, "student"),
                                entry.path().filename().string()};
      row["workspace"] = key_text(key, "workspace");
      count_progress(row, ticket_dir, key, owner, secret);
      // The workspace is only where the student works: its absence loses nothing the gradebook counts.
      const std::string ws = row["workspace"].get<std::string>();
      bool there = false;
      try {
        there = !ws.empty() && read_ticket(ws).ticket_id == owner.ticket_id;
      } catch (const std::exception&) {
      }
      if (!there) {
        row["workspace_state"] = "missing";
        if (warnings)
          warnings->push_back(ticket_dir + ": the workspace " + (ws.empty() ? "(none named)" : ws) +
                              " is gone or is another ticket's; the row is counted from the key directory");
      }
    } catch (const std::exception& e) {
      row["progress"] = "error";
      row["problem"] = e.what();
    }
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return std::make_pair(a["student"].get<std::string>(), a["lab"].get<std::string>()) <
           std::make_pair(b["student"].get<std::string>(), b["lab"].get<std::string>());
  });
  return rows;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string gradebook_csv(const std::vector<nlohmann::json>& rows) {
  std::ostringstream out;
  out << kGradebookHeader << "\n";
  auto number = [](const nlohmann::json& v) { return v.is_null() ? std::string() : v.dump(); };
  for (const auto& r : rows) {
    out << csv_field(r["student"]) << "," << csv_field(r["lab"]) << "," << number(r["variant"]) << ",";
    if (r["progress"] == "ok") {
      out << number(r["attempts"]) << "," << number(r["hints"]) << "," << number(r["first_score"]) << ","
          << number(r["best_score"]) << "," << number(r["score"]) << ","
          << (r["right"].get<bool>() ? "yes" : "no") << ",";
      if (!r["time_to_answer_s"].is_null())
        out << std::fixed << std::setprecision(1) << r["time_to_answer_s"].get<double>();
    } else {
      out << ",,,,,,";  // nothing of an unverified progress is counted
    }
    out << "," << csv_field(r["progress"]) << "," << csv_field(r.value("workspace_state", "ok")) << "\n";
  }
  return out.str();
}

nlohmann::json misconception_histogram(const std::vector<nlohmann::json>& rows) {
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const auto& r : rows) {
    if (r["progress"] != "ok") continue;
    for (const auto& cause : r["wrong_causes"])
      ++counts[{r["lab"].get<std::string>(), cause.get<std::string>()}];
  }
  std::vector<std::tuple<std::string, int, std::string>> sorted;
  for (const auto& [where, n] : counts) sorted.emplace_back(where.first, -n, where.second);
  std::sort(sorted.begin(), sorted.end());
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [lab, n, cause] : sorted) out.push_back({{"lab", lab}, {"cause", cause}, {"count", -n}});
  return out;
}

std::string misconception_csv(const nlohmann::json& histogram) {
  std::ostringstream out;
  out << "lab,cause,count\n";
  for (const auto& h : histogram)
    out << csv_field(h["lab"]) << "," << csv_field(h["cause"]) << "," << h["count"] << "\n";
  return out.str();
}

}  // namespace ncclfi::cli::lab
