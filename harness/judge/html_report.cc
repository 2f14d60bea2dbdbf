// report.html: one self-contained page (inline CSS, inline SVG, a few lines of inline JS; no URL is
// ever fetched). A summary table, then per scenario the checks and a per-rank timeline of ops,
// injections, detections, exits, launches/restarts and the deadline.
#include <algorithm>
#include <cstdio>
#include <map>

#include "report_text.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {

constexpr int kWidth = 960;  // timeline drawing width in px
constexpr int kLeft = 90;    // room for row labels
constexpr int kRowHeight = 22;
constexpr size_t kMaxOpTicks = 400;
constexpr int kMaxRankRows =
    4096;  // the schema's largest workload.ranks  // per rank; more are sampled evenly

const char* kStyle = R"CSS(
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d1d1f;background:#fff}
h1{font-size:22px}h2{font-size:17px;margin-top:36px;border-top:1px solid #ddd;padding-top:16px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f6}.pass{color:#137333;font-weight:600}.fail{color:#c5221f;font-weight:600}
.unknown,.error{color:#b06000;font-weight:600}.skipped{color:#777}
code,pre{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}pre{background:#f7f7f9;padding:8px;overflow:auto;max-height:300px}
.legend span{margin-right:14px}.muted{color:#666}svg{border:1px solid #eee;background:#fcfcfd}
)CSS";

const char* kScript = R"JS(
function ncclfiFilter(cb){document.querySelectorAll('tr.run').forEach(function(r){
r.style.display=(cb.checked&&r.dataset.verdict==='pass')?'none':'';});}
)JS";

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string verdict_class(const RunRecord& r) {
  return std::string(to_string(run_status(r)));
}

std::string anchor(size_t index) {
  return "run-" + std::to_string(index);
}

std::string timeline_svg(const History& h) {
  // Time span: the run's own bounds, widened to every event we draw.
  int64_t t0 = h.start_ns, t1 = h.end_ns;
  auto widen = [&](int64_t t) {
    if (t <= 0) return;
    if (t0 <= 0 || t < t0) t0 = t;
    if (t > t1) t1 = t;
  };
  for (const auto& e : h.events) widen(e.ts_ns);
  for (const auto& x : h.exits) widen(x.ts_ns);
  for (const auto& d : h.detections) widen(d.ts_ns);
  if (t0 <= 0 || t1 <= t0) return "<p class=\"muted\">No timed events to draw.</p>";
  // One row per rank of the job. Only a history without a world size sizes the rows by the ranks it
  // holds, and never past the largest job a scenario may name: a stated rank (from a verdict written
  // before events outside the job were refused) must not size the picture.
  int max_rank = h.world_size - 1;
  if (h.world_size <= 0) {
    for (const auto& e : h.events) max_rank = std::max(max_rank, e.rank);
    for (const auto& x : h.exits) max_rank = std::max(max_rank, x.rank);
    max_rank = std::min(max_rank, kMaxRankRows - 1);
  }
  const int rows = max_rank + 2;  // row 0: the job / harness (and ranks outside the job); row r+1: rank r
  const int height = rows * kRowHeight + 30;
  const double span = static_cast<double>(t1 - t0);
  auto x_of = [&](int64_t t) { return kLeft + static_cast<double>(t - t0) / span * (kWidth - kLeft - 10); };
  auto y_of = [&](int rank) {
    if (rank < -1 || rank > max_rank) rank = -1;
    return (rank + 1) * kRowHeight + 14;
  };
  auto secs = [&](int64_t t) { return "+" + fixed(static_cast<double>(t - t0) / 1e9, 3) + "s"; };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) +
                  "\" height=\"" + std::to_string(height) + "\" role=\"img\">\n";
  for (int r = -1; r <= max_rank; ++r) {
    const int y = y_of(r);
    s += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + std::to_string(y) + "\" x2=\"" +
         std::to_string(kWidth - 10) + "\" y2=\"" + std::to_string(y) + "\" stroke=\"#e3e3e8\"/>";
    s += "<text x=\"4\" y=\"" + std::to_string(y + 4) + "\" font-size=\"12\">" +
         (r < 0 ? std::string("job") : "rank " + std::to_string(r)) + "</text>\n";
  }
  // Time axis: 5 ticks.
  for (int i = 0; i <= 4; ++i) {
    const int64_t t = t0 + static_cast<int64_t>(span * i / 4);
    const double x = x_of(t);
    s += "<text x=\"" + fixed(x, 1) + "\" y=\"" + std::to_string(height - 6) +
         "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#666\">" + secs(t) + "</text>";
  }
  // Ops: sampled ticks per rank.
  std::map<int, std::vector<const HistoryEvent*>> ops;
  for (const auto& e : h.events) {
    if (e.event == "op" || e.event == "op_enqueue" || e.event == "step") ops[e.rank].push_back(&e);
  }
  for (const auto& [rank, list] : ops) {
    const size_t step = list.size() > kMaxOpTicks ? (list.size() + kMaxOpTicks - 1) / kMaxOpTicks : 1;
    for (size_t i = 0; i < list.size(); i += step) {
      const auto* e = list[i];
      const double x = x_of(e->ts_ns);
      const int y = y_of(rank);
      s += "<line x1=\"" + fixed(x, 1) + "\" y1=\"" + std::to_string(y - 5) + "\" x2=\"" + fixed(x, 1) +
           "\" y2=\"" + std::to_string(y + 5) + "\" stroke=\"#9aa5b1\"><title>" +
           xml_escape(e->event + " " + secs(e->ts_ns) + " " +
                      e->fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
           "</title></line>";
    }
  }
  s += "\n";
  // Harness actions: launches / restarts (blue dashed), deadline (red).
  for (const auto& e : h.events) {
    const double x = x_of(e.ts_ns);
    std::string color;
    if (e.source == "harness" && (e.event == "launch" || e.event == "restart")) color = "#1a73e8";
    if (e.source == "harness" && e.event == "deadline") color = "#c5221f";
    if (e.source == "log" && e.event == "restart") color = "#1a73e8";
    if (color.empty()) continue;
    s += "<line x1=\"" + fixed(x, 1) + "\" y1=\"8\" x2=\"" + fixed(x, 1) + "\" y2=\"" +
         std::to_string(height - 20) + "\" stroke=\"" + color + "\" stroke-dasharray=\"4 3\"><title>" +
         xml_escape(e.source + " " + e.event + " (attempt " + std::to_string(e.attempt + 1) + ") " +
                    secs(e.ts_ns)) +
         "</title></line>\n";
  }
  // Injections: red diamonds.
  for (const auto& e : h.events) {
    if (e.event != "inject") continue;
    const double x = x_of(e.ts_ns);
    const int y = y_of(e.rank);
    s += "<path d=\"M" + fixed(x, 1) + " " + std::to_string(y - 7) +
         " l6 7 l-6 7 l-6 -7 z\" fill=\"#d93025\"><title>" +
         xml_escape("inject " + secs(e.ts_ns) + " " +
                    e.fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
         "</title></path>\n";
  }
  // Detections: orange triangles.
  for (const auto& d : h.detections) {
    const double x = x_of(d.ts_ns);
    const int y = y_of(d.rank);
    s += "<path d=\"M" + fixed(x, 1) + " " + std::to_string(y - 7) +
         " l7 13 l-14 0 z\" fill=\"#f29900\"><title>" +
         xml_escape(d.mechanism + " " + secs(d.ts_ns) + ": " + d.evidence) + "</title></path>\n";
  }
  // Exits: squares, green for 0, dark red otherwise.
  for (const auto& x : h.exits) {
    const double px = x_of(x.ts_ns);
    const int y = y_of(x.rank);
    const bool ok = x.exit_code && *x.exit_code == 0 && !x.signal;
    std::string what = x.signal      ? "signal " + std::to_string(*x.signal)
                       : x.exit_code ? "exit " + std::to_string(*x.exit_code)
                                     : std::string("ended");
    if (x.killed_by_harness) what += " (killed by harness)";
    s += "<rect x=\"" + fixed(px - 5, 1) + "\" y=\"" + std::to_string(y - 5) +
         "\" width=\"10\" height=\"10\" fill=\"" + (ok ? "#188038" : "#8c1d18") + "\"><title>" +
         xml_escape("rank " + std::to_string(x.rank) + " attempt " + std::to_string(x.attempt + 1) + " " +
                    what + " " + secs(x.ts_ns)) +
         "</title></rect>\n";
  }
  s += "</svg>\n";
  return s;
}

std::string checks_table(const RunRecord& r) {
  if (r.judgement.checks.empty()) return "";
  std::string s = "<table><tr><th>check</th><th>answer</th><th>reason</th></tr>\n";
  for (const auto& c : r.judgement.checks) {
    const std::string a(to_string(c.answer));
    s += "<tr><td>" + xml_escape(c.field) + "</td><td class=\"" + a + "\">" + a + "</td><td>" +
         xml_escape(c.reason) + "</td></tr>\n";
  }
  return s + "</table>\n";
}

std::string events_table(const History& h) {
  constexpr size_t kMax = 300;
  std::string s = "<details><summary>timeline events (" + std::to_string(h.events.size()) +
                  ")</summary><table><tr><th>t</th><th>rank</th><th>attempt</th><th>source</th><th>event</"
                  "th><th>fields</th></tr>\n";
  size_t shown = 0;
  const int64_t t0 = h.start_ns > 0 ? h.start_ns : (h.events.empty() ? 0 : h.events.front().ts_ns);
  for (const auto& e : h.events) {
    if (e.event == "op" || e.event == "op_enqueue") continue;  // drawn, too many to list
    if (++shown > kMax) break;
    s += "<tr><td>" + fixed(static_cast<double>(e.ts_ns - t0) / 1e9, 3) + "</td><td>" +
         std::to_string(e.rank) + "</td><td>" + std::to_string(e.attempt + 1) + "</td><td>" +
         xml_escape(e.source) + "</td><td>" + xml_escape(e.event) + "</td><td><code>" +
         xml_escape(e.fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 300)) +
         "</code></td></tr>\n";
  }
  return s + "</table></details>\n";
}

}  // namespace

std::string render_html(const SuiteInfo& suite, const std::vector<RunRecord>& records) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                  xml_escape(suite.name) + " report</title>\n<style>" + kStyle + "</style>\n<script>" +
                  kScript + "</script></head><body>\n";
  h += "<h1>" + xml_escape(suite.name) + ": " + std::to_string(records.size()) + " scenario(s)</h1>\n";
  h += "<label><input type=\"checkbox\" onchange=\"ncclfiFilter(this)\"> hide passing runs</label>\n";
  h += "<table><tr><th>scenario</th><th>expected</th><th>observed</th><th>detection</th><th>restarts</"
       "th><th>status</th></tr>\n";
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    const std::string v = verdict_class(r);
    h += "<tr class=\"run\" data-verdict=\"" + v + "\"><td><a href=\"#" + anchor(i) + "\">" +
         xml_escape(r.scenario) + "</a></td><td>" + xml_escape(expected_summary(r.expect)) + "</td><td>" +
         xml_escape(r.skipped ? "skipped: " + r.skip_reason : observed_summary(r.judgement)) + "</td><td>" +
         xml_escape(r.skipped ? "-" : format_seconds(r.judgement.detection_s)) + "</td><td>" +
         (r.skipped ? "-" : std::to_string(r.judgement.restarts)) + "</td><td class=\"" + v + "\">" + v +
         "</td></tr>\n";
  }
  h += "</table>\n<p class=\"legend\"><span style=\"color:#d93025\">&#9670; injection</span>"
       "<span style=\"color:#f29900\">&#9650; detection</span><span style=\"color:#188038\">&#9632; exit "
       "0</span>"
       "<span style=\"color:#8c1d18\">&#9632; abnormal exit</span><span style=\"color:#9aa5b1\">| op</span>"
       "<span style=\"color:#1a73e8\">&#8942; launch / restart</span><span style=\"color:#c5221f\">&#8942; "
       "deadline</span></p>\n";
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    const std::string v = verdict_class(r);
    h += "<h2 id=\"" + anchor(i) + "\">" + xml_escape(r.scenario) + " &mdash; <span class=\"" + v + "\">" +
         v + "</span></h2>\n";
    if (!r.summary.empty()) h += "<p>" + xml_escape(r.summary) + "</p>\n";
    if (r.skipped) {
      h += "<p class=\"skipped\">Skipped: " + xml_escape(r.skip_reason) + "</p>\n";
      continue;
    }
    if (!r.harness_error.empty())
      h += "<p class=\"error\">Harness error: " + xml_escape(r.harness_error) + "</p>\n";
    h += "<p>Outcome <b>" + std::string(to_string(r.judgement.outcome)) + "</b>: " +
         xml_escape(r.judgement.outcome_reason) + ". Detection time " +
         xml_escape(format_seconds(r.judgement.detection_s)) + ", mechanisms: " +
         xml_escape(r.judgement.mechanisms.empty() ? std::string("none") : [&] {
           std::string m;
           for (const auto& x : r.judgement.mechanisms) m += (m.empty() ? "" : ", ") + x;
           return m;
         }()) +
         ". Run dir <code>" + xml_escape(r.run_dir) + "</code></p>\n";
    for (const auto& t : r.judgement.timing)
      h += "<p class=\"muted\">Timing: " + xml_escape(t.text()) + "</p>\n";
    h += checks_table(r);
    h += timeline_svg(r.history);
    h += events_table(r.history);
  }
  h += "</body></html>\n";
  return h;
}

namespace {

class HtmlReport : public FileReport {
 public:
  using FileReport::FileReport;

 protected:
  std::string render(const Suite& suite) const override { return render_html(suite.info, suite.records); }
};

}  // namespace

std::unique_ptr<Report> make_html_report(std::vector<std::string> paths) {
  return std::make_unique<HtmlReport>(std::move(paths));
}

}  // namespace ncclfi::harness
