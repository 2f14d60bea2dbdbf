#include "html_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "drill_report.h"
#include "report_text.h"

namespace ncclfi::harness {
namespace {

constexpr int kWidth = 960;  // drawing width in px
constexpr int kLeft = 90;    // room for lane labels
constexpr int kRight = 10;
constexpr int kTop = 28;             // room for attempt and fault labels
constexpr int kJobRow = 22;          // the job's own row (harness actions, control commands)
constexpr int kLane = 64;            // one rank's lane
constexpr int kAxis = 30;            // the time axis below the lanes
constexpr size_t kMaxPoints = 600;   // latency points per rank; more are sampled evenly
constexpr int kMaxRankLanes = 4096;  // the schema's largest workload.ranks

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string text_field(const nlohmann::json& fields, const char* key) {
  const auto it = fields.find(key);
  if (it == fields.end()) return "?";
  return it->is_string() ? it->get<std::string>() : dump(*it);
}

// A step of 1, 2 or 5 times a power of ten giving about `ticks` ticks over `span` seconds.
double nice_step(double span, int ticks) {
  const double raw = span / ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * p) return m * p;
  }
  return 10 * p;
}

}  // namespace

std::string timeline_svg(const History& h, const std::string& id) {
  // Time span: the run's own bounds, widened to every event drawn.
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

  // Zero of the axis: the first injection (else the start), as detection times are counted. The fault
  // windows: one per fault, attempt and window, to its heal or its last injection (drill_report.h).
  int64_t zero = 0;
  for (const auto& e : h.events) {
    if (e.event == "inject" && e.ts_ns > 0 && (zero == 0 || e.ts_ns < zero)) zero = e.ts_ns;
  }
  const std::vector<FaultWindowSpan> windows = fault_windows(h);
  const bool from_injection = zero != 0;
  if (!from_injection) zero = t0;

  // One lane per rank of the job. Only a history without a world size sizes the lanes by the ranks it
  // holds, and never past the largest job a scenario may name: a stated rank (from a verdict written
  // before events outside the job were refused) must not size the picture.
  int max_rank = h.world_size - 1;
  if (h.world_size <= 0) {
    for (const auto& e : h.events) max_rank = std::max(max_rank, e.rank);
    for (const auto& x : h.exits) max_rank = std::max(max_rank, x.rank);
    max_rank = std::min(max_rank, kMaxRankLanes - 1);
  }
  const int lanes_top = kTop + kJobRow;
  const int height = lanes_top + (max_rank + 1) * kLane + kAxis;
  const double span = static_cast<double>(t1 - t0);
  const double plot_width = kWidth - kLeft - kRight;
  auto x_of = [&](int64_t t) { return kLeft + static_cast<double>(t - t0) / span * plot_width; };
  // A rank outside the lanes (out of contract) is drawn on the job's row.
  auto lane_top = [&](int rank) { return rank < 0 || rank > max_rank ? kTop : lanes_top + rank * kLane; };
  auto lane_bottom = [&](int rank) {
    return rank < 0 || rank > max_rank ? kTop + kJobRow : lanes_top + (rank + 1) * kLane;
  };
  auto rel = [&](int64_t t) {
    const double s = static_cast<double>(t - zero) / 1e9;
    return (s >= 0 ? "+" : "") + fixed(s, 3) + " s";
  };

  // The zoom range: the union of the fault windows, widened by a tenth of its span (at least 0.5 s) on
  // each side; without an injection, the whole run.
  double zoom0 = kLeft, zoom1 = kWidth - kRight;
  if (!windows.empty()) {
    int64_t a = windows.front().start_ns, b = windows.front().end_ns;
    for (const auto& w : windows) {
      a = std::min(a, w.start_ns);
      b = std::max(b, w.end_ns);
    }
    const auto margin = std::max<int64_t>((b - a) / 10, 500'000'000);
    zoom0 = std::max<double>(kLeft, x_of(a - margin));
    zoom1 = std::min<double>(kWidth - kRight, x_of(b + margin));
  }

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" id=\"timeline-" +
                  xml_escape(id) + "\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
                  std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " +
                  std::to_string(height) + "\" preserveAspectRatio=\"none\" data-zoom=\"" + fixed(zoom0, 1) +
                  " " + fixed(zoom1, 1) + "\" data-zero=\"" + (from_injection ? "first-injection" : "start") +
                  "\" role=\"img\">\n";

  // Fault windows, shaded under everything else across the lanes of the ranks they hit.
  for (const auto& w : windows) {
    const std::string fault = w.window == 0 ? w.fault_id : w.fault_id + " #" + std::to_string(w.window);
    const double x0 = x_of(w.start_ns);
    const double width = std::max(3.0, x_of(w.end_ns) - x0);
    const bool whole_job = w.ranks.count(-1) > 0 || w.ranks.empty();
    const int top = whole_job ? kTop : lane_top(*w.ranks.begin());
    const int bottom = whole_job ? lane_bottom(max_rank) : lane_bottom(*w.ranks.rbegin());
    s += "<rect class=\"fault-window\" data-fault-id=\"" + xml_escape(w.fault_id) + "\" data-window=\"" +
         std::to_string(w.window) + "\" data-start-s=\"" +
         fixed(static_cast<double>(w.start_ns - zero) / 1e9, 3) + "\" data-end-s=\"" +
         fixed(static_cast<double>(w.end_ns - zero) / 1e9, 3) + "\" x=\"" + fixed(x0, 1) + "\" y=\"" +
         std::to_string(top) + "\" width=\"" + fixed(width, 1) + "\" height=\"" +
         std::to_string(bottom - top) + "\" fill=\"#d93025\" fill-opacity=\"0.10\"><title>" +
         xml_escape("fault " + fault + ": " + rel(w.start_ns) + " to " + rel(w.end_ns) +
                    (w.healed ? " (healed)" : "")) +
         "</title></rect>";
    s += "<text class=\"fault-label\" x=\"" + fixed(x0 + 2, 1) + "\" y=\"" + std::to_string(kTop - 4) +
         "\" font-size=\"10\" fill=\"#d93025\">" + xml_escape(fault) + "</text>\n";
  }

  // Lanes: the job's row, then one per rank.
  const auto hosts = rank_hosts(h);
  for (int r = -1; r <= max_rank; ++r) {
    const int bottom = lane_bottom(r);
    s += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + std::to_string(bottom) + "\" x2=\"" +
         std::to_string(kWidth - kRight) + "\" y2=\"" + std::to_string(bottom) + "\" stroke=\"#e3e3e8\"/>";
    s += "<text class=\"lane-label\" x=\"4\" y=\"" + std::to_string((lane_top(r) + bottom) / 2 + 4) +
         "\" font-size=\"12\">" + (r < 0 ? std::string("job") : "rank " + std::to_string(r)) + "</text>\n";
    if (const auto host = hosts.find(r); host != hosts.end()) {  // the rank's host, under its name
      s += "<text class=\"lane-host\" x=\"4\" y=\"" + std::to_string((lane_top(r) + bottom) / 2 + 18) +
           "\" font-size=\"10\">" + xml_escape(host->second) + "</text>\n";
    }
  }

  // Time axis: seconds from the first injection, at a round step.
  const double first_s = static_cast<double>(t0 - zero) / 1e9, last_s = static_cast<double>(t1 - zero) / 1e9;
  const double step = nice_step(last_s - first_s, 6);
  const int axis_y = height - kAxis + 14;
  for (double v = std::ceil(first_s / step) * step; v <= last_s + 1e-9; v += step) {
    const double x = x_of(zero + static_cast<int64_t>(v * 1e9));
    const double shown = std::fabs(v) < step / 1000 ? 0.0 : v;
    s += "<line x1=\"" + fixed(x, 1) + "\" y1=\"" + std::to_string(axis_y - 12) + "\" x2=\"" + fixed(x, 1) +
         "\" y2=\"" + std::to_string(axis_y - 8) + "\" stroke=\"#999\"/><text class=\"tick\" x=\"" +
         fixed(x, 1) + "\" y=\"" + std::to_string(axis_y) +
         "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#666\">" + (shown > 0 ? "+" : "") +
         fixed(shown, step < 0.1 ? 2 : (step < 1 ? 1 : 0)) + "</text>";
  }
  s += "<text class=\"axis-label\" x=\"" + std::to_string(kWidth - kRight) + "\" y=\"" +
       std::to_string(height - 2) + "\" font-size=\"10\" text-anchor=\"end\" fill=\"#666\">" +
       (from_injection ? "s from the first injection" : "s from the start (no injection)") + "</text>\n";

  // Latency plot per rank: op durations over time, one line per attempt, scaled to the rank's slowest op.
  std::map<int, std::map<int, std::vector<const HistoryEvent*>>> ops;  // rank -> attempt -> ops
  for (const auto& e : h.events) {
    if (e.event == "op" && e.rank >= 0 && e.fields.contains("dur_us") && e.fields["dur_us"].is_number())
      ops[e.rank][e.attempt].push_back(&e);
  }
  for (const auto& [rank, attempts] : ops) {
    double slowest = 1;
    size_t count = 0;
    for (const auto& [_, list] : attempts) {
      count += list.size();
      for (const auto* e : list) slowest = std::max(slowest, e->fields["dur_us"].get<double>());
    }
    const size_t stride = count > kMaxPoints ? (count + kMaxPoints - 1) / kMaxPoints : 1;
    const double plot_top = lane_top(rank) + 14, plot_bottom = lane_bottom(rank) - 14;
    for (const auto& [attempt, list] : attempts) {
      std::string points;
      for (size_t i = 0; i < list.size(); i += stride) {
        const double y =
            plot_bottom - list[i]->fields["dur_us"].get<double>() / slowest * (plot_bottom - plot_top);
        points += fixed(x_of(list[i]->ts_ns), 1) + "," + fixed(y, 1) + " ";
      }
      s += "<polyline class=\"latency\" data-rank=\"" + std::to_string(rank) + "\" data-attempt=\"" +
           std::to_string(attempt + 1) + "\" points=\"" + points +
           "\" fill=\"none\" stroke=\"#5f6b7a\" stroke-width=\"1\"><title>" +
           xml_escape("rank " + std::to_string(rank) + " attempt " + std::to_string(attempt + 1) + ": " +
                      std::to_string(list.size()) + " ops, slowest " + fixed(slowest / 1000, 2) + " ms") +
           "</title></polyline>\n";
    }
    s += "<text x=\"" + std::to_string(kLeft + 2) + "\" y=\"" + fixed(plot_top - 2, 0) +
         "\" font-size=\"9\" fill=\"#888\">" + fixed(slowest / 1000, 2) + " ms</text>\n";
  }

  // Attempts: a labelled line at each attempt's first launch; harness deadline, restarts from the
  // log, and ncclfi arm/disarm as lines too.
  std::map<int, int64_t> attempt_start;
  for (const auto& e : h.events) {
    if (e.source == "harness" && e.event == "launch" && e.ts_ns > 0 &&
        (!attempt_start.count(e.attempt) || e.ts_ns < attempt_start[e.attempt]))
      attempt_start[e.attempt] = e.ts_ns;
  }
  for (const auto& [attempt, t] : attempt_start) {
    const double x = x_of(t);
    s += "<line class=\"attempt\" data-attempt=\"" + std::to_string(attempt + 1) + "\" x1=\"" + fixed(x, 1) +
         "\" y1=\"" + std::to_string(kTop - 14) + "\" x2=\"" + fixed(x, 1) + "\" y2=\"" +
         std::to_string(lane_bottom(max_rank)) + "\" stroke=\"#1a73e8\" stroke-dasharray=\"4 3\"/>";
    s += "<text class=\"attempt-label\" x=\"" + fixed(x + 3, 1) + "\" y=\"" + std::to_string(kTop - 16) +
         "\" font-size=\"10\" fill=\"#1a73e8\">attempt " + std::to_string(attempt + 1) + "</text>\n";
  }
  for (const auto& e : h.events) {
    std::string color, what;
    if (e.source == "harness" && e.event == "deadline") color = "#c5221f", what = "harness deadline";
    if (e.event == "restart")
      color = "#1a73e8", what = e.source == "log" ? "restart (from the log)" : "restart";
    if (e.event == "control") {
      color = "#9334e6";
      what = "ncclfi " + text_field(e.fields, "action") + " " + text_field(e.fields, "fault_id");
    }
    if (color.empty()) continue;
    const double x = x_of(e.ts_ns);
    s += "<line class=\"" + std::string(e.event == "control" ? "control" : "action") + "\" x1=\"" +
         fixed(x, 1) + "\" y1=\"" + std::to_string(kTop) + "\" x2=\"" + fixed(x, 1) + "\" y2=\"" +
         std::to_string(lane_bottom(max_rank)) + "\" stroke=\"" + color +
         "\" stroke-dasharray=\"4 3\"><title>" +
         xml_escape(what + " (attempt " + std::to_string(e.attempt + 1) + ") " + rel(e.ts_ns)) +
         "</title></line>";
    if (e.event == "control") {
      s += "<text x=\"" + fixed(x + 3, 1) + "\" y=\"" + std::to_string(kTop + 14) +
           "\" font-size=\"10\" fill=\"" + color + "\">" +
           xml_escape(text_field(e.fields, "action") + " " + text_field(e.fields, "fault_id")) + "</text>";
    }
    s += "\n";
  }

  // Injections: red diamonds in the middle of their lane.
  for (const auto& e : h.events) {
    if (e.event != "inject") continue;
    const double x = x_of(e.ts_ns);
    const int y = (lane_top(e.rank) + lane_bottom(e.rank)) / 2;
    s += "<path class=\"inject\" data-rank=\"" + std::to_string(e.rank) + "\" d=\"M" + fixed(x, 1) + " " +
         std::to_string(y - 6) + " l5 6 l-5 6 l-5 -6 z\" fill=\"#d93025\"><title>" +
         xml_escape("inject " + rel(e.ts_ns) + " " + dump(e.fields)) + "</title></path>\n";
  }
  // Detections: orange triangles at the top of their lane, above the plot and the exits.
  for (const auto& d : h.detections) {
    const double x = x_of(d.ts_ns);
    const int y = lane_top(d.rank) + 2;
    s += "<path class=\"detection\" data-rank=\"" + std::to_string(d.rank) + "\" data-y=\"" +
         std::to_string(y) + "\" d=\"M" + fixed(x, 1) + " " + std::to_string(y) +
         " l6 10 l-12 0 z\" fill=\"#f29900\"><title>" +
         xml_escape(d.mechanism + " " + rel(d.ts_ns) + " (attempt " + std::to_string(d.attempt + 1) +
                    "): " + d.evidence) +
         "</title></path>\n";
  }
  // Exits: squares at the bottom of their lane, green for 0, dark red otherwise.
  for (const auto& x : h.exits) {
    const double px = x_of(x.ts_ns);
    const int y = lane_bottom(x.rank) - 11;
    const bool ok = x.exit_code && *x.exit_code == 0 && !x.signal;
    std::string what = x.signal      ? "signal " + std::to_string(*x.signal)
                       : x.exit_code ? "exit " + std::to_string(*x.exit_code)
                                     : std::string("ended");
    if (x.killed_by_harness) what += " (killed by harness)";
    s += "<rect class=\"exit\" data-rank=\"" + std::to_string(x.rank) + "\" x=\"" + fixed(px - 5, 1) +
         "\" y=\"" + std::to_string(y) + "\" width=\"10\" height=\"10\" fill=\"" +
         (ok ? "#188038" : "#8c1d18") + "\"><title>" +
         xml_escape("rank " + std::to_string(x.rank) + " attempt " + std::to_string(x.attempt + 1) + " " +
                    what + " " + rel(x.ts_ns)) +
         "</title></rect>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace ncclfi::harness
