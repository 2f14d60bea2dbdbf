// The History: adding events under its limits (folding), and its JSON form, what verdict.json stores so
// a report can be re-rendered later.
#include "history.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

namespace ncclfi::harness {

// The JSON form of each record, field by field: a missing key keeps the field's default, a value of the
// wrong type throws (a verdict that ncclfi did not write is unreadable as a whole, never half read).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HistoryEvent, ts_ns, mono_ns, rank, attempt, pid, host,
                                                source, event, fields)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Detection, mechanism, rank, attempt, ts_ns, evidence, mono_ns,
                                                host)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FoldedEvents, attempt, rank, source, event, count,
                                                first_ts_ns, last_ts_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ContractError, source, rank, problem, line, count)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankOutput, attempt, rank, host, last_lines, lines, dropped,
                                                skipped_lines, cut_lines, not_stored, file)
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

}  // namespace

// By hand: this nlohmann/json has no std::optional (exit_code and signal are null when unset).
void to_json(nlohmann::json& j, const RankExit& x) {
  j = {
      {"rank", x.rank},   {"attempt", x.attempt}, {"pid", x.pid},  {"killed_by_harness", x.killed_by_harness},
      {"ts_ns", x.ts_ns}, {"mono_ns", x.mono_ns}, {"host", x.host}};
  j["exit_code"] = x.exit_code ? nlohmann::json(*x.exit_code) : nlohmann::json();
  j["signal"] = x.signal ? nlohmann::json(*x.signal) : nlohmann::json();
}

void from_json(const nlohmann::json& j, RankExit& x) {
  read_opt(j, "rank", x.rank);
  read_opt(j, "attempt", x.attempt);
  read_opt(j, "pid", x.pid);
  read_opt(j, "killed_by_harness", x.killed_by_harness);
  read_opt(j, "ts_ns", x.ts_ns);
  read_opt(j, "mono_ns", x.mono_ns);
  read_opt(j, "host", x.host);
  if (auto it = j.find("exit_code"); it != j.end() && it->is_number_integer()) x.exit_code = it->get<int>();
  if (auto it = j.find("signal"); it != j.end() && it->is_number_integer()) x.signal = it->get<int>();
}

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

// An event's duration when it has one (dur_us: an op, a step): what ranks the longest of a kind.
std::optional<double> duration_us(const HistoryEvent& e) {
  const auto it = e.fields.find("dur_us");
  if (it == e.fields.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<uint64_t> window_of(const HistoryEvent& e) {
  const auto it = e.fields.find("window");
  if (it == e.fields.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return std::nullopt;
  return it->get<uint64_t>();
}

// Min-heap order on duration: the shortest of the longest is at the front, the first to go.
bool runs_longer(const HistoryEvent& a, const HistoryEvent& b) {
  return duration_us(a).value_or(0) > duration_us(b).value_or(0);
}

// An event that slid out of the last ones stays held when it is among the kind's kKeepLongestEvents
// longest: a stall in the middle of a long run must still be drawn and found. Returns what is to be
// counted instead: the event itself, the shorter one it displaced, or nothing.
std::optional<HistoryEvent> hold_if_longest(History& h, History::Fold& fold, HistoryEvent e) {
  const auto dur = duration_us(e);
  if (!dur) return e;
  auto& heap = fold.longest;
  if (heap.size() < kKeepLongestEvents) {
    heap.push_back(std::move(e));
    std::push_heap(heap.begin(), heap.end(), runs_longer);
    ++h.last_events_held;
    return std::nullopt;
  }
  if (*dur <= duration_us(heap.front()).value_or(0)) return e;
  std::pop_heap(heap.begin(), heap.end(), runs_longer);
  std::optional<HistoryEvent> out(std::move(heap.back()));
  heap.back() = std::move(e);
  std::push_heap(heap.begin(), heap.end(), runs_longer);
  return out;
}

// An event that opens a new window of its fault (its `window` differs from the kind's latest) is held
// for good, and so is the one before it, the last of the window that closed: each window of a flapping
// fault keeps its edges however many injections fill it. True when the event was held here.
bool hold_window_edges(History& h, History::Fold& fold, const HistoryEvent& e) {
  const auto window = window_of(e);
  if (!window) return false;
  const auto previous = std::exchange(fold.window, window);
  if (!previous || *previous == *window || fold.seen < kKeepFirstEvents) return false;
  if (fold.window_edges + 2 > kKeepWindowEdges) return false;
  // The closing window's last event is the newest held back, unless it opened that window itself
  // (then it is held already) or is among the first events.
  if (!fold.last_events.empty() && window_of(fold.last_events.back()) == previous) {
    h.events.push_back(std::move(fold.last_events.back()));
    fold.last_events.pop_back();
    --h.last_events_held;
    ++fold.window_edges;
  }
  h.events.push_back(e);
  ++fold.window_edges;
  ++fold.seen;
  return true;
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
  if (hold_window_edges(history, fold, event)) return;
  const bool past_first = fold.seen >= kKeepFirstEvents;
  if (auto slid = hold_first_and_last(fold, history.events, fold.last_events, std::move(event),
                                      kKeepFirstEvents, kKeepLastEvents)) {
    if (auto counted = hold_if_longest(history, fold, std::move(*slid))) fold_event(history, fold, *counted);
  } else if (past_first) {
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
    for (auto& e : fold.longest) history.events.push_back(std::move(e));
    fold.last_events.clear();
    fold.longest.clear();
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
  doc["contract_errors"] = history.contract_errors;
  doc["records_lost"] = history.records_lost;
  doc["own_mps"] = history.own_mps;
  doc["mps_failures"] = history.mps_failures;
  doc["rank_output"] = history.rank_output;
  auto& events = doc["events"] = history.events;
  for (const auto& [key, fold] : history.event_folds) {
    for (const auto& e : fold.last_events) events.push_back(e);  // not settled yet
    for (const auto& e : fold.longest) events.push_back(e);
  }
  doc["exits"] = history.exits;
  auto& detections = doc["detections"] = history.detections;
  for (const auto& [key, fold] : history.detection_folds) {
    for (const auto& d : fold.last_detections) detections.push_back(d);
  }
  doc["folded"] = history.folded;
  return doc;
}

History history_from_json(const nlohmann::json& doc) {
  History h;
  if (!doc.is_object()) return h;
  read_opt(doc, "scenario", h.scenario);
  read_opt(doc, "start_ns", h.start_ns);
  read_opt(doc, "end_ns", h.end_ns);
  read_opt(doc, "world_size", h.world_size);
  // A verdict.json is a file anyone may have edited: a declared size past the largest job a scenario may
  // name (workload.ranks, 4096) would size a report's tables and lanes; it reads as unknown instead, and
  // the reports go by the ranks the history holds.
  if (h.world_size < 0 || h.world_size > kMaxWorldSize) h.world_size = 0;
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
  read_opt(doc, "contract_errors", h.contract_errors);
  read_opt(doc, "records_lost", h.records_lost);
  read_opt(doc, "own_mps", h.own_mps);
  read_opt(doc, "mps_failures", h.mps_failures);
  read_opt(doc, "rank_output", h.rank_output);
  read_opt(doc, "events", h.events);
  read_opt(doc, "exits", h.exits);
  read_opt(doc, "detections", h.detections);
  read_opt(doc, "folded", h.folded);
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

double seconds_between(int64_t from_ts_ns, int64_t from_mono_ns, const std::string& from_host,
                       int64_t to_ts_ns, int64_t to_mono_ns, const std::string& to_host) {
  if (from_mono_ns > 0 && to_mono_ns > 0 && from_host == to_host) {
    return static_cast<double>(to_mono_ns - from_mono_ns) / 1e9;
  }
  return static_cast<double>(to_ts_ns - from_ts_ns) / 1e9;
}

}  // namespace ncclfi::harness
