#include "timeouts_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "judge.h"
#include "ncclfi/event_log.h"
#include "ncclfi/plan.h"
#include "report_text.h"

namespace ncclfi::cli {

using nlohmann::json;

namespace {

constexpr const char* kHarnessDeadline = "harness_deadline";

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Nearest-rank percentile of a sorted vector.
double percentile(const std::vector<double>& sorted, double p) {
  const size_t n = sorted.size();
  const auto at = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  return sorted[std::min(n - 1, at == 0 ? 0 : at - 1)];
}

std::string secs(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, *v < 10 ? "%.2f s" : "%.1f s", *v);
  return buf;
}

json opt(std::optional<double> v) {
  return v ? json(*v) : json();
}

[[noreturn]] void bad(const std::string& file, const std::string& pointer, const std::string& expected,
                      const json& found) {
  throw std::invalid_argument(file + ": " + (pointer.empty() ? "/" : pointer) + ": expected " + expected +
                              ", got " + describe_json(found));
}

// Seconds between two moments, on the monotonic clock when both have it from one host.
double seconds_between(int64_t from_ns, int64_t from_mono, const std::string& from_host, int64_t to_ns,
                       int64_t to_mono, const std::string& to_host) {
  if (from_mono > 0 && to_mono > 0 && from_host == to_host)
    return static_cast<double>(to_mono - from_mono) / 1e9;
  return static_cast<double>(to_ns - from_ns) / 1e9;
}

}  // namespace

std::vector<TimeoutSetting> parse_timeout_settings(const json& doc, const std::string& file) {
  if (!doc.is_object() || !doc.contains("settings")) bad(file, "", "an object with \"settings\"", doc);
  const json& list = doc["settings"];
  if (!list.is_array() || list.empty()) bad(file, "/settings", "a non-empty array of settings", list);
  std::vector<TimeoutSetting> settings;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = "/settings/" + std::to_string(i);
    const json& s = list[i];
    if (!s.is_object()) bad(file, at, "a setting object", s);
    for (const auto& [key, value] : s.items()) {
      static const std::vector<std::string> kKeys = {"name", "summary",      "params",
                                                     "env",  "max_restarts", "timeout_s"};
      if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
        bad(file, at + "/" + key, "one of name, summary, params, env, max_restarts, timeout_s", "key " + key);
    }
    TimeoutSetting t;
    if (!s.contains("name") || !s["name"].is_string() || s["name"].get<std::string>().empty())
      bad(file, at + "/name", "a non-empty name", s.value("name", json()));
    t.name = s["name"].get<std::string>();
    for (const auto& other : settings) {
      if (other.name == t.name) bad(file, at + "/name", "a name no other setting has", s["name"]);
    }
    if (t.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
        std::string::npos)
      bad(file, at + "/name", "letters, digits, '-', '_' or '.' (it names run directories)", s["name"]);
    if (s.contains("summary")) {
      if (!s["summary"].is_string()) bad(file, at + "/summary", "text", s["summary"]);
      t.summary = s["summary"].get<std::string>();
    }
    if (s.contains("params")) {
      if (!s["params"].is_object())
        bad(file, at + "/params", "an object of scenario parameters", s["params"]);
      for (const auto& [k, v] : s["params"].items()) {
        if (!v.is_string() && !v.is_number() && !v.is_array())
          bad(file, at + "/params/" + k, "text, a number or a list of words", v);
        t.params[k] = v;
      }
    }
    if (s.contains("env")) {
      if (!s["env"].is_object()) bad(file, at + "/env", "an object of environment variables", s["env"]);
      for (const auto& [k, v] : s["env"].items()) {
        if (!v.is_string()) bad(file, at + "/env/" + k, "a string value", v);
        t.env[k] = v.get<std::string>();
      }
    }
    if (s.contains("max_restarts")) {
      if (!s["max_restarts"].is_number_integer() || s["max_restarts"].get<int>() < 0 ||
          s["max_restarts"].get<int>() > 100)
        bad(file, at + "/max_restarts", "an integer from 0 to 100", s["max_restarts"]);
      t.max_restarts = s["max_restarts"].get<int>();
    }
    if (s.contains("timeout_s")) {
      if (!s["timeout_s"].is_number() || s["timeout_s"].get<double>() <= 0 ||
          s["timeout_s"].get<double>() > 86400)
        bad(file, at + "/timeout_s", "seconds, > 0 and at most a day", s["timeout_s"]);
      t.timeout_s = s["timeout_s"].get<double>();
    }
    settings.push_back(std::move(t));
  }
  return settings;
}

const char* to_string(MatrixFault fault) {
  switch (fault) {
    case MatrixFault::kStall:
      return "stall";
    case MatrixFault::kGpuHang:
      return "gpu_hang";
    case MatrixFault::kHostHang:
      return "host_hang";
    case MatrixFault::kDeadRank:
      return "dead_rank";
    case MatrixFault::kNetError:
      return "net_error";
  }
  return "?";
}

const std::vector<MatrixFault>& all_matrix_faults() {
  static const std::vector<MatrixFault> kAll = {MatrixFault::kStall, MatrixFault::kGpuHang,
                                                MatrixFault::kHostHang, MatrixFault::kDeadRank,
                                                MatrixFault::kNetError};
  return kAll;
}

std::optional<MatrixFault> matrix_fault_from_string(const std::string& name) {
  for (const auto f : all_matrix_faults()) {
    if (name == to_string(f)) return f;
  }
  return std::nullopt;
}

bool is_survivable(MatrixFault fault) {
  return fault == MatrixFault::kStall;
}

json matrix_fault_json(MatrixFault fault, const FaultPlacement& at) {
  const json api_target = {{"ranks", {at.rank}}, {"ops", {"allreduce"}}};
  const json api_trigger = {{"after_calls", at.after_calls}, {"count", 1}};
  json f = {{"id", to_string(fault)}};
  switch (fault) {
    case MatrixFault::kStall:  // on the GPU, so the watchdog sees exactly a slow collective
      f.update({{"layer", "api"}, {"kind", "gpu_hang"}, {"params", {{"ms", at.stall_s * 1000}}}});
      break;
    case MatrixFault::kGpuHang:
      f.update({{"layer", "api"}, {"kind", "gpu_hang"}});
      break;
    case MatrixFault::kHostHang:
      f.update({{"layer", "api"}, {"kind", "hang"}});
      break;
    case MatrixFault::kNetError:
      f.update({{"layer", "api"}, {"kind", "async_error"}, {"params", {{"code", "ncclRemoteError"}}}});
      break;
    case MatrixFault::kDeadRank:
      return json::array({{{"id", to_string(fault)},
                           {"layer", "proc"},
                           {"kind", "kill"},
                           {"target", {{"ranks", {at.rank}}}},
                           {"trigger", {{"after_ms", at.after_ms}}},
                           {"params", {{"signal", "SIGKILL"}}}}});
  }
  f["target"] = api_target;
  f["trigger"] = api_trigger;
  return json::array({f});
}

TrialResult read_trial(const harness::RunRecord& r, MatrixFault fault) {
  TrialResult t;
  t.run_dir = r.run_dir;
  t.error = r.harness_error;
  const harness::Judgement& j = r.judgement;
  const harness::History& h = r.history;
  t.outcome = std::string(harness::to_string(j.outcome));
  t.fired = j.first_injection_ns.has_value();
  const auto& d = j.first_detection;
  t.detected = t.fired && d && d->mechanism != kHarnessDeadline;
  t.hung = t.fired && !t.detected && h.deadline_hit;
  t.false_alarm = t.detected && is_survivable(fault);
  if (!t.detected) return t;
  t.mechanism = d->mechanism;
  t.detection_s = j.detection_s;
  // Gone: every process of the attempt that detected it ended by itself (none by the harness).
  std::optional<double> gone;
  bool all_by_themselves = true;
  for (const auto& x : h.exits) {
    if (x.attempt != d->attempt) continue;
    if (x.killed_by_harness) all_by_themselves = false;
    const double s = seconds_between(d->ts_ns, d->mono_ns, d->host, x.ts_ns, x.mono_ns, x.host);
    gone = std::max(gone.value_or(0.0), s);
  }
  if (all_by_themselves && gone) t.gone_s = std::max(0.0, *gone);
  t.left_running = !all_by_themselves;
  // Resumed: a rank started again after the detection (a restart) and finished a step.
  std::optional<int64_t> restarted_ns;
  for (const auto& e : h.events) {
    if (e.ts_ns <= d->ts_ns) continue;
    if (!restarted_ns && e.source == "workload" && e.event == "start") restarted_ns = e.ts_ns;
    if (restarted_ns && e.source == "workload" && e.event == ev::kOp && e.ts_ns > *restarted_ns) {
      t.resumed_s = static_cast<double>(e.ts_ns - d->ts_ns) / 1e9;
      break;
    }
  }
  return t;
}

HealthyProfile profile_healthy(const std::vector<harness::RunRecord>& records) {
  HealthyProfile p;
  std::vector<double> startups, totals;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    ++p.trials;
    const auto& h = r.history;
    const auto& perf = r.judgement.performance;
    p.step_s.insert(p.step_s.end(), perf.steps_s.begin(), perf.steps_s.end());
    if (perf.total_s) totals.push_back(*perf.total_s);
    bool first_step = true;
    // The history's maximum covers the op events it folded away; the scan below, the ones it holds.
    if (h.longest_op_us) p.longest_op_s = std::max(p.longest_op_s.value_or(0.0), *h.longest_op_us / 1e6);
    for (const auto& e : h.events) {
      // The preload's op_time: a collective from its call to its completion on the GPU, as a watchdog sees
      // it.
      if (e.source == "preload" && e.event == ev::kOpTime) {
        if (const auto dur = e.fields.find("dur_us"); dur != e.fields.end() && dur->is_number())
          p.longest_op_s = std::max(p.longest_op_s.value_or(0.0), dur->get<double>() / 1e6);
        continue;
      }
      if (e.source != "workload" || e.event != ev::kOp) continue;
      if (first_step && h.start_ns > 0) {
        startups.push_back(static_cast<double>(e.ts_ns - h.start_ns) / 1e9);
        first_step = false;
      }
      const auto op = e.fields.find("op");
      const auto dur = e.fields.find("dur_us");
      if (op != e.fields.end() && op->is_string() && op->get<std::string>() != "train_step" &&
          dur != e.fields.end() && dur->is_number()) {
        p.longest_op_s = std::max(p.longest_op_s.value_or(0.0), dur->get<double>() / 1e6);
      }
    }
    if (!h.detections.empty()) {
      p.false_alarms.push_back(h.detections.front().mechanism + " in healthy trial " + std::to_string(i + 1));
    }
    if (r.harness_error.empty() && h.detections.empty() && r.judgement.outcome == harness::Outcome::kClean)
      ++p.clean;
  }
  if (!p.step_s.empty()) {
    std::vector<double> sorted = p.step_s;
    std::sort(sorted.begin(), sorted.end());
    p.largest_step_s = sorted.back();
    p.median_step_s = median(sorted);
    p.step_spread_s = percentile(sorted, 95) - percentile(sorted, 5);
  }
  p.startup_s = median(startups);
  p.total_s = median(totals);
  return p;
}

int Cell::fired() const {
  return static_cast<int>(std::count_if(trials.begin(), trials.end(), [](const auto& t) { return t.fired; }));
}
int Cell::detected() const {
  return static_cast<int>(
      std::count_if(trials.begin(), trials.end(), [](const auto& t) { return t.detected; }));
}
int Cell::hung() const {
  return static_cast<int>(std::count_if(trials.begin(), trials.end(), [](const auto& t) { return t.hung; }));
}
int Cell::left_running() const {
  return static_cast<int>(
      std::count_if(trials.begin(), trials.end(), [](const auto& t) { return t.left_running; }));
}
int Cell::false_alarms() const {
  return static_cast<int>(
      std::count_if(trials.begin(), trials.end(), [](const auto& t) { return t.false_alarm; }));
}

std::vector<std::string> Cell::mechanisms() const {
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& t : trials) {
    if (t.mechanism.empty()) continue;
    auto it =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == t.mechanism; });
    if (it == counts.end()) {
      counts.emplace_back(t.mechanism, 1);
    } else {
      ++it->second;
    }
  }
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> names;
  for (const auto& [name, n] : counts) names.push_back(name);
  return names;
}

namespace {
template <class Get>
std::vector<double> gather(const std::vector<TrialResult>& trials, Get get) {
  std::vector<double> v;
  for (const auto& t : trials) {
    if (const std::optional<double> x = get(t)) v.push_back(*x);
  }
  return v;
}
}  // namespace

std::optional<double> Cell::median_detection_s() const {
  return median(gather(trials, [](const TrialResult& t) { return t.detection_s; }));
}
std::optional<double> Cell::max_detection_s() const {
  const auto v = gather(trials, [](const TrialResult& t) { return t.detection_s; });
  if (v.empty()) return std::nullopt;
  return *std::max_element(v.begin(), v.end());
}
std::optional<double> Cell::median_gone_s() const {
  return median(gather(trials, [](const TrialResult& t) { return t.gone_s; }));
}
std::optional<double> Cell::median_resumed_s() const {
  return median(gather(trials, [](const TrialResult& t) { return t.resumed_s; }));
}

std::string Cell::text() const {
  const int n = static_cast<int>(trials.size());
  const auto of = [n](int k) { return std::to_string(k) + "/" + std::to_string(n); };
  const int errors = static_cast<int>(
      std::count_if(trials.begin(), trials.end(), [](const auto& t) { return !t.error.empty(); }));
  if (fired() == 0) return errors > 0 ? "harness error " + of(errors) : "fault never fired " + of(0);
  std::string text;
  const auto mechs = mechanisms();
  const std::string by = mechs.empty() ? "" : " " + mechs.front();
  if (is_survivable(fault)) {
    text = false_alarms() > 0 ? "FALSE ALARM " + of(false_alarms()) + by + " " + secs(median_detection_s())
                              : "survived " + of(fired() - hung());
    if (hung() > 0) text += ", HUNG " + of(hung());
  } else {
    if (detected() > 0) {
      text = "detected " + of(detected()) + by + " " + secs(median_detection_s());
      if (detected() > 1) text += " (max " + secs(max_detection_s()) + ")";
    }
    if (hung() > 0) text += std::string(text.empty() ? "" : ", ") + "HUNG " + of(hung());
    const int quiet = fired() - detected() - hung();
    if (quiet > 0) text += std::string(text.empty() ? "" : ", ") + "undetected " + of(quiet);
    if (median_gone_s()) text += ", gone " + secs(median_gone_s());
    if (left_running() > 0) text += ", still running at the deadline " + of(left_running());
    if (median_resumed_s()) text += ", resumed " + secs(median_resumed_s());
  }
  if (fired() < n) text += " [fired " + of(fired()) + "]";
  return text;
}

Recommendation recommend_timeout(const HealthyProfile& healthy, double margin) {
  Recommendation rec;
  rec.margin = margin;
  if (!healthy.largest_step_s) {
    rec.text =
        "no recommendation: the healthy job reported no training steps (emit step events with "
        "ncclfi_events, or use a job that does)";
    return rec;
  }
  // A collective can be no longer than the step that contains it, but a job may report longer ops of
  // its own (a checkpoint barrier): the timeout must clear the longest of both.
  double longest = *healthy.largest_step_s;
  std::string what = "the largest healthy step (" + secs(healthy.largest_step_s) + ", over " +
                     std::to_string(healthy.step_s.size()) + " steps in " + std::to_string(healthy.trials) +
                     " healthy trials)";
  if (healthy.longest_op_s && *healthy.longest_op_s > longest) {
    longest = *healthy.longest_op_s;
    what = "the longest healthy op (" + secs(healthy.longest_op_s) + ")";
  }
  rec.timeout_s = std::ceil(longest * margin * 10) / 10;
  char factor[16];
  std::snprintf(factor, sizeof factor, "%.1f", margin);
  rec.text =
      "recommended collective timeout: at least " + secs(rec.timeout_s) + " = " + factor + " x " + what;
  return rec;
}

std::vector<std::string> matrix_findings(const std::vector<TimeoutSetting>& settings,
                                         const std::vector<Cell>& cells, const Recommendation& rec) {
  std::vector<std::string> findings;
  // A fault the job never detected in any trial where it fired: the job stays hung (the finding).
  for (const auto& s : settings) {
    std::string never;
    for (const auto& c : cells) {
      if (c.setting != s.name || is_survivable(c.fault) || c.fired() == 0 || c.hung() < c.fired()) continue;
      never += std::string(never.empty() ? "" : " and ") + to_string(c.fault);
    }
    if (!never.empty()) {
      findings.push_back("setting " + s.name + " never detected " + never +
                         ": the job stays hung until something outside kills it");
    }
  }
  for (const auto& c : cells) {
    if (c.left_running() > 0) {
      findings.push_back("setting " + c.setting + " detected " + to_string(c.fault) + " (" +
                         (c.mechanisms().empty() ? "?" : c.mechanisms().front()) +
                         ") but nothing ended the job in " + std::to_string(c.left_running()) + "/" +
                         std::to_string(c.trials.size()) + " trials: it ran until the harness's deadline");
    }
    if (c.false_alarms() > 0) {
      findings.push_back("setting " + c.setting + " raised a false alarm on a survivable stall in " +
                         std::to_string(c.false_alarms()) + "/" + std::to_string(c.trials.size()) +
                         " trials (" + (c.mechanisms().empty() ? "?" : c.mechanisms().front()) + ")");
    }
    if (c.fired() < static_cast<int>(c.trials.size())) {
      findings.push_back(std::string("fault ") + to_string(c.fault) + " under setting " + c.setting +
                         " fired in only " + std::to_string(c.fired()) + "/" +
                         std::to_string(c.trials.size()) +
                         " trials: the others say nothing about the setting");
    }
  }
  if (rec.timeout_s) {
    for (const auto& s : settings) {
      if (s.timeout_s && *s.timeout_s < *rec.timeout_s) {
        findings.push_back("setting " + s.name + " declares a timeout of " + secs(s.timeout_s) +
                           ", under the recommended " + secs(rec.timeout_s) +
                           ": a slow healthy step may trip it");
      }
    }
  }
  return findings;
}

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
                {"text", r.recommendation.text}}},
              {"findings", r.findings},
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

std::string fault_label(MatrixFault f, double stall_s) {
  if (f == MatrixFault::kStall) return "stall " + secs(stall_s);
  return to_string(f);
}

}  // namespace

std::string matrix_text(const MatrixReport& r) {
  std::string out;
  const auto& h = r.healthy;
  out += "timeouts: " + r.scenario + ", " + std::to_string(r.trials) + " trial(s) per cell";
  if (!r.gpu.placement.empty()) out += ", " + r.gpu.placement;
  out += "\n";
  out += "healthy: " + std::to_string(h.clean) + "/" + std::to_string(h.trials) + " clean; step median " +
         secs(h.median_step_s) + ", largest " + secs(h.largest_step_s) + ", spread (p95-p5) " +
         secs(h.step_spread_s) + "; longest op " +
         (h.longest_op_s ? secs(h.longest_op_s) : std::string("(no op events beyond steps)")) +
         "; startup (launch to first step) " + secs(h.startup_s) + "; the job's own total " +
         secs(h.total_s) + "\n\n";
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
  for (const auto& s : r.settings) {
    std::string what = s.summary;
    for (const auto& [k, v] : s.env) what += std::string(what.empty() ? "" : "; ") + k + "=" + v;
    for (const auto& [k, v] : s.params)
      what += std::string(what.empty() ? "" : "; ") + "param " + k + "=" +
              (v.is_string() ? v.get<std::string>() : v.dump());
    if (s.max_restarts) what += "; torchrun --max-restarts=" + std::to_string(*s.max_restarts);
    out += "  " + s.name + ": " + what + "\n";
  }
  out += "\nfindings:\n";
  if (r.findings.empty()) out += "  none\n";
  for (const auto& f : r.findings) out += "  - " + f + "\n";
  out += "\n" + r.recommendation.text + "\n";
  if (!r.interrupted.empty()) out += "INCOMPLETE: " + r.interrupted + "\n";
  return out;
}

std::string matrix_html(const MatrixReport& r) {
  using harness::xml_escape;
  std::string html =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>ncclfi timeouts: " +
      xml_escape(r.scenario) +
      "</title>\n<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}.hung,.alarm{background:#fdd}"
      ".ok{background:#dfd}.none{background:#eee}</style></head><body>\n";
  html += "<h1>Timeouts: " + xml_escape(r.scenario) + "</h1>\n<p>" + std::to_string(r.trials) +
          " trial(s) per cell";
  if (!r.gpu.placement.empty())
    html += "; " + xml_escape(r.gpu.placement) + "; MPS: " + xml_escape(r.gpu.mps);
  html += "</p>\n";
  const auto& h = r.healthy;
  html += "<h2>Healthy job</h2><p>" + std::to_string(h.clean) + "/" + std::to_string(h.trials) +
          " clean; step median " + secs(h.median_step_s) + ", largest " + secs(h.largest_step_s) +
          ", spread " + secs(h.step_spread_s) + "; startup " + secs(h.startup_s) + "; total " +
          secs(h.total_s) + "</p>\n<h2>Matrix</h2>\n<table id=\"matrix\"><tr><th>fault</th>";
  for (const auto& s : r.settings)
    html += "<th title=\"" + xml_escape(s.summary) + "\">" + xml_escape(s.name) + "</th>";
  html += "</tr>\n";
  for (const auto f : r.faults) {
    html += "<tr><th>" + xml_escape(fault_label(f, r.stall_s)) + "</th>";
    for (const auto& s : r.settings) {
      const Cell* c = find_cell(r, s.name, f);
      std::string cls = "none";
      if (c && c->fired() > 0) cls = c->hung() > 0 ? "hung" : c->false_alarms() > 0 ? "alarm" : "ok";
      html += "<td class=\"" + cls + "\">" + xml_escape(c ? c->text() : "-") + "</td>";
    }
    html += "</tr>\n";
  }
  html += "</table>\n<h2>Findings</h2><ul>";
  for (const auto& f : r.findings) html += "<li>" + xml_escape(f) + "</li>";
  if (r.findings.empty()) html += "<li>none</li>";
  html += "</ul>\n<p><b>" + xml_escape(r.recommendation.text) + "</b></p>\n</body></html>\n";
  return html;
}

}  // namespace ncclfi::cli
