// The drill report (drill_report.h).
#include "drill_report.h"
#include "log_diagnosis_text.h"
#include "text_format.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "job_ranks.h"
#include "report_text.h"

namespace ncclfi::harness {
namespace {

// The last lines of each rank's output the report shows: what a postmortem quotes, not a log.
constexpr size_t kDrillOutputLines = 5;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string field_text(const nlohmann::json& fields, const char* key) {
  const auto it = fields.find(key);
  if (it == fields.end()) return "";
  return it->is_string() ? it->get<std::string>()
                         : it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string clip(std::string text, size_t max) {
  if (text.size() > max) text = text.substr(0, max - 3) + "...";
  return text;
}

std::string exit_text(const RankExit& x) {
  std::string text = x.signal      ? "signal " + std::to_string(*x.signal)
                     : x.exit_code ? "exit " + std::to_string(*x.exit_code)
                                   : std::string("ended");
  if (x.killed_by_harness) text += " (torn down by the harness)";
  return text;
}

struct Recovery {
  std::optional<double> since_injection_s, since_last_fault_s;
  std::string text;
};

// Recovered: the last attempt ended with every process exiting 0, and the job made progress (an op, a step,
// or `done`) after the last fault window ended. Measured from the first injection and from that end.
Recovery recovery(const RunRecord& r, const std::vector<FaultWindowSpan>& windows) {
  Recovery rec;
  const History& h = r.history;
  if (!r.judgement.first_injection_ns) {
    rec.text = "no fault was injected: nothing to recover from";
    return rec;
  }
  const int last_attempt = std::max(0, h.attempts - 1);
  std::vector<const RankExit*> last_exits;
  for (const auto& x : h.exits)
    if (x.attempt == last_attempt) last_exits.push_back(&x);
  const auto bad = std::find_if(last_exits.begin(), last_exits.end(), [](const RankExit* x) {
    return x->signal.has_value() || !x->exit_code || *x->exit_code != 0;
  });
  if (last_exits.empty() || bad != last_exits.end()) {
    rec.text =
        "not recovered: the last attempt (" + std::to_string(last_attempt + 1) + " of " +
        std::to_string(h.attempts) + ") did not complete" +
        (bad != last_exits.end() ? " (rank " + std::to_string((*bad)->rank) + ": " + exit_text(**bad) + ")"
                                 : std::string(""));
    return rec;
  }
  int64_t last_fault = *r.judgement.first_injection_ns;
  for (const auto& w : windows) last_fault = std::max(last_fault, w.end_ns);
  for (const auto& e : h.events) {
    if (e.attempt != last_attempt || e.ts_ns <= last_fault) continue;
    if (e.event != "op" && e.event != "step" && e.event != "done") continue;
    rec.since_injection_s = static_cast<double>(e.ts_ns - *r.judgement.first_injection_ns) / 1e9;
    rec.since_last_fault_s = static_cast<double>(e.ts_ns - last_fault) / 1e9;
    rec.text = "recovered: rank " + std::to_string(e.rank) + " made progress (" + e.event + ") at +" +
               fixed(*rec.since_injection_s, 3) + " s, " + fixed(*rec.since_last_fault_s, 3) +
               " s after the last fault window ended; attempt " + std::to_string(last_attempt + 1) + " of " +
               std::to_string(h.attempts) + " completed";
    return rec;
  }
  rec.text =
      "the last attempt completed, but no progress (op, step, done) was recorded after the last fault "
      "window ended";
  return rec;
}

std::string md_cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::vector<FaultWindowSpan> fault_windows(const History& h) {
  using Key = std::tuple<std::string, int, uint64_t>;
  std::map<Key, FaultWindowSpan> spans;
  for (const auto& e : h.events) {
    if (e.event != "inject" || e.ts_ns <= 0) continue;
    const uint64_t window = e.fields.value("window", uint64_t{0});
    FaultWindowSpan& w = spans[{field_text(e.fields, "fault_id"), e.attempt, window}];
    if (w.firings == 0) {
      w.fault_id = field_text(e.fields, "fault_id");
      w.kind = field_text(e.fields, "kind");
      w.layer = field_text(e.fields, "layer");
      w.attempt = e.attempt;
      w.window = window;
      w.start_ns = e.ts_ns;
    }
    w.start_ns = std::min(w.start_ns, e.ts_ns);
    if (!w.healed) w.end_ns = std::max(w.end_ns, e.ts_ns);
    ++w.firings;
    w.ranks.insert(e.rank);
    if (!e.host.empty()) w.hosts.insert(e.host);
  }
  for (const auto& e : h.events) {
    if (e.event != "heal" || e.ts_ns <= 0) continue;
    const auto it =
        spans.find({field_text(e.fields, "fault_id"), e.attempt, e.fields.value("window", uint64_t{0})});
    if (it == spans.end()) continue;
    it->second.end_ns =
        it->second.healed ? std::max(it->second.end_ns, e.ts_ns) : std::max(it->second.start_ns, e.ts_ns);
    it->second.healed = true;
  }
  std::vector<FaultWindowSpan> out;
  for (auto& [_, w] : spans) out.push_back(std::move(w));
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return out;
}

namespace {

// A moment as the report gives it: seconds from `zero` (the first injection, else the start).
std::string since(int64_t t, int64_t zero) {
  const double s = static_cast<double>(t - zero) / 1e9;
  return (s >= 0 ? "+" : "") + fixed(s, 3) + " s";
}

std::vector<std::pair<std::string, std::string>> drill_facts(const RunRecord& r, const std::string& status) {
  const History& h = r.history;
  const Judgement& j = r.judgement;
  std::vector<std::pair<std::string, std::string>> facts = {
      {"what", r.summary},
      {"run directory", r.run_dir},
      {"started", utc_time_text(h.start_ns, true)},
      {"duration", fixed(static_cast<double>(h.end_ns - h.start_ns) / 1e9, 1) + " s, " +
                       std::to_string(h.attempts) + " attempt(s), " + std::to_string(job_ranks(h).size()) +
                       " rank(s)"},
      {"first injection", j.first_injection_ns ? utc_time_text(*j.first_injection_ns, true) : "none"},
      {"expected", expected_summary(r.expect)},
      {"observed", r.skipped ? "skipped: " + r.skip_reason : observed_summary(j)},
      {"verdict", status}};
  if (!r.harness_error.empty()) facts.emplace_back("harness", r.harness_error);
  return facts;
}

// The hosts that refused to inject, a sentence each.
std::string refusals_text(const History& h) {
  std::string text;
  for (const auto& e : h.events) {
    if (e.event == "injection_refused") {
      // A front end names the list (`allowed`); a node's agent says why (`why`) and what it refused.
      const std::string why = e.fields.contains("why")
                                  ? field_text(e.fields, "why")
                                  : "not in the allowed hosts (" + field_text(e.fields, "allowed") + ")";
      const std::string action = e.fields.contains("action") ? field_text(e.fields, "action") + ", " : "";
      const std::string host = e.fields.contains("host") ? field_text(e.fields, "host") : e.host;
      text += " Host " + host + " refused to inject (rank " + std::to_string(e.rank) + ", " + action +
              field_text(e.fields, "layer") + " layer): " + why + ".";
    }
  }
  return text;
}

DrillSection injected_section(const History& h, const std::vector<FaultWindowSpan>& windows, int64_t zero) {
  DrillSection injected{
      "What was injected, where and when",
      "Times are seconds from the first injection. A window ends at its heal (the fault's "
      "duration_s) or, without one, at its last injection.",
      {{"fault", "kind", "host", "rank(s)", "attempt", "window", "from", "to", "healed", "firings"}, {}}};
  for (const auto& w : windows) {
    injected.table.rows.push_back(
        {w.fault_id, w.layer + " " + w.kind, join(w.hosts), join(w.ranks), std::to_string(w.attempt + 1),
         w.window == 0 ? "-" : std::to_string(w.window), since(w.start_ns, zero), since(w.end_ns, zero),
         w.healed ? "yes" : "no", std::to_string(w.firings)});
  }
  if (windows.empty()) injected.text = "Nothing was injected.";
  injected.text += refusals_text(h);
  return injected;
}

// One rank's row: the faults that hit it, its first detection after the first injection, its exits.
std::vector<std::string> rank_row(const RunRecord& r, int rank, const std::vector<FaultWindowSpan>& windows,
                                  const std::map<int, std::string>& hosts, int64_t zero) {
  const History& h = r.history;
  const Judgement& j = r.judgement;
  std::set<std::string> faults;
  for (const auto& w : windows)
    if (w.ranks.count(rank)) faults.insert(w.fault_id);
  const Detection* first = nullptr;
  int count = 0;
  for (const auto& d : h.detections) {
    if (d.rank != rank) continue;
    ++count;
    if (j.first_injection_ns && d.ts_ns < *j.first_injection_ns) continue;
    if (first == nullptr || d.ts_ns < first->ts_ns) first = &d;
  }
  std::string exits;
  for (const auto& x : h.exits) {
    if (x.rank == rank)
      exits += (exits.empty() ? "" : "; ") + std::string("attempt ") + std::to_string(x.attempt + 1) + ": " +
               exit_text(x);
  }
  const auto host = hosts.find(rank);
  return {std::to_string(rank),
          host != hosts.end() ? host->second : "-",
          faults.empty() ? "-" : join(faults),
          first != nullptr
              ? first->mechanism + " at " + since(first->ts_ns, zero) + ": " + clip(first->evidence, 120)
              : "nothing",
          std::to_string(count),
          exits.empty() ? "-" : exits};
}

DrillSection ranks_section(const RunRecord& r, const std::vector<FaultWindowSpan>& windows,
                           const std::map<int, std::string>& hosts, int64_t zero) {
  const History& h = r.history;
  DrillSection ranks{
      "What each rank saw",
      "",
      {{"rank", "host", "injected", "first detection after the fault", "detections", "exit"}, {}}};
  for (int rank : job_ranks(h)) ranks.table.rows.push_back(rank_row(r, rank, windows, hosts, zero));
  bool launcher_exits = false;
  for (const auto& x : h.exits) launcher_exits = launcher_exits || x.rank < 0;
  if (launcher_exits) ranks.text = "The launcher's own exit is the job's (rank -1 below the ranks).";
  return ranks;
}

// With node agents: the end of each rank's output as its host's agent sent it (the last attempt's).
DrillSection output_section(const History& h) {
  DrillSection output{"The ranks' last output",
                      "The last lines each rank printed, as its host's agent sent them (at most " +
                          std::to_string(kDrillOutputLines) +
                          " here; verdict.json keeps more). \"Not sent\" counts lines over the node's "
                          "byte budget or its spool's cap.",
                      {{"rank", "host", "attempt", "last lines", "lines", "not sent"}, {}}};
  for (const auto& o : h.rank_output) {
    std::string last;
    const size_t from = o.last_lines.size() > kDrillOutputLines ? o.last_lines.size() - kDrillOutputLines : 0;
    for (size_t i = from; i < o.last_lines.size(); ++i)
      last += (last.empty() ? "" : " / ") + clip(o.last_lines[i], 160);
    output.table.rows.push_back({std::to_string(o.rank), o.host.empty() ? "-" : o.host,
                                 std::to_string(o.attempt + 1), last.empty() ? "-" : last,
                                 std::to_string(o.lines), std::to_string(o.dropped + o.skipped_lines)});
  }
  return output;
}

DrillSection detection_section(const Judgement& j, const std::map<int, std::string>& hosts) {
  DrillSection detection{"Detection", "", {}};
  if (j.first_detection) {
    const Detection& d = *j.first_detection;
    const auto host = hosts.find(d.rank);  // the rank's own host (a detection from a log line has none)
    detection.text = "First detection: rank " + std::to_string(d.rank) +
                     (host != hosts.end() ? " on " + host->second : std::string()) + " by " + d.mechanism +
                     ", " + format_seconds(j.detection_s) +
                     " after the first injection: " + clip(d.evidence, 200);
  } else {
    detection.text = "No detection after the first injection.";
  }
  return detection;
}

DrillSection verdicts_section(const Judgement& j) {
  DrillSection verdicts{"Verdict per expectation", "", {{"check", "verdict", "reason"}, {}}};
  for (const auto& c : j.checks)
    verdicts.table.rows.push_back({c.field, std::string(to_string(c.answer)), c.reason});
  return verdicts;
}

DrillSection controls_section(const History& h, int64_t zero) {
  DrillSection controls{"Control actions", "", {{"time", "action", "fault", "by", "acknowledged"}, {}}};
  for (const auto& e : h.events) {
    if (e.event != "control") continue;
    controls.table.rows.push_back({since(e.ts_ns, zero), field_text(e.fields, "action"),
                                   field_text(e.fields, "fault_id"), field_text(e.fields, "by"),
                                   field_text(e.fields, "acknowledged")});
  }
  return controls;
}

// What `ncclfi diagnose` makes of the logs alone, beside what the harness knows: on a real cluster the
// logs are all there is.
DrillSection diagnosis_section(const LogDiagnosis& d) {
  std::string text =
      "What `ncclfi diagnose` names from the ranks' logs alone (no plan, no injection records), "
      "beside the truth: " +
      diagnosis_answer_text(d) + ".";
  if (const std::string agreement = diagnosis_agreement_text(d); !agreement.empty())
    text += " It " + agreement + ".";
  if (!d.first_failure.empty()) text += " First failure in the logs: `" + d.first_failure + "`.";
  return {"Diagnosis from the logs alone",
          text,
          {{"", "from the logs alone", "the truth", "agrees"}, diagnosis_rows(d)}};
}

}  // namespace

DrillReport make_drill_report(const RunRecord& r) {
  const History& h = r.history;
  DrillReport report;
  const std::string status(to_string(run_status(r)));
  report.title = "Drill report: " + r.scenario + " (" + status + ")";
  report.facts = drill_facts(r, status);
  const int64_t zero = r.judgement.first_injection_ns.value_or(h.start_ns);
  const auto windows = fault_windows(h);
  const auto hosts = rank_hosts(h);
  report.sections.push_back(injected_section(h, windows, zero));
  report.sections.push_back(ranks_section(r, windows, hosts, zero));
  if (!h.rank_output.empty()) report.sections.push_back(output_section(h));
  report.sections.push_back(detection_section(r.judgement, hosts));
  report.sections.push_back({"Recovery", recovery(r, windows).text + ".", {}});
  report.sections.push_back(verdicts_section(r.judgement));
  DrillSection controls = controls_section(h, zero);
  if (!controls.table.rows.empty()) report.sections.push_back(std::move(controls));
  if (r.diagnosis) report.sections.push_back(diagnosis_section(*r.diagnosis));
  return report;
}

std::string drill_report_markdown(const RunRecord& record) {
  const DrillReport report = make_drill_report(record);
  std::string md = "## " + report.title + "\n\n| | |\n| --- | --- |\n";
  for (const auto& [k, v] : report.facts) md += "| " + md_cell(k) + " | " + md_cell(v) + " |\n";
  for (const auto& s : report.sections) {
    md += "\n### " + s.heading + "\n\n";
    if (!s.text.empty()) md += s.text + "\n\n";
    if (s.table.headers.empty() || s.table.rows.empty()) continue;
    md += "|";
    for (const auto& h : s.table.headers) md += " " + md_cell(h) + " |";
    md += "\n|";
    for (size_t i = 0; i < s.table.headers.size(); ++i) md += " --- |";
    md += "\n";
    for (const auto& row : s.table.rows) {
      md += "|";
      for (const auto& cell : row) md += " " + md_cell(cell) + " |";
      md += "\n";
    }
  }
  return md;
}

std::string drill_report_html(const RunRecord& record) {
  const DrillReport report = make_drill_report(record);
  std::string h = "<details class=\"drill-report\"><summary>drill report</summary>\n<table>";
  for (const auto& [k, v] : report.facts)
    h += "<tr><th>" + xml_escape(k) + "</th><td>" + xml_escape(v) + "</td></tr>";
  h += "</table>\n";
  for (const auto& s : report.sections) {
    h += "<h4>" + xml_escape(s.heading) + "</h4>\n";
    if (!s.text.empty()) h += "<p>" + xml_escape(s.text) + "</p>\n";
    if (s.table.headers.empty() || s.table.rows.empty()) continue;
    h += "<table><tr>";
    for (const auto& c : s.table.headers) h += "<th>" + xml_escape(c) + "</th>";
    h += "</tr>\n";
    for (const auto& row : s.table.rows) {
      h += "<tr>";
      for (const auto& c : row) h += "<td>" + xml_escape(c) + "</td>";
      h += "</tr>\n";
    }
    h += "</table>\n";
  }
  return h + "</details>\n";
}

}  // namespace ncclfi::harness
