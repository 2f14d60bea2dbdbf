// The header over a run's timeline (html_timeline.h): what a reader checks first, that the picture is
// of the run they mean (date, host, version) and how much happened in it (counts).
#include <cstdio>
#include <set>

#include "html_timeline.h"
#include "job_ranks.h"
#include "report_text.h"
#include "text_format.h"

#ifndef NCCLFI_VERSION
#define NCCLFI_VERSION "unknown"
#endif

namespace ncclfi::harness {
namespace {

// Held and counted (the history folds a long run's repeated events: history.h).
int64_t count_events(const History& h, const std::string& name) {
  int64_t n = 0;
  for (const auto& e : h.events) n += e.event == name;
  for (const auto& f : h.folded) n += f.source != "detection" && f.event == name ? f.count : 0;
  return n;
}

int64_t count_detections(const History& h) {
  auto n = static_cast<int64_t>(h.detections.size());
  for (const auto& f : h.folded) n += f.source == "detection" ? f.count : 0;
  return n;
}

// The host the harness ran on (its own events carry it), else the ranks' hosts.
std::string harness_hosts(const History& h) {
  std::set<std::string> hosts;
  for (const auto& e : h.events) {
    if (e.source == "harness" && !e.host.empty()) hosts.insert(e.host);
  }
  for (const auto& x : h.exits) {
    if (!x.host.empty()) hosts.insert(x.host);
  }
  if (hosts.empty()) {
    for (const auto& [rank, host] : rank_hosts(h)) hosts.insert(host);
  }
  return hosts.empty() ? std::string("-") : join(hosts);
}

// The run's first launch (its baselines ran before it), else the history's start.
int64_t run_date_ns(const History& h) {
  int64_t first = 0;
  for (const auto& e : h.events) {
    if (e.source == "harness" && e.event == "launch" && e.ts_ns > 0 && (first == 0 || e.ts_ns < first))
      first = e.ts_ns;
  }
  return first > 0 ? first : h.start_ns;
}

}  // namespace

std::string timeline_header(const RunRecord& r) {
  const History& h = r.history;
  const size_t ranks = job_ranks(h).size();
  const std::vector<std::pair<std::string, std::string>> facts = {
      {"ranks", std::to_string(ranks)},
      {"attempts", std::to_string(h.attempts)},
      {"injections", std::to_string(count_events(h, "inject"))},
      {"detections", std::to_string(count_detections(h))},
      {"date", utc_time_text(run_date_ns(h), false)},
      {"host", harness_hosts(h)},
      {"version", std::string("ncclfi ") + NCCLFI_VERSION},
  };
  std::string attrs, text;
  for (const auto& [key, value] : facts) {
    attrs += " data-" + key + "=\"" + xml_escape(value) + "\"";
    text += "<span class=\"fact\"><b>" + key + "</b> " + xml_escape(value) + "</span>";
  }
  return "<div class=\"timeline-header\"" + attrs + ">" + text + "</div>\n";
}

}  // namespace ncclfi::harness
