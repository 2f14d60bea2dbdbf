// Console output: the live progress line, the final table and, under it, why each run that did not
// pass did not (its checks and reasons, and where its report is).
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "reports.h"

namespace ncclfi::harness {
namespace {

// Display width of UTF-8 text (counts code points; our text is ASCII plus the odd symbol).
size_t display_width(const std::string& s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& s, size_t width) {
  const size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string clip(const std::string& s, size_t width) {
  if (display_width(s) <= width) return s;
  if (width <= 3) return s.substr(0, width);
  return s.substr(0, width - 3) + "...";
}

class ConsoleReport : public Report {
 public:
  ConsoleReport(std::ostream& out, bool color) : out_(out), color_(color) {}
  void write(const Suite& suite) override { out_ << format_final_table(suite.records, color_); }

 private:
  std::ostream& out_;
  bool color_;
};

}  // namespace

std::unique_ptr<Report> make_console_report(std::ostream& out, bool color) {
  return std::make_unique<ConsoleReport>(out, color);
}

std::string format_run_line(const RunRecord& r, size_t index, size_t total) {
  std::string line = "[" + std::to_string(index) + "/" + std::to_string(total) + "] " + r.scenario + ": " +
                     std::string(to_string(run_status(r)));
  if (r.skipped) return line + " (" + r.skip_reason + ")";
  line += " (" + observed_summary(r.judgement) + ")";
  if (r.gpu.shared) line += " [" + r.gpu.placement + "; MPS: " + r.gpu.mps + "]";
  if (!r.harness_error.empty()) line += " harness error: " + r.harness_error;
  return line + "  " + r.run_dir;
}

std::string format_progress_line(const ProgressState& s, size_t width) {
  char head[64];
  std::snprintf(head, sizeof head, "[%zu/%zu] ", s.index, s.total);
  std::string line = head + s.scenario;
  if (!s.phase.empty()) line += "  " + s.phase;
  if (s.attempt > 0) line += "  attempt " + std::to_string(s.attempt + 1);
  if (s.ranks_total > 0)
    line += "  ranks " + std::to_string(s.ranks_running) + "/" + std::to_string(s.ranks_total);
  char times[64];
  if (s.deadline_s > 0) {
    std::snprintf(times, sizeof times, "  %.1fs/%.0fs", s.elapsed_s, s.deadline_s);
  } else {
    std::snprintf(times, sizeof times, "  %.1fs", s.elapsed_s);
  }
  line += times;
  if (s.injections > 0) line += "  injected " + std::to_string(s.injections);
  if (!s.detections.empty()) {
    std::string seen;
    for (const auto& d : s.detections) seen += (seen.empty() ? "" : ",") + d;
    line += "  detected: " + seen;
  }
  return clip(line, width);
}

std::string format_final_table(const std::vector<RunRecord>& records, bool color) {
  struct Row {
    std::string scenario, expected, observed, detection, status;
  };
  std::vector<Row> rows;
  rows.push_back({"scenario", "expected", "observed", "detection", "status"});
  constexpr size_t kColumn = 48;
  bool clipped = false;
  auto column = [&](const std::string& text) {
    clipped = clipped || display_width(text) > kColumn;
    return clip(text, kColumn);
  };
  for (const auto& r : records) {
    rows.push_back({r.scenario, column(expected_summary(r.expect)),
                    r.skipped ? "-" : column(observed_summary(r.judgement)),
                    r.skipped ? "-" : format_seconds(r.judgement.detection_s),
                    std::string(to_string(run_status(r)))});
  }
  size_t w[4] = {0, 0, 0, 0};
  for (const auto& row : rows) {
    w[0] = std::max(w[0], display_width(row.scenario));
    w[1] = std::max(w[1], display_width(row.expected));
    w[2] = std::max(w[2], display_width(row.observed));
    w[3] = std::max(w[3], display_width(row.detection));
  }
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::string status = row.status;
    if (color && i > 0) {
      const char* code = status == "pass"      ? "\033[32m"
                         : status == "fail"    ? "\033[31m"
                         : status == "skipped" ? "\033[2m"
                                               : "\033[33m";
      status = code + status + "\033[0m";
    }
    out += pad(row.scenario, w[0]) + "  " + pad(row.expected, w[1]) + "  " + pad(row.observed, w[2]) + "  " +
           pad(row.detection, w[3]) + "  " + status + "\n";
    if (i == 0) out += std::string(w[0] + w[1] + w[2] + w[3] + 8 + 7, '-') + "\n";
  }
  if (clipped) {
    out +=
        "(\"...\": clipped to fit; the whole text is in summary.json, in `--json` and, for a run that did "
        "not "
        "pass, below)\n";
  }
  for (const auto& r : records) {
    if (r.skipped) out += "skipped " + r.scenario + ": " + r.skip_reason + "\n";
  }
  // A job across hosts: which ranks ran where, so that "rank 5 detected" names a machine.
  for (const auto& r : records) {
    if (r.skipped) continue;
    const std::string hosts = rank_hosts_text(r.history);
    if (hosts.find(';') != std::string::npos) out += "hosts of " + r.scenario + ": " + hosts + "\n";
  }
  const std::string failures = format_failure_details(records);
  if (!failures.empty()) out += "\n" + failures;
  const std::string rates = format_pass_rates(pass_rates(records));
  if (!rates.empty()) out += "\n" + rates;
  return out + counts_text(count_statuses(records)) + "\n";
}

std::string format_failure_details(const std::vector<RunRecord>& records) {
  std::string out;
  for (const auto& r : records) {
    const RunStatus status = run_status(r);
    if (status == RunStatus::kPass || status == RunStatus::kSkipped) continue;
    std::string head(to_string(status));
    std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::toupper(c); });
    out += head + " " + r.scenario + "\n";
    out += "  expected: " + expected_summary(r.expect) + "\n";
    out += "  observed: " + observed_summary(r.judgement) + "\n";
    if (!r.harness_error.empty()) out += "  harness error: " + r.harness_error + "\n";
    if (const auto hosts = rank_hosts_text(r.history); !hosts.empty()) out += "  hosts: " + hosts + "\n";
    for (const auto& c : r.judgement.checks) {
      if (c.answer == Answer::kPass) continue;
      out += "  " + c.field + ": " + std::string(to_string(c.answer)) + ": " + c.reason + "\n";
    }
    if (!r.run_dir.empty()) out += "  report: " + r.run_dir + "/verdict.json\n";
  }
  return out.empty() ? out : "failures:\n" + out;
}

}  // namespace ncclfi::harness
