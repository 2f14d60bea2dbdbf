// The run's timeline (html_timeline.h): the marks, drawn on the frame of html_timeline_frame.h.
#include "html_timeline.h"

#include <algorithm>
#include <map>

#include "drill_report.h"
#include "html_timeline_frame.h"
#include "html_timeline_marks.h"
#include "report_text.h"

namespace ncclfi::harness {

using namespace timeline;

namespace {

// The zoom range: the union of the fault windows, widened by a tenth of its span (at least 0.5 s) on
// each side; without an injection, the whole run.
std::pair<double, double> zoom_range(const Frame& f, const std::vector<FaultWindowSpan>& windows) {
  double zoom0 = f.left, zoom1 = kWidth - kRight;
  if (!windows.empty()) {
    int64_t a = windows.front().start_ns, b = windows.front().end_ns;
    for (const auto& w : windows) {
      a = std::min(a, w.start_ns);
      b = std::max(b, w.end_ns);
    }
    const auto margin = std::max<int64_t>((b - a) / 10, 500'000'000);
    zoom0 = std::max<double>(f.left, f.x_of(a - margin));
    zoom1 = std::min<double>(kWidth - kRight, f.x_of(b + margin));
  }
  return {zoom0, zoom1};
}

// Scales to the page's width: the viewBox keeps the picture's proportions (text is never stretched),
// width 100% and height auto size it; data-viewbox keeps the whole run's box for the zoom button.
std::string svg_open(const Frame& f, const std::string& id, std::pair<double, double> zoom) {
  const std::string box = "0 0 " + std::to_string(kWidth) + " " + std::to_string(f.height);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" id=\"timeline-" + xml_escape(id) +
         "\" width=\"100%\" viewBox=\"" + box + "\" data-viewbox=\"" + box + "\" data-zoom=\"" +
         fixed(zoom.first, 1) + " " + fixed(zoom.second, 1) + "\" data-zero=\"" +
         (f.from_injection ? "first-injection" : "start") + "\" data-start-s=\"" + fixed(f.seconds(f.t0), 3) +
         "\" role=\"img\" style=\"height:auto\">\n";
}

// Fault windows, shaded under everything else across the lanes of the ranks they hit.
std::string fault_window_marks(const Frame& f, const std::vector<FaultWindowSpan>& windows) {
  std::string s;
  for (const auto& w : windows) {
    if (w.end_ns < f.t0) continue;
    const std::string fault = w.window == 0 ? w.fault_id : w.fault_id + " #" + std::to_string(w.window);
    const double x0 = f.x_of(std::max(w.start_ns, f.t0));
    const double width = std::max(3.0, f.x_of(w.end_ns) - x0);
    const bool whole_job = w.ranks.count(-1) > 0 || w.ranks.empty();
    const int top = whole_job ? kTop : f.lane_top(*w.ranks.begin());
    const int bottom = whole_job ? f.lanes_bottom() : f.lane_bottom(*w.ranks.rbegin());
    s += "<rect class=\"fault-window\" data-fault-id=\"" + xml_escape(w.fault_id) + "\" data-window=\"" +
         std::to_string(w.window) + "\" data-start-s=\"" + fixed(f.seconds(w.start_ns), 3) +
         "\" data-end-s=\"" + fixed(f.seconds(w.end_ns), 3) + "\" x=\"" + fixed(x0, 1) + "\" y=\"" +
         std::to_string(top) + "\" width=\"" + fixed(width, 1) + "\" height=\"" +
         std::to_string(bottom - top) + "\" fill=\"#d93025\" fill-opacity=\"0.10\"><title>" +
         xml_escape("fault " + fault + ": " + f.rel(w.start_ns) + " to " + f.rel(w.end_ns) +
                    (w.healed ? " (healed)" : "")) +
         "</title></rect>";
    s += svg_label(f, x0 + 2, kTop - 4, fault, 10, "fault-label", "#d93025") + "\n";
  }
  return s;
}

// The expected detection band: the expectation's detection_s bounds after the first injection, cut to
// the span; none without an injection or a bound. A detection inside it is on time.
std::string expected_detection_band(const Frame& f, const Expectation& expect) {
  if (!f.from_injection || !expect.detection_s) return "";
  const Bounds& b = *expect.detection_s;
  const int64_t from = f.zero + static_cast<int64_t>(b.min.value_or(0) * 1e9);
  const int64_t to = b.max ? f.zero + static_cast<int64_t>(*b.max * 1e9) : f.t1;
  if (from > f.t1) return "";
  const double x0 = f.x_of(std::max(from, f.t0)), x1 = f.x_of(std::min(to, f.t1));
  const std::string what = "expected detection " + fixed(b.min.value_or(0), 2) + " to " +
                           (b.max ? fixed(*b.max, 2) + " s" : std::string("the end")) +
                           " after the first injection";
  return "<rect class=\"expected-detection\" data-min-s=\"" + fixed(b.min.value_or(0), 3) +
         "\" data-max-s=\"" + (b.max ? fixed(*b.max, 3) : std::string("")) + "\" x=\"" + fixed(x0, 1) +
         "\" y=\"" + std::to_string(kTop) + "\" width=\"" + fixed(std::max(2.0, x1 - x0), 1) +
         "\" height=\"" + std::to_string(f.lanes_bottom() - kTop) +
         "\" fill=\"#188038\" fill-opacity=\"0.10\" stroke=\"#188038\" stroke-opacity=\"0.4\" "
         "stroke-dasharray=\"2 2\"><title>" +
         xml_escape(what) + "</title></rect>" +
         svg_label(f, x0 + 2, kTop + kJobRow - 6, "expected detection", 10, "band-label", "#188038") + "\n";
}

// Lanes: the job's row, then one per rank, each rank's host under its name (cut to the labels' column,
// whole in its title).
std::string lane_marks(const Frame& f, const std::map<int, std::string>& hosts) {
  std::string s;
  for (int r = -1; r <= f.max_rank; ++r) {
    const int bottom = f.lane_bottom(r), middle = (f.lane_top(r) + bottom) / 2;
    s += "<line x1=\"" + std::to_string(f.left) + "\" y1=\"" + std::to_string(bottom) + "\" x2=\"" +
         std::to_string(kWidth - kRight) + "\" y2=\"" + std::to_string(bottom) + "\" stroke=\"#e3e3e8\"/>";
    s += "<text class=\"lane-label\" x=\"4\" y=\"" + std::to_string(middle + 4) + "\" font-size=\"12\">" +
         (r < 0 ? std::string("job") : "rank " + std::to_string(r)) + "</text>\n";
    if (const auto host = hosts.find(r); host != hosts.end()) {
      const size_t fits = static_cast<size_t>((f.left - 8) / 6);
      const std::string shown =
          host->second.size() <= fits ? host->second : host->second.substr(0, fits - 3) + "...";
      s += "<text class=\"lane-host\" x=\"4\" y=\"" + std::to_string(middle + 18) + "\" font-size=\"10\">" +
           xml_escape(shown) + "<title>" + xml_escape(host->second) + "</title></text>\n";
    }
  }
  return s;
}

}  // namespace

std::string timeline_svg(const RunRecord& r, const std::string& id) {
  const History& h = r.history;
  const auto frame = make_frame(h);
  if (!frame) return "<p class=\"muted\">No timed events to draw.</p>";
  const Frame& f = *frame;
  // The fault windows: one per fault, attempt and window, to its heal or its last injection
  // (drill_report.h).
  const std::vector<FaultWindowSpan> windows = fault_windows(h);
  // Drawn in this order, each layer over the ones before.
  std::string s = svg_open(f, id, zoom_range(f, windows));
  s += expected_detection_band(f, r.expect);
  s += fault_window_marks(f, windows);
  s += lane_marks(f, rank_hosts(h));
  s += time_axis(f);
  s += latency_plots(f, h);
  s += event_marks(f, h);
  s += "</svg>\n";
  return s;
}

}  // namespace ncclfi::harness
