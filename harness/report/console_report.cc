// Console output: a line per run and the final table, fitted to the width (console_failures.cc: why each
// run that did not pass did not; console_progress.cc: the live progress line).
#include <algorithm>
#include <array>
#include <sstream>

#include "console_text.h"
#include "reports.h"
#include "run_names.h"

namespace ncclfi::harness {
std::string format_run_line(const RunRecord& r, size_t index, size_t total) {
  std::string line = "[" + std::to_string(index) + "/" + std::to_string(total) + "] " + r.scenario + ": " +
                     std::string(to_string(run_status(r)));
  if (r.skipped) return line + " (" + r.skip_reason + ")";
  line += " (" + observed_summary(r.judgement) + ")";
  if (r.gpu.shared) line += " [" + r.gpu.placement + "; MPS: " + r.gpu.mps + "]";
  if (!r.harness_error.empty()) line += " harness error: " + r.harness_error;
  return line + "  " + r.run_dir;
}

namespace {

// The table's columns: scenario, expected, observed, detection, status.
constexpr size_t kColumns = 5;
using Row = std::array<std::string, kColumns>;
constexpr size_t kExpected = 1, kObserved = 2;
constexpr size_t kNarrowest = 12;  // a clipped column keeps at least this much
constexpr size_t kGap = 2;

// Each column's width (0: left out) so that the table fits `limit` columns (0: no limit). Expected and
// observed give way first, the wider of the two first, down to kNarrowest; then expected is left out,
// then observed; the scenario's name is cut last.
std::array<size_t, kColumns> fit_columns(std::array<size_t, kColumns> w, size_t limit) {
  auto total = [&] {
    size_t sum = 0, shown = 0;
    for (size_t c : w) sum += c, shown += c > 0;
    return sum + kGap * (shown - 1);
  };
  if (limit == 0) return w;
  while (total() > limit) {
    size_t& wider = w[kExpected] >= w[kObserved] ? w[kExpected] : w[kObserved];
    if (wider > kNarrowest) {
      wider -= std::min(wider - kNarrowest, total() - limit);
    } else if (w[kExpected] > 0) {
      w[kExpected] = 0;
    } else if (w[kObserved] > 0) {
      w[kObserved] = 0;
    } else {
      w[0] = std::max<size_t>(8, w[0] - std::min(w[0], total() - limit));
      break;
    }
  }
  return w;
}

std::string colored(const std::string& status) {
  const char* code = status == "pass"      ? "\033[32m"
                     : status == "fail"    ? "\033[31m"
                     : status == "skipped" ? "\033[2m"
                                           : "\033[33m";
  return code + status + "\033[0m";
}

std::vector<Row> table_rows(const std::vector<RunRecord>& records) {
  std::vector<Row> rows{{"scenario", "expected", "observed", "detection", "status"}};
  const std::vector<std::string> names = run_names(records);  // NAME#K under --repeat
  for (size_t n = 0; n < records.size(); ++n) {
    const RunRecord& r = records[n];
    rows.push_back({names[n], expected_summary(r.expect), r.skipped ? "-" : observed_summary(r.judgement),
                    r.skipped ? "-" : format_seconds(r.judgement.detection_s),
                    std::string(to_string(run_status(r)))});
  }
  return rows;
}

// The table itself, and a note when text was cut or columns left out.
std::string table_text(const std::vector<RunRecord>& records, const ConsoleStyle& style) {
  const std::vector<Row> rows = table_rows(records);
  std::array<size_t, kColumns> natural{};
  for (const Row& row : rows) {
    for (size_t c = 0; c < kColumns; ++c) natural[c] = std::max(natural[c], display_width(row[c]));
  }
  const auto w = fit_columns(natural, style.width);
  std::string out;
  bool clipped = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (size_t c = 0; c < kColumns; ++c) {
      if (w[c] == 0) continue;
      clipped = clipped || display_width(rows[i][c]) > w[c];
      const std::string cell = c + 1 == kColumns ? rows[i][c] : pad(clip(rows[i][c], w[c]), w[c]);
      line += (line.empty() ? "" : std::string(kGap, ' ')) +
              (c + 1 == kColumns && style.color && i > 0 ? colored(cell) : cell);
    }
    out += line + "\n";
    if (i == 0) out += std::string(display_width(line), '-') + "\n";
  }
  std::string note;
  if (w[kExpected] == 0) note += "the expected column is left out to fit the width; ";
  if (w[kObserved] == 0) note += "the observed column is left out to fit the width; ";
  if (clipped) note += "\"...\": clipped to fit; ";
  if (note.empty()) return out;
  note =
      "(" + note + "the whole text is in summary.json, in `--json` and, for a run that did not pass, below)";
  return out + (style.width > 0 ? wrap(note, style.width) : note + "\n");
}

// A line of text under the table, wrapped to the width when there is one.
std::string line_of(const std::string& text, size_t width) {
  // Only a line that does not fit is re-spaced: the pass rates' columns stay aligned.
  return width > 0 && display_width(text) > width ? wrap(text, width, 4, 0) : text + "\n";
}

}  // namespace

std::string format_final_table(const std::vector<RunRecord>& records, const ConsoleStyle& style) {
  std::string out = table_text(records, style);
  for (const auto& r : records) {
    if (r.skipped) out += line_of("skipped " + r.scenario + ": " + r.skip_reason, style.width);
  }
  // A job across hosts: which ranks ran where, so that "rank 5 detected" names a machine.
  for (const auto& r : records) {
    if (r.skipped) continue;
    const std::string hosts = rank_hosts_text(r.history);
    if (hosts.find(';') != std::string::npos)
      out += line_of("hosts of " + r.scenario + ": " + hosts, style.width);
  }
  const std::string failures = format_failure_details(records, style);
  if (!failures.empty()) out += "\n" + failures;
  const std::string notes = format_notes(records, style);
  if (!notes.empty()) out += "\n" + notes;
  const std::string rates = format_pass_rates(pass_rates(records));
  if (!rates.empty()) out += "\n";
  std::istringstream rate_lines(rates);
  for (std::string line; std::getline(rate_lines, line);) out += line_of(line, style.width);
  return out + line_of(counts_text(count_statuses(records)), style.width);
}

}  // namespace ncclfi::harness
