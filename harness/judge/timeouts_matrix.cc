#include "timeouts_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "judge.h"
#include "mechanisms.h"
#include "ncclfi/event_log.h"
#include "ncclfi/fault_kind_list.h"
#include "ncclfi/ib_retry_budget.h"
#include "ncclfi/plan.h"
#include "noise.h"
#include "text_format.h"

namespace ncclfi::cli {

using nlohmann::json;

namespace {

// The layer and kind of a matrix fault, from the kind's own spec.
json kind_of(const FaultKindSpec& kind) {
  return {{"layer", to_string(kind.layer)}, {"kind", std::string(kind.kind)}};
}

// Nearest-rank percentile of a sorted vector.
double percentile(const std::vector<double>& sorted, double p) {
  const size_t n = sorted.size();
  const auto at = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  return sorted[std::min(n - 1, at == 0 ? 0 : at - 1)];
}

}  // namespace

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
    case MatrixFault::kNicDown:
      return "nic_down";
    case MatrixFault::kSilentPeer:
      return "silent_peer";
    case MatrixFault::kConnectSilent:
      return "connect_silent";
  }
  return "?";
}

const std::vector<MatrixFault>& all_matrix_faults() {
  static const std::vector<MatrixFault> kAll = {
      MatrixFault::kStall,    MatrixFault::kGpuHang, MatrixFault::kHostHang,   MatrixFault::kDeadRank,
      MatrixFault::kNetError, MatrixFault::kNicDown, MatrixFault::kSilentPeer, MatrixFault::kConnectSilent};
  return kAll;
}

std::string matrix_fault_names() {
  std::string names;
  const auto& all = all_matrix_faults();
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) names += i + 1 == all.size() ? " or " : ", ";
    names += to_string(all[i]);
  }
  return names;
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

bool needs_net_shim(MatrixFault fault) {
  return fault == MatrixFault::kNicDown || fault == MatrixFault::kSilentPeer;
}

json matrix_fault_json(MatrixFault fault, const FaultPlacement& at) {
  const json api_target = {{"ranks", {at.rank}}, {"ops", {"allreduce"}}};
  const json api_trigger = {{"after_calls", at.after_calls}, {"count", 1}};
  json f = {{"id", to_string(fault)}};
  switch (fault) {
    case MatrixFault::kStall:  // on the GPU, so the watchdog sees exactly a slow collective
      f.update(kind_of(kinds::kApiGpuHang));
      f["params"] = {{"ms", at.stall_s * 1000}};
      break;
    case MatrixFault::kGpuHang:
      f.update(kind_of(kinds::kApiGpuHang));
      break;
    case MatrixFault::kHostHang:
      f.update(kind_of(kinds::kApiHang));
      break;
    case MatrixFault::kNetError:
      f.update(kind_of(kinds::kApiAsyncError));
      f["params"] = {{"code", "ncclRemoteError"}};
      break;
    case MatrixFault::kDeadRank:
      f.update(kind_of(kinds::kProcKill));
      f["target"] = {{"ranks", {at.rank}}};
      f["trigger"] = {{"after_ms", at.after_ms}};
      f["params"] = {{"signal", "SIGKILL"}};
      return json::array({f});
    // Net faults count the rank's own sends and receives on the shim (net/isend, net/irecv).
    case MatrixFault::kNicDown:  // once down, nothing of the rank completes again: one firing is enough
      f.update(kind_of(kinds::kNetNicDown));
      f["target"] = {{"ranks", {at.rank}}};
      f["trigger"] = {{"after_calls", at.after_calls}, {"count", 1}};
      return json::array({f});
    case MatrixFault::kSilentPeer:  // every later request is swallowed: the connections stay open
      f.update(kind_of(kinds::kNetDrop));
      f["target"] = {{"ranks", {at.rank}}};
      f["trigger"] = {{"after_calls", at.after_calls}, {"count", 0}};
      return json::array({f});
    case MatrixFault::kConnectSilent:  // at the rank's first communicator creation, for ever
      f.update(kind_of(kinds::kApiInitHang));
      f["target"] = {{"ranks", {at.rank}}};
      f["trigger"] = {{"after_calls", 1}, {"count", 1}};
      return json::array({f});
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
  t.detected = t.fired && d && d->mechanism != harness::kHarnessDeadlineMechanism.name;
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
    const double s = harness::seconds_between(d->ts_ns, d->mono_ns, d->host, x.ts_ns, x.mono_ns, x.host);
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
    p.median_step_s = harness::median(sorted);
    p.step_spread_s = percentile(sorted, 95) - percentile(sorted, 5);
  }
  p.startup_s = harness::median(startups);
  if (!startups.empty()) p.fastest_startup_s = *std::min_element(startups.begin(), startups.end());
  p.total_s = harness::median(totals);
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
  return harness::median(gather(trials, [](const TrialResult& t) { return t.detection_s; }));
}
std::optional<double> Cell::max_detection_s() const {
  const auto v = gather(trials, [](const TrialResult& t) { return t.detection_s; });
  if (v.empty()) return std::nullopt;
  return *std::max_element(v.begin(), v.end());
}
std::optional<double> Cell::median_gone_s() const {
  return harness::median(gather(trials, [](const TrialResult& t) { return t.gone_s; }));
}
std::optional<double> Cell::median_resumed_s() const {
  return harness::median(gather(trials, [](const TrialResult& t) { return t.resumed_s; }));
}

std::string Cell::text() const {
  if (!skipped.empty()) return "skipped: " + skipped;
  const int n = static_cast<int>(trials.size());
  const auto of = [n](int k) { return std::to_string(k) + "/" + std::to_string(n); };
  const int errors = static_cast<int>(
      std::count_if(trials.begin(), trials.end(), [](const auto& t) { return !t.error.empty(); }));
  const std::string rerun_note =
      reruns > 0 ? " (" + std::to_string(reruns) + " run again: fault never fired)" : "";
  if (fired() == 0)
    return (errors > 0 ? "harness error " + of(errors) : "fault never fired " + of(0)) + rerun_note;
  std::string text;
  const auto mechs = mechanisms();
  const std::string by = mechs.empty() ? "" : " " + mechs.front();
  if (is_survivable(fault)) {
    text = false_alarms() > 0
               ? "FALSE ALARM " + of(false_alarms()) + by + " " + harness::seconds_text(median_detection_s())
               : "survived " + of(fired() - hung());
    if (hung() > 0) text += ", HUNG " + of(hung());
  } else {
    if (detected() > 0) {
      text = "detected " + of(detected()) + by + " " + harness::seconds_text(median_detection_s());
      if (detected() > 1) text += " (max " + harness::seconds_text(max_detection_s()) + ")";
    }
    if (hung() > 0) text += std::string(text.empty() ? "" : ", ") + "HUNG " + of(hung());
    const int quiet = fired() - detected() - hung();
    if (quiet > 0) text += std::string(text.empty() ? "" : ", ") + "undetected " + of(quiet);
    if (median_gone_s()) text += ", gone " + harness::seconds_text(median_gone_s());
    if (left_running() > 0) text += ", still running at the deadline " + of(left_running());
    if (median_resumed_s()) text += ", resumed " + harness::seconds_text(median_resumed_s());
  }
  if (fired() < n) text += " [fired " + of(fired()) + "]";
  return text + rerun_note;
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
  std::string what = "the largest healthy step (" + harness::seconds_text(healthy.largest_step_s) +
                     ", over " + std::to_string(healthy.step_s.size()) + " steps in " +
                     std::to_string(healthy.trials) + " healthy trials)";
  // The IB budget is often milliseconds on a fast job: its sentence reads short times in milliseconds.
  std::string ib_what = "the largest healthy step (" + harness::duration_text(healthy.largest_step_s) + ")";
  if (healthy.longest_op_s && *healthy.longest_op_s > longest) {
    longest = *healthy.longest_op_s;
    what = "the longest healthy op (" + harness::seconds_text(healthy.longest_op_s) + ")";
    ib_what = "the longest healthy op (" + harness::duration_text(healthy.longest_op_s) + ")";
  }
  rec.timeout_s = std::ceil(longest * margin * 10) / 10;
  char factor[16];
  std::snprintf(factor, sizeof factor, "%.1f", margin);
  rec.text = "recommended collective timeout: at least " + harness::seconds_text(rec.timeout_s) + " = " +
             factor + " x " + what;
  // NCCL's IB retry budget must clear the same stretch: a queue pair whose peer is silent for longer than
  // the budget fails with IBV_WC_RETRY_EXC_ERR, and NCCL ends the communicator.
  const IbRetrySettings defaults;
  rec.ib_need_s = longest * margin;
  rec.ib_timeout = min_ib_timeout(*rec.ib_need_s, defaults.retry_count);
  if (rec.ib_timeout) {
    const auto budget = ib_retry_budget({*rec.ib_timeout, defaults.retry_count});
    rec.ib_budget_s = static_cast<double>(budget->count()) / 1e6;
    rec.ib_text = "recommended NCCL_IB_TIMEOUT: at least " + std::to_string(*rec.ib_timeout) +
                  " (retry budget 4.096 us x 2^" + std::to_string(*rec.ib_timeout) +
                  " x (NCCL_IB_RETRY_CNT " + std::to_string(defaults.retry_count) +
                  " + 1) = " + harness::duration_text(rec.ib_budget_s) + ", over " + factor + " x " + what +
                  " = " + harness::duration_text(rec.ib_need_s) + ")";
  } else {
    rec.ib_text = "no NCCL_IB_TIMEOUT clears " + std::string(factor) + " x " + ib_what;
  }
  return rec;
}

std::optional<int> min_ib_timeout(double need_s, int retry_count) {
  for (int e = 1; e < 32; ++e) {
    const auto budget = ib_retry_budget({e, retry_count});
    if (budget && static_cast<double>(budget->count()) / 1e6 > need_s) return e;
  }
  return std::nullopt;
}

std::optional<std::string> ib_timeout_finding(const TimeoutSetting& s, const Recommendation& rec) {
  if (!rec.ib_need_s || !rec.ib_timeout) return std::nullopt;
  const auto timeout = s.env.find("NCCL_IB_TIMEOUT");
  const auto retries = s.env.find("NCCL_IB_RETRY_CNT");
  if (timeout == s.env.end() && retries == s.env.end()) return std::nullopt;
  // Read as ib_retry_settings_from_env reads a rank's: a value that is not a number keeps NCCL's default.
  IbRetrySettings ib;
  const auto read = [](const std::string& text, int& out) {
    char* end = nullptr;
    const long n = std::strtol(text.c_str(), &end, 10);
    if (!text.empty() && end != nullptr && *end == '\0') out = static_cast<int>(n);
  };
  if (timeout != s.env.end()) read(timeout->second, ib.timeout_exponent);
  if (retries != s.env.end()) read(retries->second, ib.retry_count);
  const auto budget = ib_retry_budget(ib);
  if (!budget) return std::nullopt;  // 0 or 32 and up: the queue pair never gives up
  const double budget_s = static_cast<double>(budget->count()) / 1e6;
  if (budget_s > *rec.ib_need_s) return std::nullopt;
  return "setting " + s.name + " sets NCCL_IB_TIMEOUT=" + std::to_string(ib.timeout_exponent) +
         " with NCCL_IB_RETRY_CNT=" + std::to_string(ib.retry_count) + ": NCCL's IB retry budget (" +
         harness::duration_text(budget_s) + ") is not above the recommended " +
         harness::duration_text(rec.ib_need_s) + " (NCCL_IB_TIMEOUT " + std::to_string(*rec.ib_timeout) +
         " or more): a slow healthy step may fail its queue pairs with IBV_WC_RETRY_EXC_ERR";
}

bool timeout_under_recommendation(const TimeoutSetting& s, const Recommendation& rec) {
  return rec.timeout_s && s.timeout_s && *s.timeout_s < *rec.timeout_s;
}

bool never_detected(const Cell& c) {
  return !is_survivable(c.fault) && c.fired() > 0 && c.hung() >= c.fired();
}

std::vector<std::string> cell_findings(const Cell& c) {
  std::vector<std::string> findings;
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
                       " fired in only " + std::to_string(c.fired()) + "/" + std::to_string(c.trials.size()) +
                       " trials: the others say nothing about the setting");
  }
  return findings;
}

bool cell_has_finding(const Cell& c) {
  return never_detected(c) || !cell_findings(c).empty();
}

std::vector<std::string> matrix_findings(const std::vector<TimeoutSetting>& settings,
                                         const std::vector<Cell>& cells, const Recommendation& rec) {
  std::vector<std::string> findings;
  // A fault the job never detected in any trial where it fired: the job stays hung (the finding).
  for (const auto& s : settings) {
    std::string never;
    for (const auto& c : cells) {
      if (c.setting == s.name && never_detected(c))
        never += std::string(never.empty() ? "" : " and ") + to_string(c.fault);
    }
    if (!never.empty()) {
      findings.push_back("setting " + s.name + " never detected " + never +
                         ": the job stays hung until something outside kills it");
    }
  }
  for (const auto& c : cells) {
    for (auto& f : cell_findings(c)) findings.push_back(std::move(f));
  }
  for (const auto& s : settings) {
    if (timeout_under_recommendation(s, rec)) {
      findings.push_back("setting " + s.name + " declares a timeout of " +
                         harness::seconds_text(s.timeout_s) + ", under the recommended " +
                         harness::seconds_text(rec.timeout_s) + ": a slow healthy step may trip it");
    }
    if (auto ib = ib_timeout_finding(s, rec)) findings.push_back(std::move(*ib));
  }
  return findings;
}

}  // namespace ncclfi::cli
