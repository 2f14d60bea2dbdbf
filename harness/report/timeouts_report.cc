// The timeout matrix rendered (timeouts_report.h).
#include "timeouts_report.h"

#include <cstdio>
#include <filesystem>

#include "report_text.h"
#include "text_format.h"

namespace ncclfi::cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json opt(std::optional<double> v) {
  return v ? json(*v) : json();
}

}  // namespace

json to_json(const MatrixReport& r) {
  json healthy = {{"trials", r.healthy.trials},
                  {"clean", r.healthy.clean},
                  {"steps", r.healthy.step_s.size()},
                  {"largest_step_s", opt(r.healthy.largest_step_s)},
                  {"median_step_s", opt(r.healthy.median_step_s)},
                  {"step_spread_s", opt(r.healthy.step_spread_s)},
                  {"longest_op_s", opt(r.healthy.longest_op_s)},
                  {"startup_s", opt(r.healthy.startup_s)},
                  {"total_s", opt(r.healthy.total_s)},
                  {"false_alarms", r.healthy.false_alarms}};
  json settings = json::array();
  for (const auto& s : r.settings) {
    json j = {{"name", s.name}, {"summary", s.summary}, {"env", s.env}, {"params", s.params}};
    if (s.max_restarts) j["max_restarts"] = *s.max_restarts;
    if (s.timeout_s) j["timeout_s"] = *s.timeout_s;
    settings.push_back(j);
  }
  json cells = json::array();
  for (const auto& c : r.cells) {
    json trials = json::array();
    for (const auto& t : c.trials) {
      trials.push_back({{"fired", t.fired},
                        {"detected", t.detected},
                        {"hung", t.hung},
                        {"false_alarm", t.false_alarm},
                        {"left_running", t.left_running},
                        {"mechanism", t.mechanism},
                        {"detection_s", opt(t.detection_s)},
                        {"gone_s", opt(t.gone_s)},
                        {"resumed_s", opt(t.resumed_s)},
                        {"outcome", t.outcome},
                        {"run_dir", t.run_dir},
                        {"harness_error", t.error}});
    }
    cells.push_back({{"setting", c.setting},
                     {"fault", to_string(c.fault)},
                     {"skipped", c.skipped},
                     {"reruns", c.reruns},
                     {"text", c.text()},
                     {"fired", c.fired()},
                     {"detected", c.detected()},
                     {"hung", c.hung()},
                     {"false_alarms", c.false_alarms()},
                     {"left_running", c.left_running()},
                     {"mechanisms", c.mechanisms()},
                     {"median_detection_s", opt(c.median_detection_s())},
                     {"max_detection_s", opt(c.max_detection_s())},
                     {"median_gone_s", opt(c.median_gone_s())},
                     {"median_resumed_s", opt(c.median_resumed_s())},
                     {"trials", trials}});
  }
  json faults = json::array();
  for (const auto f : r.faults) faults.push_back(to_string(f));
  json doc = {{"scenario", r.scenario},
              {"out_dir", r.out_dir},
              {"trials", r.trials},
              {"stall_s", r.stall_s},
              {"healthy", healthy},
              {"settings", settings},
              {"faults", faults},
              {"cells", cells},
              {"recommendation",
               {{"timeout_s", opt(r.recommendation.timeout_s)},
                {"margin", r.recommendation.margin},
                {"text", r.recommendation.text},
                {"nccl_ib_timeout",
                 {{"min", r.recommendation.ib_timeout ? json(*r.recommendation.ib_timeout) : json()},
                  {"retry_budget_s", opt(r.recommendation.ib_budget_s)},
                  {"need_s", opt(r.recommendation.ib_need_s)},
                  {"text", r.recommendation.ib_text}}}}},
              {"findings", r.findings},
              {"notes", r.notes},
              {"wall_s", r.wall_s},
              {"interrupted", r.interrupted}};
  if (!r.gpu.placement.empty())
    doc["gpu"] = {{"placement", r.gpu.placement}, {"shared", r.gpu.shared}, {"mps", r.gpu.mps}};
  return doc;
}

namespace {

const Cell* find_cell(const MatrixReport& r, const std::string& setting, MatrixFault fault) {
  for (const auto& c : r.cells) {
    if (c.setting == setting && c.fault == fault) return &c;
  }
  return nullptr;
}

// What a setting is and sets: its summary, environment, parameters and restarts, in one line.
std::string setting_text(const TimeoutSetting& s) {
  std::string what = s.summary;
  for (const auto& [k, v] : s.env) what += std::string(what.empty() ? "" : "; ") + k + "=" + v;
  for (const auto& [k, v] : s.params)
    what += std::string(what.empty() ? "" : "; ") + "param " + k + "=" +
            (v.is_string() ? v.get<std::string>() : v.dump());
  if (s.max_restarts) what += "; torchrun --max-restarts=" + std::to_string(*s.max_restarts);
  return what;
}

std::string fault_label(MatrixFault f, double stall_s) {
  if (f == MatrixFault::kStall) return "stall " + harness::seconds_text(stall_s);
  return to_string(f);
}

}  // namespace

std::string matrix_text(const MatrixReport& r) {
  std::string out;
  const auto& h = r.healthy;
  out += "timeouts: " + r.scenario + ", " + std::to_string(r.trials) + " trial(s) per cell";
  if (!r.gpu.placement.empty()) out += ", " + r.gpu.placement;
  out += "\n";
  out +=
      "healthy: " + std::to_string(h.clean) + "/" + std::to_string(h.trials) + " clean; step median " +
      harness::duration_text(h.median_step_s) + ", largest " + harness::duration_text(h.largest_step_s) +
      ", spread (p95-p5) " + harness::duration_text(h.step_spread_s) + "; longest op " +
      (h.longest_op_s ? harness::duration_text(h.longest_op_s) : std::string("(no op events beyond steps)")) +
      "; startup (launch to first step) " + harness::seconds_text(h.startup_s) + "; the job's own total " +
      harness::seconds_text(h.total_s) + "\n\n";
  // Column widths: the fault label, then one column per setting.
  size_t first = 5;
  for (const auto f : r.faults) first = std::max(first, fault_label(f, r.stall_s).size());
  std::vector<size_t> widths;
  for (const auto& s : r.settings) {
    size_t w = s.name.size();
    for (const auto f : r.faults) {
      if (const Cell* c = find_cell(r, s.name, f)) w = std::max(w, c->text().size());
    }
    widths.push_back(w);
  }
  auto pad = [](std::string s, size_t w) {
    s.resize(std::max(s.size(), w), ' ');
    return s;
  };
  out += pad("fault", first);
  for (size_t i = 0; i < r.settings.size(); ++i) out += " | " + pad(r.settings[i].name, widths[i]);
  out += "\n" + std::string(first, '-');
  for (const auto w : widths) out += "-+-" + std::string(w, '-');
  out += "\n";
  for (const auto f : r.faults) {
    out += pad(fault_label(f, r.stall_s), first);
    for (size_t i = 0; i < r.settings.size(); ++i) {
      const Cell* c = find_cell(r, r.settings[i].name, f);
      out += " | " + pad(c ? c->text() : "-", widths[i]);
    }
    out += "\n";
  }
  out += "\nsettings:\n";
  for (const auto& s : r.settings) out += "  " + s.name + ": " + setting_text(s) + "\n";
  out += "\nfindings:\n";
  if (r.findings.empty()) out += "  none\n";
  for (const auto& f : r.findings) out += "  - " + f + "\n";
  if (!r.notes.empty()) out += "\nnotes:\n";
  for (const auto& n : r.notes) out += "  - " + n + "\n";
  out += "\n" + r.recommendation.text + "\n";
  if (!r.recommendation.ib_text.empty()) out += r.recommendation.ib_text + "\n";
  if (!r.interrupted.empty()) out += "INCOMPLETE: " + r.interrupted + "\n";
  return out;
}

namespace {

// Problems are red (a fault never detected, a false alarm), amber (detected but left running, a fault
// that did not fire every time); green only for a cell no finding names.
const char* kMatrixStyle =
    "body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}"
    ".hung,.alarm{background:#fdd}.left,.unfired{background:#ffe8c2}.ok{background:#dfd}.none{background:#"
    "eee}"
    "th.problem{background:#fdd}.setting{font-weight:normal;font-size:12px;color:#444;max-width:22em}"
    ".setting code{font-size:11px}.trials{font-size:12px;margin-top:4px}.trials a{margin-right:6px}";

// The class of a cell: what kind of problem, when a finding names it.
std::string cell_class(const Cell* c) {
  if (!c) return "none";
  if (!cell_has_finding(*c)) return c->fired() > 0 ? "ok" : "none";
  if (c->hung() > 0) return "hung problem";
  if (c->false_alarms() > 0) return "alarm problem";
  if (c->left_running() > 0) return "left problem";
  return "unfired problem";
}

// A trial's run directory as a link from the page's own directory (the matrix's, where the trials are).
std::string trial_href(const std::string& run_dir, const std::string& page_dir) {
  if (run_dir.empty()) return "";
  const fs::path rel = fs::path(run_dir).lexically_relative(page_dir);
  return (rel.empty() ? fs::path(run_dir) : rel).generic_string() + "/";
}

std::string cell_html(const Cell* c, const std::string& page_dir) {
  using harness::xml_escape;
  std::string html = "<td class=\"" + cell_class(c) + "\"" +
                     (c && cell_has_finding(*c) ? " data-finding=\"1\"" : "") + ">" +
                     xml_escape(c ? c->text() : "-");
  if (c && !c->trials.empty()) {
    html += "<div class=\"trials\">";
    for (size_t i = 0; i < c->trials.size(); ++i) {
      const auto& t = c->trials[i];
      const std::string href = trial_href(t.run_dir, page_dir);
      const std::string label = "trial " + std::to_string(i + 1);
      html += href.empty() ? xml_escape(label)
                           : "<a class=\"trial\" href=\"" + xml_escape(href) + "\" title=\"" +
                                 xml_escape(t.outcome.empty() ? t.error : t.outcome) + "\">" + label + "</a>";
    }
    html += "</div>";
  }
  return html + "</td>";
}

std::string settings_row(const MatrixReport& r) {
  using harness::xml_escape;
  std::string html = "<tr><th>fault</th>";
  for (const auto& s : r.settings) {
    html += std::string("<th") +
            (timeout_under_recommendation(s, r.recommendation) || ib_timeout_finding(s, r.recommendation)
                 ? " class=\"problem\""
                 : "") +
            ">" + xml_escape(s.name) + "<div class=\"setting\">" + xml_escape(setting_text(s)) +
            "</div></th>";
  }
  return html + "</tr>\n";
}

}  // namespace

std::string matrix_html(const MatrixReport& r, const std::string& page_dir) {
  using harness::xml_escape;
  const std::string dir = page_dir.empty() ? r.out_dir : page_dir;
  std::string html = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>ncclfi timeouts: " +
                     xml_escape(r.scenario) + "</title>\n<style>" + kMatrixStyle + "</style></head><body>\n";
  html += "<h1>Timeouts: " + xml_escape(r.scenario) + "</h1>\n<p>" + std::to_string(r.trials) +
          " trial(s) per cell";
  if (!r.gpu.placement.empty())
    html += "; " + xml_escape(r.gpu.placement) + "; MPS: " + xml_escape(r.gpu.mps);
  html += "</p>\n";
  const auto& h = r.healthy;
  html += "<h2>Healthy job</h2><p id=\"healthy\">" + std::to_string(h.clean) + "/" +
          std::to_string(h.trials) + " clean; step median " + harness::duration_text(h.median_step_s) +
          ", largest " + harness::duration_text(h.largest_step_s) + ", spread " +
          harness::duration_text(h.step_spread_s) + "; startup " + harness::duration_text(h.startup_s) +
          "; total " + harness::duration_text(h.total_s) + "</p>\n<h2>Matrix</h2>\n<table id=\"matrix\">" +
          settings_row(r);
  for (const auto f : r.faults) {
    html += "<tr><th>" + xml_escape(fault_label(f, r.stall_s)) + "</th>";
    for (const auto& s : r.settings) html += cell_html(find_cell(r, s.name, f), dir);
    html += "</tr>\n";
  }
  html += "</table>\n<h2>Findings</h2><ul id=\"findings\">";
  for (const auto& f : r.findings) html += "<li>" + xml_escape(f) + "</li>";
  if (r.findings.empty()) html += "<li>none</li>";
  if (!r.notes.empty()) html += "</ul>\n<h2>Notes</h2><ul id=\"notes\">";
  for (const auto& n : r.notes) html += "<li>" + xml_escape(n) + "</li>";
  html += "</ul>\n<p id=\"recommendation\"><b>" + xml_escape(r.recommendation.text) + "</b></p>\n";
  if (!r.recommendation.ib_text.empty())
    html += "<p id=\"ib-recommendation\"><b>" + xml_escape(r.recommendation.ib_text) + "</b></p>\n";
  html += "</body></html>\n";
  return html;
}

}  // namespace ncclfi::cli
