// The timeline's frame (html_timeline_frame.h).
#include "html_timeline_frame.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "job_ranks.h"
#include "report_text.h"

namespace ncclfi::harness::timeline {
namespace {

constexpr int kMaxLeft = 220;       // the lane labels' column at its widest; longer hosts are cut
constexpr double kCharWidth = 0.6;  // a character's estimated width, in ems

int64_t first_injection_ns(const History& h) {
  int64_t first = 0;
  for (const auto& e : h.events) {
    if (e.event == "inject" && e.ts_ns > 0 && (first == 0 || e.ts_ns < first)) first = e.ts_ns;
  }
  return first;
}

// The faulted attempt's first launch: the span starts there. The history's own start precedes the
// baselines that ran before the faulted run, and a clean attempt before the faulted one (faults on a
// later attempt) says nothing the picture is for. Without an injection: the first launch.
int64_t faulted_attempt_start(const History& h, int64_t first_injection) {
  int faulted = -1;
  for (const auto& e : h.events) {
    if (e.event == "inject" && e.ts_ns == first_injection) faulted = e.attempt;
  }
  int64_t start = 0;
  for (const auto& e : h.events) {
    if (e.source != "harness" || e.event != "launch" || e.ts_ns <= 0) continue;
    if (faulted >= 0 && e.attempt != faulted) continue;
    if (start == 0 || e.ts_ns < start) start = e.ts_ns;
  }
  return start;
}

// One lane per rank of the job (job_ranks: a history without a believable world size is drawn by the
// ranks it holds, and a rank past the largest job a scenario may name sizes nothing).
int last_lane_rank(const History& h) {
  const std::vector<int> ranks = job_ranks(h);
  return ranks.empty() ? -1 : ranks.back();
}

// The lane labels' column: wide enough for "rank N" and the longest host name under it.
int left_margin(const History& h) {
  double widest = 7 * 12 * kCharWidth;  // "rank NN" at 12 px
  for (const auto& [rank, host] : rank_hosts(h))
    widest = std::max(widest, static_cast<double>(host.size()) * 10 * kCharWidth);
  return std::min(kMaxLeft, static_cast<int>(std::ceil(widest)) + 12);
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

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double Frame::x_of(int64_t t) const {
  const double span = static_cast<double>(t1 - t0);
  const double plot_width = kWidth - left - kRight;
  return left + static_cast<double>(t - t0) / span * plot_width;
}

std::string Frame::rel(int64_t t) const {
  const double s = seconds(t);
  return (s >= 0 ? "+" : "") + fixed(s, 3) + " s";
}

std::optional<Frame> make_frame(const History& h) {
  Frame f;
  const int64_t injection = first_injection_ns(h);
  f.t0 = faulted_attempt_start(h, injection);
  if (f.t0 <= 0) f.t0 = h.start_ns;
  f.t1 = h.end_ns;
  // Widened to every event after the start (an exit seen after the history's end).
  for (const auto& e : h.events) f.t1 = std::max(f.t1, e.ts_ns);
  for (const auto& x : h.exits) f.t1 = std::max(f.t1, x.ts_ns);
  for (const auto& d : h.detections) f.t1 = std::max(f.t1, d.ts_ns);
  if (f.t0 <= 0 || f.t1 <= f.t0) return std::nullopt;
  f.from_injection = injection != 0;
  f.zero = f.from_injection ? injection : f.t0;
  f.max_rank = last_lane_rank(h);
  f.left = left_margin(h);
  f.height = f.lanes_top + (f.max_rank + 1) * kLane + kAxis;
  return f;
}

std::string svg_label(const Frame& f, double x, double y, const std::string& text, int font_size,
                      const std::string& cls, const std::string& fill) {
  const double width = static_cast<double>(text.size()) * font_size * kCharWidth;
  std::string anchor = "start";
  if (x + width > kWidth - kRight) {
    anchor = "end";
    x = std::max(x, f.left + width);  // an end-anchored label must not start among the lane labels
    x = std::min(x, static_cast<double>(kWidth - kRight));
  }
  return "<text class=\"" + cls + "\" x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" font-size=\"" +
         std::to_string(font_size) + "\" text-anchor=\"" + anchor + "\" fill=\"" + fill + "\">" +
         xml_escape(text) + "</text>";
}

std::string time_axis(const Frame& f) {
  std::string s;
  const double first_s = f.seconds(f.t0), last_s = f.seconds(f.t1);
  const double step = nice_step(last_s - first_s, 6);
  const int axis_y = f.height - kAxis + 14;
  for (double v = std::ceil(first_s / step) * step; v <= last_s + 1e-9; v += step) {
    const double x = f.x_of(f.zero + static_cast<int64_t>(v * 1e9));
    const double shown = std::fabs(v) < step / 1000 ? 0.0 : v;
    const std::string tick = (shown > 0 ? "+" : "") + fixed(shown, step < 0.1 ? 2 : (step < 1 ? 1 : 0));
    // The ticks at the ends are anchored inwards: a centred one would stick out of the picture.
    const double half = static_cast<double>(tick.size()) * 10 * kCharWidth / 2;
    const char* anchor = x - half < 0 ? "start" : x + half > kWidth ? "end" : "middle";
    s += "<line x1=\"" + fixed(x, 1) + "\" y1=\"" + std::to_string(axis_y - 12) + "\" x2=\"" + fixed(x, 1) +
         "\" y2=\"" + std::to_string(axis_y - 8) + "\" stroke=\"#999\"/><text class=\"tick\" x=\"" +
         fixed(x, 1) + "\" y=\"" + std::to_string(axis_y) + "\" font-size=\"10\" text-anchor=\"" + anchor +
         "\" fill=\"#666\">" + tick + "</text>";
  }
  s += svg_label(f, kWidth - kRight, f.height - 5,
                 f.from_injection ? "s from the first injection" : "s from the start (no injection)", 10,
                 "axis-label", "#666");
  return s + "\n";
}

}  // namespace ncclfi::harness::timeline
