// The event marks of the timeline (html_timeline_marks.h).
#include "html_timeline_marks.h"

#include <algorithm>
#include <map>
#include <vector>

#include "report_text.h"

namespace ncclfi::harness::timeline {
namespace {

constexpr size_t kMaxPoints = 600;  // latency points per rank; past it, each bucket's slowest op
// An op is a stall when it took this many times its lane's median op, and at least kStallMinUs: a
// frozen link or rank, not the noise of a busy host.
constexpr double kStallFactor = 10;
constexpr double kStallMinUs = 50'000;

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string text_field(const nlohmann::json& fields, const char* key) {
  const auto it = fields.find(key);
  if (it == fields.end()) return "?";
  return it->is_string() ? it->get<std::string>() : dump(*it);
}

double dur_us(const HistoryEvent* e) {
  return e->fields.at("dur_us").get<double>();
}

using Ops = std::vector<const HistoryEvent*>;

// The points of one attempt's line: every op, or, past the budget, the slowest of each `stride`
// consecutive ones, so that a stall is never sampled away.
Ops reduce(const Ops& ops, size_t stride) {
  if (stride <= 1) return ops;
  Ops out;
  for (size_t i = 0; i < ops.size(); i += stride) {
    const auto end = ops.begin() + static_cast<long>(std::min(ops.size(), i + stride));
    out.push_back(*std::max_element(ops.begin() + static_cast<long>(i), end,
                                    [](const auto* a, const auto* b) { return dur_us(a) < dur_us(b); }));
  }
  return out;
}

struct Lane {
  double top = 0, bottom = 0, slowest = 1, stall_us = 0;
  double y_of(const HistoryEvent* e) const { return bottom - dur_us(e) / slowest * (bottom - top); }
};

std::string stall_mark(const Frame& f, const Lane& lane, int rank, const HistoryEvent* e) {
  const double us = dur_us(e);
  const int64_t start = e->ts_ns - static_cast<int64_t>(us * 1e3);
  return "<circle class=\"stall\" data-rank=\"" + std::to_string(rank) + "\" data-attempt=\"" +
         std::to_string(e->attempt + 1) + "\" data-start-s=\"" + fixed(f.seconds(start), 3) +
         "\" data-end-s=\"" + fixed(f.seconds(e->ts_ns), 3) + "\" cx=\"" + fixed(f.x_of(e->ts_ns), 1) +
         "\" cy=\"" + fixed(lane.y_of(e), 1) + "\" r=\"3\" fill=\"#b06000\"><title>" +
         xml_escape("stall: an op of " + fixed(us / 1e6, 3) + " s, " + f.rel(start) + " to " +
                    f.rel(e->ts_ns)) +
         "</title></circle>";
}

// One rank's latency plot: a line per attempt, scaled to the rank's slowest op, and a mark on each stall.
std::string rank_latency_plot(const Frame& f, int rank, const std::map<int, Ops>& attempts) {
  Lane lane{f.lane_top(rank) + 14.0, f.lane_bottom(rank) - 14.0};
  std::vector<double> all;
  for (const auto& [_, ops] : attempts)
    for (const auto* e : ops) all.push_back(dur_us(e));
  std::nth_element(all.begin(), all.begin() + static_cast<long>(all.size() / 2), all.end());
  lane.stall_us = std::max(kStallMinUs, kStallFactor * all[all.size() / 2]);
  lane.slowest = std::max(1.0, *std::max_element(all.begin(), all.end()));
  const size_t stride = all.size() > kMaxPoints ? (all.size() + kMaxPoints - 1) / kMaxPoints : 1;
  std::string s, stalls;
  for (const auto& [attempt, ops] : attempts) {
    std::string points;
    for (const auto* e : reduce(ops, stride))
      points += fixed(f.x_of(e->ts_ns), 1) + "," + fixed(lane.y_of(e), 1) + " ";
    for (const auto* e : ops)
      if (dur_us(e) >= lane.stall_us) stalls += stall_mark(f, lane, rank, e);
    s += "<polyline class=\"latency\" data-rank=\"" + std::to_string(rank) + "\" data-attempt=\"" +
         std::to_string(attempt + 1) + "\" points=\"" + points +
         "\" fill=\"none\" stroke=\"#5f6b7a\" stroke-width=\"1\"><title>" +
         xml_escape("rank " + std::to_string(rank) + " attempt " + std::to_string(attempt + 1) + ": " +
                    std::to_string(ops.size()) + " ops held, slowest " + fixed(lane.slowest / 1000, 2) +
                    " ms") +
         "</title></polyline>\n";
  }
  s += stalls + "\n<text x=\"" + std::to_string(f.left + 2) + "\" y=\"" + fixed(lane.top - 2, 0) +
       "\" font-size=\"9\" fill=\"#888\">" + fixed(lane.slowest / 1000, 2) + " ms</text>\n";
  return s;
}

// Attempts: a labelled line at each attempt's first launch.
std::string attempt_lines(const Frame& f, const History& h) {
  std::map<int, int64_t> attempt_start;
  for (const auto& e : h.events) {
    if (e.source == "harness" && e.event == "launch" && f.shows(e.ts_ns) &&
        (!attempt_start.count(e.attempt) || e.ts_ns < attempt_start[e.attempt]))
      attempt_start[e.attempt] = e.ts_ns;
  }
  std::string s;
  for (const auto& [attempt, t] : attempt_start) {
    const double x = f.x_of(t);
    s += "<line class=\"attempt\" data-attempt=\"" + std::to_string(attempt + 1) + "\" x1=\"" + fixed(x, 1) +
         "\" y1=\"" + std::to_string(kTop - 14) + "\" x2=\"" + fixed(x, 1) + "\" y2=\"" +
         std::to_string(f.lanes_bottom()) + "\" stroke=\"#1a73e8\" stroke-dasharray=\"4 3\"/>";
    s += svg_label(f, x + 3, kTop - 16, "attempt " + std::to_string(attempt + 1), 10, "attempt-label",
                   "#1a73e8") +
         "\n";
  }
  return s;
}

// The harness's deadline, restarts (its own and those from the log), and ncclfi arm/disarm: lines
// across the lanes; arm and disarm labelled.
std::string action_lines(const Frame& f, const History& h) {
  std::string s;
  for (const auto& e : h.events) {
    std::string color, what;
    if (e.source == "harness" && e.event == "deadline") color = "#c5221f", what = "harness deadline";
    if (e.event == "restart")
      color = "#1a73e8", what = e.source == "log" ? "restart (from the log)" : "restart";
    if (e.event == "control") {
      color = "#9334e6";
      what = "ncclfi " + text_field(e.fields, "action") + " " + text_field(e.fields, "fault_id");
    }
    if (color.empty() || !f.shows(e.ts_ns)) continue;
    const double x = f.x_of(e.ts_ns);
    s += "<line class=\"" + std::string(e.event == "control" ? "control" : "action") + "\" x1=\"" +
         fixed(x, 1) + "\" y1=\"" + std::to_string(kTop) + "\" x2=\"" + fixed(x, 1) + "\" y2=\"" +
         std::to_string(f.lanes_bottom()) + "\" stroke=\"" + color + "\" stroke-dasharray=\"4 3\"><title>" +
         xml_escape(what + " (attempt " + std::to_string(e.attempt + 1) + ") " + f.rel(e.ts_ns)) +
         "</title></line>";
    if (e.event == "control") {
      s += svg_label(f, x + 3, kTop + 14,
                     text_field(e.fields, "action") + " " + text_field(e.fields, "fault_id"), 10,
                     "control-label", color);
    }
    s += "\n";
  }
  return s;
}

// Injections: red diamonds in the middle of their lane.
std::string injection_marks(const Frame& f, const History& h) {
  std::string s;
  for (const auto& e : h.events) {
    if (e.event != "inject" || !f.shows(e.ts_ns)) continue;
    const double x = f.x_of(e.ts_ns);
    const int y = (f.lane_top(e.rank) + f.lane_bottom(e.rank)) / 2;
    s += "<path class=\"inject\" data-rank=\"" + std::to_string(e.rank) + "\" d=\"M" + fixed(x, 1) + " " +
         std::to_string(y - 6) + " l5 6 l-5 6 l-5 -6 z\" fill=\"#d93025\"><title>" +
         xml_escape("inject " + f.rel(e.ts_ns) + " " + dump(e.fields)) + "</title></path>\n";
  }
  return s;
}

// Detections: orange triangles at the top of their lane, above the plot and the exits.
std::string detection_marks(const Frame& f, const History& h) {
  std::string s;
  for (const auto& d : h.detections) {
    if (!f.shows(d.ts_ns)) continue;
    const double x = f.x_of(d.ts_ns);
    const int y = f.lane_top(d.rank) + 2;
    s += "<path class=\"detection\" data-rank=\"" + std::to_string(d.rank) + "\" data-y=\"" +
         std::to_string(y) + "\" data-s=\"" + fixed(f.seconds(d.ts_ns), 3) + "\" d=\"M" + fixed(x, 1) + " " +
         std::to_string(y) + " l6 10 l-12 0 z\" fill=\"#f29900\"><title>" +
         xml_escape(d.mechanism + " " + f.rel(d.ts_ns) + " (attempt " + std::to_string(d.attempt + 1) +
                    "): " + d.evidence) +
         "</title></path>\n";
  }
  return s;
}

// Exits: squares at the bottom of their lane, green for 0, dark red otherwise.
std::string exit_marks(const Frame& f, const History& h) {
  std::string s;
  for (const auto& x : h.exits) {
    if (!f.shows(x.ts_ns)) continue;
    const double px = f.x_of(x.ts_ns);
    const int y = f.lane_bottom(x.rank) - 11;
    const bool ok = x.exit_code && *x.exit_code == 0 && !x.signal;
    std::string what = x.signal      ? "signal " + std::to_string(*x.signal)
                       : x.exit_code ? "exit " + std::to_string(*x.exit_code)
                                     : std::string("ended");
    if (x.killed_by_harness) what += " (killed by harness)";
    s += "<rect class=\"exit\" data-rank=\"" + std::to_string(x.rank) + "\" x=\"" + fixed(px - 5, 1) +
         "\" y=\"" + std::to_string(y) + "\" width=\"10\" height=\"10\" fill=\"" +
         (ok ? "#188038" : "#8c1d18") + "\"><title>" +
         xml_escape("rank " + std::to_string(x.rank) + " attempt " + std::to_string(x.attempt + 1) + " " +
                    what + " " + f.rel(x.ts_ns)) +
         "</title></rect>\n";
  }
  return s;
}

}  // namespace

std::string latency_plots(const Frame& f, const History& h) {
  std::map<int, std::map<int, Ops>> ops;  // rank -> attempt -> ops, in time order
  for (const auto& e : h.events) {
    if (e.event == "op" && e.rank >= 0 && e.rank <= f.max_rank && f.shows(e.ts_ns) &&
        e.fields.contains("dur_us") && e.fields["dur_us"].is_number())
      ops[e.rank][e.attempt].push_back(&e);
  }
  std::string s;
  for (auto& [rank, attempts] : ops) {
    for (auto& [_, list] : attempts)
      std::stable_sort(list.begin(), list.end(),
                       [](const auto* a, const auto* b) { return a->ts_ns < b->ts_ns; });
    s += rank_latency_plot(f, rank, attempts);
  }
  return s;
}

std::string event_marks(const Frame& f, const History& h) {
  return attempt_lines(f, h) + action_lines(f, h) + injection_marks(f, h) + detection_marks(f, h) +
         exit_marks(f, h);
}

}  // namespace ncclfi::harness::timeline
