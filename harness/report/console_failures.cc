// Under the final table: why each run that did not pass did not. Everything here is what the judge and
// the reports already hold (the judgement, the fault windows, the rank logs the history names); nothing
// is judged again.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "console_text.h"
#include "drill_report.h"
#include "log_diagnosis_text.h"
#include "log_tail.h"
#include "reports.h"
#include "run_names.h"
#include "text_format.h"

namespace ncclfi::harness {
namespace {

constexpr size_t kLogLines = 3;         // of the detecting rank's output
constexpr size_t kUnlimitedLine = 200;  // a log line's columns when the width is not limited

// One detail line, indented under its run, wrapped to the width when there is one. Its text may quote
// what a rank printed (evidence, reasons): control characters are written out.
std::string detail(const std::string& raw, size_t width) {
  const std::string text = terminal_safe(raw);
  return width > 0 ? wrap(text, width, 4, 2) : "  " + text + "\n";
}

// "drop1 on rank 1 (node1); slow on ranks 0, 2 (node1, node2)": each fault with the ranks and hosts its
// injections reached (the drill report's windows).
std::string faulted_text(const History& history) {
  std::map<std::string, std::pair<std::set<int>, std::set<std::string>>> reach;
  std::vector<std::string> order;
  for (const FaultWindowSpan& w : fault_windows(history)) {
    if (!reach.count(w.fault_id)) order.push_back(w.fault_id);
    auto& [ranks, hosts] = reach[w.fault_id];
    ranks.insert(w.ranks.begin(), w.ranks.end());
    hosts.insert(w.hosts.begin(), w.hosts.end());
  }
  std::string out;
  for (const auto& id : order) {
    const auto& [ranks, hosts] = reach[id];
    out += (out.empty() ? "" : "; ") + id + " on rank" + (ranks.size() == 1 ? " " : "s ") + join(ranks);
    if (!hosts.empty()) out += " (" + join(hosts) + ")";
  }
  return out.empty() ? "nothing was injected" : out;
}

// The detecting rank's last lines: its log file in the run directory, else (a job with node agents) what
// its host's agent sent; `where` names the source.
std::vector<std::string> detector_lines(const RunRecord& r, const Detection& d, std::string& where) {
  const History& h = r.history;
  const auto attempt = static_cast<size_t>(std::max(0, d.attempt));
  if (d.rank >= 0 && attempt < h.rank_logs.size() &&
      static_cast<size_t>(d.rank) < h.rank_logs[attempt].size()) {
    where = h.rank_logs[attempt][static_cast<size_t>(d.rank)];
    if (!where.empty()) {
      auto lines = last_log_lines(r.run_dir + "/" + where, kLogLines);
      if (!lines.empty()) return lines;
    }
  }
  for (const RankOutput& o : h.rank_output) {
    if (o.rank != d.rank || o.attempt != d.attempt || o.last_lines.empty()) continue;
    where = "sent by the agent of " + (o.host.empty() ? std::string("its host") : o.host);
    const size_t from = o.last_lines.size() > kLogLines ? o.last_lines.size() - kLogLines : 0;
    return {o.last_lines.begin() + static_cast<std::ptrdiff_t>(from), o.last_lines.end()};
  }
  return {};
}

// "first noticed by X on rank N (host), 2.50s after the first injection", then that rank's last lines.
std::string detection_text(const RunRecord& r, size_t width) {
  const Judgement& j = r.judgement;
  if (!j.first_detection) return detail("first noticed by: nothing noticed the fault", width);
  const Detection& d = *j.first_detection;
  std::string text = "first noticed by " + d.mechanism;
  if (d.rank >= 0) {
    const auto hosts = rank_hosts(r.history);
    const auto host = hosts.find(d.rank);
    const std::string name = host != hosts.end() ? host->second : d.host;
    text += " on rank " + std::to_string(d.rank) + (name.empty() ? "" : " (" + name + ")");
  }
  if (j.detection_s) text += ", " + format_seconds(j.detection_s) + " after the first injection";
  std::string where;
  const auto lines = detector_lines(r, d, where);
  if (lines.empty()) return detail(text, width);
  std::string out = detail(text + "; its last lines (" + where + "):", width);
  const size_t room = width > 6 ? width - 6 : kUnlimitedLine;
  for (const auto& line : lines) out += "    | " + clip(terminal_safe(line), room) + "\n";
  return out;
}

std::string run_failure(const RunRecord& r, const std::string& name, RunStatus status,
                        const ConsoleStyle& style) {
  std::string head(to_string(status));
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string out = style.width > 0 ? wrap(head + " " + name, style.width, 2, 0) : head + " " + name + "\n";
  out += detail("expected: " + expected_summary(r.expect), style.width);
  out += detail("observed: " + observed_summary(r.judgement), style.width);
  if (!r.harness_error.empty()) out += detail("harness error: " + r.harness_error, style.width);
  if (!r.history.events.empty() || !r.history.detections.empty()) {
    out += detail("faulted: " + faulted_text(r.history), style.width);
    out += detection_text(r, style.width);
  }
  if (const auto hosts = rank_hosts_text(r.history); !hosts.empty())
    out += detail("hosts: " + hosts, style.width);
  for (const auto& c : r.judgement.checks) {
    if (c.answer == Answer::kPass) continue;
    out += detail(c.field + ": " + std::string(to_string(c.answer)) + ": " + c.reason, style.width);
  }
  if (r.diagnosis) {
    const std::string agreement = diagnosis_agreement_text(*r.diagnosis);
    out += detail("from the logs alone: " + diagnosis_answer_text(*r.diagnosis) + "; truth: " +
                      diagnosis_truth_text(*r.diagnosis) + (agreement.empty() ? "" : " (" + agreement + ")"),
                  style.width);
  }
  if (!r.run_dir.empty()) out += detail("report: " + r.run_dir + "/verdict.json", style.width);
  if (!style.html_report.empty()) out += detail("html report: " + style.html_report, style.width);
  return out;
}

}  // namespace

std::string format_failure_details(const std::vector<RunRecord>& records, const ConsoleStyle& style) {
  std::string out;
  const std::vector<std::string> names = run_names(records);  // NAME#K under --repeat
  for (size_t n = 0; n < records.size(); ++n) {
    const RunStatus status = run_status(records[n]);
    if (status == RunStatus::kPass || status == RunStatus::kSkipped) continue;
    out += run_failure(records[n], names[n], status, style);
  }
  return out.empty() ? out : "failures:\n" + out;
}

std::string format_notes(const std::vector<RunRecord>& records, const ConsoleStyle& style) {
  std::string out;
  const std::vector<std::string> names = run_names(records);
  for (size_t n = 0; n < records.size(); ++n) {
    if (records[n].skipped || records[n].judgement.notes.empty()) continue;
    out += style.width > 0 ? wrap(names[n], style.width, 2, 0) : names[n] + "\n";
    for (const auto& note : records[n].judgement.notes) out += detail(note, style.width);
  }
  return out.empty() ? out : "notes:\n" + out;
}

}  // namespace ncclfi::harness
