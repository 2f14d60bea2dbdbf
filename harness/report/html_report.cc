// report.html: one self-contained page (inline CSS, inline SVG, a few lines of inline JS; no URL is
// ever fetched). A summary table, then per scenario the checks and its timeline (html_timeline.cc).
#include <algorithm>
#include <cstdio>
#include <map>

#include "drill_report.h"
#include "html_timeline.h"
#include "report_spec.h"
#include "report_text.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {

const char* kStyle = R"CSS(
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d1d1f;background:#fff}
h1{font-size:22px}h2{font-size:17px;margin-top:36px;border-top:1px solid #ddd;padding-top:16px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f6}.pass{color:#137333;font-weight:600}.fail{color:#c5221f;font-weight:600}
.unknown,.error{color:#b06000;font-weight:600}.skipped{color:#777}
code,pre{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}pre{background:#f7f7f9;padding:8px;overflow:auto;max-height:300px}
.legend span{margin-right:14px}.muted{color:#666}svg{border:1px solid #eee;background:#fcfcfd}
svg.timeline{display:block;width:100%;height:auto}.timeline-header{margin:8px 0;color:#333}
.timeline-header .fact{margin-right:16px;white-space:nowrap}
)CSS";

// The page's script: the pass filter and the zoom to the fault window. When it has run it marks the
// page (data-ncclfi-ready on <html>), and an error marks it too (data-ncclfi-error), so a headless
// browser can tell that it ran and ran cleanly. Opening the page with #zoom zooms every timeline.
// Zoomed, a timeline keeps the height it had and stretches its x range over the width; the whole run
// keeps its proportions again. Opened with ?layout-check, the page measures every text of every
// timeline (getBBox) and writes on <html> how many there are and how many stick out of their picture
// (data-layout-texts, data-layout-overflow; each such text gets data-overflow): what a test asserts
// on, since only a browser knows the fonts' widths.
const char* kScript = R"JS(
function ncclfiFilter(cb){document.querySelectorAll('tr.run').forEach(function(r){
r.style.display=(cb.checked&&r.dataset.verdict==='pass')?'none':'';});}
function ncclfiZoom(id,on){var svg=document.getElementById(id);if(!svg)return;
var full=svg.dataset.viewbox.split(' ').map(Number),z=svg.dataset.zoom.split(' ').map(Number);
if(on){svg.style.height=svg.getBoundingClientRect().height+'px';svg.setAttribute('preserveAspectRatio','none');
svg.setAttribute('viewBox',z[0]+' 0 '+(z[1]-z[0])+' '+full[3]);}
else{svg.style.height='auto';svg.removeAttribute('preserveAspectRatio');svg.setAttribute('viewBox',full.join(' '));}
svg.dataset.zoomed=on?'1':'0';}
function ncclfiLayoutCheck(){var texts=0,over=0;document.querySelectorAll('svg.timeline').forEach(function(svg){
var v=svg.viewBox.baseVal;svg.querySelectorAll('text').forEach(function(t){var b=t.getBBox();texts++;
if(b.x<v.x-0.5||b.y<v.y-0.5||b.x+b.width>v.x+v.width+0.5||b.y+b.height>v.y+v.height+0.5){over++;
t.setAttribute('data-overflow',[b.x,b.y,b.width,b.height].map(Math.round).join(' '));}});});
var h=document.documentElement;h.setAttribute('data-layout-texts',texts);h.setAttribute('data-layout-overflow',over);}
window.addEventListener('error',function(e){document.documentElement.setAttribute('data-ncclfi-error',String(e.message));});
document.addEventListener('DOMContentLoaded',function(){
if(location.search.indexOf('layout-check')>=0)ncclfiLayoutCheck();
if(location.hash==='#zoom'){document.querySelectorAll('svg.timeline').forEach(function(s){ncclfiZoom(s.id,true);});}
document.documentElement.setAttribute('data-ncclfi-ready','1');});
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
    if (e.event == "op" || e.event == "op_enqueue" || e.event == "op_time") continue;  // too many to list
    if (++shown > kMax) break;
    s += "<tr><td>" + fixed(static_cast<double>(e.ts_ns - t0) / 1e9, 3) + "</td><td>" +
         std::to_string(e.rank) + "</td><td>" + std::to_string(e.attempt + 1) + "</td><td>" +
         xml_escape(e.source) + "</td><td>" + xml_escape(e.event) + "</td><td><code>" +
         xml_escape(e.fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 300)) +
         "</code></td></tr>\n";
  }
  s += "</table>";
  int64_t folded = 0;
  for (const auto& f : h.folded) folded += f.source == "detection" ? 0 : f.count;
  if (folded > 0) {
    s += "<p>" + std::to_string(folded) +
         " more events were counted, not kept (the first and last of each kind are); the run's "
         "events.jsonl has every one.</p>";
  }
  return s + "</details>\n";
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
  h +=
      "</table>\n<p class=\"legend\"><span style=\"color:#d93025\">&#9670; injection</span>"
      "<span style=\"color:#f29900\">&#9650; detection</span><span style=\"color:#188038\">&#9632; exit "
      "0</span>"
      "<span style=\"color:#8c1d18\">&#9632; abnormal exit</span><span style=\"color:#5f6b7a\">&#8212; op "
      "duration (per lane, up to its slowest op)</span><span style=\"color:#d93025;opacity:.6\">&#9608; "
      "fault window "
      "(first injection to its heal, else to its last injection; one per window)</span>"
      "<span style=\"color:#1a73e8\">&#8942; attempt</span>"
      "<span style=\"color:#9334e6\">&#8942; ncclfi arm / disarm</span><span style=\"color:#c5221f\">&#8942; "
      "deadline</span><span style=\"color:#188038\">&#9608; expected detection</span>"
      "<span style=\"color:#b06000\">&#9679; stall (an op 10&times; its lane's median)</span> Times are "
      "seconds from the first injection; each timeline starts at the faulted attempt's launch.</p>\n";
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
    if (r.history_trimmed) {
      h += "<p class=\"muted\">Timeline, drill report and events are not drawn here: this suite ran more "
           "than " +
           std::to_string(kSuiteRunsWithFullHistory) +
           " scenarios, and keeps them only for the runs that did not pass. <code>ncclfi report " +
           xml_escape(r.run_dir) + " --html FILE</code> draws this run's.</p>\n";
      continue;
    }
    const std::string id = std::to_string(i);
    h += "<p><button type=\"button\" onclick=\"ncclfiZoom('timeline-" + id +
         "',true)\">zoom to the fault window</button> <button type=\"button\" "
         "onclick=\"ncclfiZoom('timeline-" +
         id + "',false)\">whole run</button></p>\n";
    h += timeline_header(r);
    h += timeline_svg(r, id);
    h += drill_report_html(r);
    h += events_table(r.history);
  }
  h += "</body></html>\n";
  return h;
}

extern const ReportSpec kHtmlReport = {
    .name = "html",
    .default_file = "report.html",
    .summary =
        "a self-contained HTML page: the summary table, a per-rank timeline and the checks of each run",
    .in_every_suite = true,
    .render = render_html,
};

}  // namespace ncclfi::harness
