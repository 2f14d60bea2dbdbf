// The History: adding events under its limits (folding), and its JSON form, what verdict.json stores so
// a report can be re-rendered later.
#include "history.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace ncclfi::harness {
namespace {

constexpr size_t kStoredBaselineSteps = 4096;

FoldedEvents& folded_entry(History& h, History::Fold& fold, const FoldedEvents& kind) {
  if (fold.folded_index == SIZE_MAX) {
    fold.folded_index = h.folded.size();
    h.folded.push_back(kind);
  }
  return h.folded[fold.folded_index];
}

void count_folded(FoldedEvents& entry, int64_t ts_ns) {
  if (entry.count == 0 || ts_ns < entry.first_ts_ns) entry.first_ts_ns = ts_ns;
  if (entry.count == 0 || ts_ns > entry.last_ts_ns) entry.last_ts_ns = ts_ns;
  ++entry.count;
}

// The folding of one kind (events or detections): its first `keep_first` go to `held` for good, the
// latest `keep_last` wait in `window`; returns the one that slid out of the window, to be counted.
template <typename T>
std::optional<T> hold_first_and_last(History::Fold& fold, std::vector<T>& held, std::deque<T>& window, T item,
                                     size_t keep_first, size_t keep_last) {
  if (++fold.seen <= keep_first) {
    held.push_back(std::move(item));
    return std::nullopt;
  }
  window.push_back(std::move(item));
  if (window.size() <= keep_last) return std::nullopt;
  std::optional<T> slid(std::move(window.front()));
  window.pop_front();
  return slid;
}

// A folded event keeps its step duration: timing verdicts compare every step.
void keep_step_sample(History& h, const HistoryEvent& e) {
  const auto sample = step_sample(e);
  if (!sample) return;
  FoldedSteps& steps = h.folded_steps[e.attempt];
  if (!sample->seq) {
    steps.unnumbered.push_back(sample->seconds);
  } else if (*sample->seq >= 0 && *sample->seq < kDenseStepSeqs) {
    const auto i = static_cast<size_t>(*sample->seq);
    if (steps.slowest_by_seq.size() <= i)
      steps.slowest_by_seq.resize(i + 1, std::numeric_limits<double>::quiet_NaN());
    double& slowest = steps.slowest_by_seq[i];
    slowest = std::isnan(slowest) ? sample->seconds : std::max(slowest, sample->seconds);
  } else {
    steps.sparse_seqs.emplace_back(*sample->seq, sample->seconds);
  }
}

void fold_event(History& h, History::Fold& fold, const HistoryEvent& e) {
  count_folded(folded_entry(h, fold, FoldedEvents{e.attempt, e.rank, e.source, e.event}), e.ts_ns);
  keep_step_sample(h, e);
}

// Past the limits on kinds or held events: one "*" entry counts them, and the contract error says so.
void fold_past_limits(History& h, const HistoryEvent& e) {
  auto it =
      std::find_if(h.folded.begin(), h.folded.end(), [](const FoldedEvents& f) { return f.source == "*"; });
  if (it == h.folded.end()) {
    h.folded.push_back(FoldedEvents{-1, -1, "*", "*"});
    it = h.folded.end() - 1;
    h.contract_errors.push_back(ContractError{
        "*", -1,
        "more than " + std::to_string(kMaxEventKinds) + " kinds of event or " +
            std::to_string(kMaxKeptEvents) + " events held: events of later kinds are counted, not judged",
        e.source + ":" + e.event, 0});
  }
  count_folded(*it, e.ts_ns);
  for (auto& c : h.contract_errors) {
    if (c.source == "*") ++c.count;
  }
  keep_step_sample(h, e);
}

size_t held_events(const History& h) {
  return h.events.size() + h.last_events_held;
}

template <typename T>
void read_opt(const nlohmann::json& doc, const char* key, T& out) {
  if (auto it = doc.find(key); it != doc.end() && !it->is_null()) out = it->get<T>();
}

nlohmann::json event_to_json(const HistoryEvent& e) {
  nlohmann::json j = {{"ts_ns", e.ts_ns}, {"rank", e.rank},     {"attempt", e.attempt}, {"pid", e.pid},
                      {"host", e.host},   {"source", e.source}, {"event", e.event},     {"fields", e.fields}};
  if (e.mono_ns != 0) j["mono_ns"] = e.mono_ns;
  return j;
}

HistoryEvent event_from_json(const nlohmann::json& j) {
  HistoryEvent e;
  read_opt(j, "ts_ns", e.ts_ns);
  read_opt(j, "mono_ns", e.mono_ns);
  read_opt(j, "rank", e.rank);
  read_opt(j, "attempt", e.attempt);
  read_opt(j, "pid", e.pid);
  read_opt(j, "host", e.host);
  read_opt(j, "source", e.source);
  read_opt(j, "event", e.event);
  if (auto it = j.find("fields"); it != j.end() && it->is_object()) e.fields = *it;
  return e;
}

nlohmann::json exit_to_json(const RankExit& x) {
  nlohmann::json j = {{"rank", x.rank},
                      {"attempt", x.attempt},
                      {"pid", x.pid},
                      {"killed_by_harness", x.killed_by_harness},
                      {"ts_ns", x.ts_ns}};
  j["exit_code"] = x.exit_code ? nlohmann::json(*x.exit_code) : nlohmann::json();
  j["signal"] = x.signal ? nlohmann::json(*x.signal) : nlohmann::json();
  return j;
}

RankExit exit_from_json(const nlohmann::json& j) {
  RankExit x;
  read_opt(j, "rank", x.rank);
  read_opt(j, "attempt", x.attempt);
  read_opt(j, "pid", x.pid);
  read_opt(j, "killed_by_harness", x.killed_by_harness);
  read_opt(j, "ts_ns", x.ts_ns);
  if (auto it = j.find("exit_code"); it != j.end() && it->is_number_integer()) x.exit_code = it->get<int>();
  if (auto it = j.find("signal"); it != j.end() && it->is_number_integer()) x.signal = it->get<int>();
  return x;
}

nlohmann::json detection_to_json(const Detection& d) {
  return {{"mechanism", d.mechanism}, {"rank", d.rank},       {"attempt", d.attempt}, {"ts_ns", d.ts_ns},
          {"evidence", d.evidence},   {"mono_ns", d.mono_ns}, {"host", d.host}};
}

Detection detection_from_json(const nlohmann::json& j) {
  Detection d;
  read_opt(j, "mechanism", d.mechanism);
  read_opt(j, "rank", d.rank);
  read_opt(j, "attempt", d.attempt);
  read_opt(j, "ts_ns", d.ts_ns);
  read_opt(j, "evidence", d.evidence);
  read_opt(j, "mono_ns", d.mono_ns);
  read_opt(j, "host", d.host);
  return d;
}

nlohmann::json folded_to_json(const FoldedEvents& f) {
  return {{"attempt", f.attempt},      {"rank", f.rank},   {"source", f.source},
          {"event", f.event},          {"count", f.count}, {"first_ts_ns", f.first_ts_ns},
          {"last_ts_ns", f.last_ts_ns}};
}

FoldedEvents folded_from_json(const nlohmann::json& j) {
  FoldedEvents f;
  read_opt(j, "attempt", f.attempt);
  read_opt(j, "rank", f.rank);
  read_opt(j, "source", f.source);
  read_opt(j, "event", f.event);
  read_opt(j, "count", f.count);
  read_opt(j, "first_ts_ns", f.first_ts_ns);
  read_opt(j, "last_ts_ns", f.last_ts_ns);
  return f;
}

}  // namespace

namespace {

void note_longest_op(History& history, const HistoryEvent& event) {
  const bool timed_by_preload = event.source == "preload" && event.event == "op_time";
  const bool workload_op = event.source == "workload" && event.event == "op";
  if (!timed_by_preload && !workload_op) return;
  if (workload_op) {
    const auto op = event.fields.find("op");
    if (op == event.fields.end() || !op->is_string() || op->get<std::string>() == "train_step") return;
  }
  const auto dur = event.fields.find("dur_us");
  if (dur == event.fields.end() || !dur->is_number()) return;
  history.longest_op_us = std::max(history.longest_op_us.value_or(0.0), dur->get<double>());
}

}  // namespace

void add_event(History& history, HistoryEvent event) {
  note_longest_op(history, event);
  // An injection's kind is its fault's: a crash that follows a million delays is its own kind, held.
  std::string name = event.event;
  if (const auto id = event.fields.find("fault_id"); id != event.fields.end() && id->is_string())
    name += "#" + id->get<std::string>();
  auto key = std::make_tuple(event.attempt, event.rank, event.source, std::move(name));
  auto it = history.event_folds.find(key);
  if (it == history.event_folds.end()) {
    if (history.event_folds.size() >= kMaxEventKinds || held_events(history) >= kMaxKeptEvents) {
      fold_past_limits(history, event);
      return;
    }
    it = history.event_folds.emplace(std::move(key), History::Fold{}).first;
  }
  History::Fold& fold = it->second;
  if (auto slid = hold_first_and_last(fold, history.events, fold.last_events, std::move(event),
                                      kKeepFirstEvents, kKeepLastEvents)) {
    fold_event(history, fold, *slid);
  } else if (fold.seen > kKeepFirstEvents) {
    ++history.last_events_held;
  }
}

void add_detection(History& history, Detection detection) {
  auto key = std::make_tuple(detection.attempt, detection.rank, detection.mechanism);
  History::Fold& fold = history.detection_folds[std::move(key)];  // mechanisms are a fixed list
  if (auto slid = hold_first_and_last(fold, history.detections, fold.last_detections, std::move(detection),
                                      kKeepFirstDetections, kKeepLastDetections)) {
    count_folded(
        folded_entry(history, fold, FoldedEvents{slid->attempt, slid->rank, "detection", slid->mechanism}),
        slid->ts_ns);
  }
}

void settle_history(History& history) {
  for (auto& [key, fold] : history.event_folds) {
    for (auto& e : fold.last_events) history.events.push_back(std::move(e));
    fold.last_events.clear();
  }
  history.last_events_held = 0;
  for (auto& [key, fold] : history.detection_folds) {
    for (auto& d : fold.last_detections) history.detections.push_back(std::move(d));
    fold.last_detections.clear();
  }
}

int64_t total_events(const History& history) {
  auto n = static_cast<int64_t>(held_events(history));
  for (const auto& f : history.folded) {
    if (f.source != "detection") n += f.count;
  }
  return n;
}

nlohmann::json to_json(const History& history) {
  nlohmann::json doc = {{"scenario", history.scenario},
                        {"start_ns", history.start_ns},
                        {"end_ns", history.end_ns},
                        {"world_size", history.world_size},
                        {"attempts", history.attempts},
                        {"torchrun_restarts", history.torchrun_restarts},
                        {"deadline_hit", history.deadline_hit},
                        {"interrupted", history.interrupted},
                        {"rank_logs", history.rank_logs}};
  auto& baselines = doc["baselines"] = nlohmann::json::array();
  for (const auto& b : history.baselines) {
    // The judge has compared every step; the file keeps the first ones and how many there were.
    const size_t stored = std::min(b.step_s.size(), kStoredBaselineSteps);
    baselines.push_back(
        {{"total_s", b.total_s ? nlohmann::json(*b.total_s) : nlohmann::json()},
         {"step_s", std::vector<double>(b.step_s.begin(), b.step_s.begin() + static_cast<long>(stored))},
         {"steps", b.step_s.size()}});
  }
  doc["armed_faults"] = history.armed_faults;
  auto& contract = doc["contract_errors"] = nlohmann::json::array();
  for (const auto& c : history.contract_errors) {
    contract.push_back({{"source", c.source},
                        {"rank", c.rank},
                        {"problem", c.problem},
                        {"line", c.line},
                        {"count", c.count}});
  }
  doc["records_lost"] = history.records_lost;
  auto& output = doc["rank_output"] = nlohmann::json::array();
  for (const auto& o : history.rank_output) {
    output.push_back({{"attempt", o.attempt},
                      {"rank", o.rank},
                      {"host", o.host},
                      {"last_lines", o.last_lines},
                      {"lines", o.lines},
                      {"dropped", o.dropped},
                      {"skipped_lines", o.skipped_lines},
                      {"cut_lines", o.cut_lines},
                      {"not_stored", o.not_stored},
                      {"file", o.file}});
  }
  auto& events = doc["events"] = nlohmann::json::array();
  for (const auto& e : history.events) events.push_back(event_to_json(e));
  for (const auto& [key, fold] : history.event_folds) {
    for (const auto& e : fold.last_events) events.push_back(event_to_json(e));  // not settled yet
  }
  auto& exits = doc["exits"] = nlohmann::json::array();
  for (const auto& x : history.exits) exits.push_back(exit_to_json(x));
  auto& detections = doc["detections"] = nlohmann::json::array();
  for (const auto& d : history.detections) detections.push_back(detection_to_json(d));
  for (const auto& [key, fold] : history.detection_folds) {
    for (const auto& d : fold.last_detections) detections.push_back(detection_to_json(d));
  }
  auto& folded = doc["folded"] = nlohmann::json::array();
  for (const auto& f : history.folded) folded.push_back(folded_to_json(f));
  return doc;
}

History history_from_json(const nlohmann::json& doc) {
  History h;
  if (!doc.is_object()) return h;
  read_opt(doc, "scenario", h.scenario);
  read_opt(doc, "start_ns", h.start_ns);
  read_opt(doc, "end_ns", h.end_ns);
  read_opt(doc, "world_size", h.world_size);
  read_opt(doc, "attempts", h.attempts);
  read_opt(doc, "torchrun_restarts", h.torchrun_restarts);
  read_opt(doc, "deadline_hit", h.deadline_hit);
  read_opt(doc, "interrupted", h.interrupted);
  if (auto it = doc.find("rank_logs"); it != doc.end() && it->is_array()) {
    h.rank_logs = it->get<std::vector<std::vector<std::string>>>();
  }
  for (const auto& b : doc.value("baselines", nlohmann::json::array())) {
    BaselineRun run;
    if (auto it = b.find("total_s"); it != b.end() && it->is_number()) run.total_s = it->get<double>();
    read_opt(b, "step_s", run.step_s);
    h.baselines.push_back(std::move(run));
  }
  read_opt(doc, "armed_faults", h.armed_faults);
  for (const auto& c : doc.value("contract_errors", nlohmann::json::array())) {
    ContractError e;
    read_opt(c, "source", e.source);
    read_opt(c, "rank", e.rank);
    read_opt(c, "problem", e.problem);
    read_opt(c, "line", e.line);
    read_opt(c, "count", e.count);
    h.contract_errors.push_back(std::move(e));
  }
  read_opt(doc, "records_lost", h.records_lost);
  for (const auto& o : doc.value("rank_output", nlohmann::json::array())) {
    if (!o.is_object()) continue;
    RankOutput r;
    read_opt(o, "attempt", r.attempt);
    read_opt(o, "rank", r.rank);
    read_opt(o, "host", r.host);
    read_opt(o, "last_lines", r.last_lines);
    read_opt(o, "lines", r.lines);
    read_opt(o, "dropped", r.dropped);
    read_opt(o, "skipped_lines", r.skipped_lines);
    read_opt(o, "cut_lines", r.cut_lines);
    read_opt(o, "not_stored", r.not_stored);
    read_opt(o, "file", r.file);
    h.rank_output.push_back(std::move(r));
  }
  for (const auto& e : doc.value("events", nlohmann::json::array())) h.events.push_back(event_from_json(e));
  for (const auto& x : doc.value("exits", nlohmann::json::array())) h.exits.push_back(exit_from_json(x));
  for (const auto& d : doc.value("detections", nlohmann::json::array())) {
    h.detections.push_back(detection_from_json(d));
  }
  for (const auto& f : doc.value("folded", nlohmann::json::array())) {
    if (f.is_object()) h.folded.push_back(folded_from_json(f));
  }
  return h;
}

std::map<int, std::string> rank_hosts(const History& history) {
  std::map<int, std::string> hosts;
  for (const auto& e : history.events) {
    if (e.rank < 0 || e.host.empty() || e.source == "harness" || e.source == "log" || e.source == "exit")
      continue;
    hosts[e.rank] = e.host;
  }
  return hosts;
}

std::string rank_hosts_text(const History& history) {
  std::map<std::string, std::vector<int>> by_host;
  for (const auto& [rank, host] : rank_hosts(history)) by_host[host].push_back(rank);
  std::string text;
  for (const auto& [host, ranks] : by_host) {
    text += (text.empty() ? "" : "; ") + host + ":";
    for (size_t i = 0; i < ranks.size(); ++i) text += (i == 0 ? " " : ", ") + std::to_string(ranks[i]);
  }
  return text;
}

}  // namespace ncclfi::harness
