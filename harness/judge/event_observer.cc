// The event log observer: events.jsonl lines into HistoryEvents, and the workload events that mean
// "a mechanism noticed the fault" into Detections.
#include <algorithm>
#include <array>
#include <fstream>
#include <optional>
#include <sstream>

#include "ncclfi/event_log.h"
#include "observe.h"

namespace ncclfi::harness {

const std::vector<std::string>& known_mechanisms() {
  static const std::vector<std::string> names = {"api_error",
                                                 "async_error",
                                                 "workload_watchdog",
                                                 "torch_watchdog",
                                                 "torch_heartbeat",
                                                 "nccl_tests_timeout",
                                                 "verification",
                                                 "nan_check",
                                                 "peer_exit",
                                                 "launcher_teardown",
                                                 "ras",
                                                 "harness_deadline",
                                                 "bootstrap"};
  return names;
}

bool is_known_mechanism(std::string_view name) {
  const auto& names = known_mechanisms();
  return std::find(names.begin(), names.end(), name) != names.end();
}

namespace {

std::optional<int> stated_exit_code(const std::string& event, const nlohmann::json& fields) {
  const char* key = event == ev::kAbort ? "exit_code" : event == ev::kExit ? "code" : nullptr;
  if (key == nullptr) return std::nullopt;
  auto it = fields.find(key);
  if (it == fields.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

// The mechanism a workload event stands for, or "".
std::string mechanism_for_event(const std::string& event, const nlohmann::json& fields) {
  if (event == ev::kWatchdogFired) return "workload_watchdog";
  if (event == ev::kNcclError) return "api_error";
  if (event == ev::kAsyncError) return "async_error";
  if (event == ev::kResultMismatch) return "verification";
  if (event == ev::kNanDetected) return "nan_check";
  if (event == ev::kDone) {
    auto it = fields.find("verified");
    if (it != fields.end() && it->is_boolean() && !it->get<bool>()) return "verification";
  }
  // The workload's last word names its exit code (cpu-ring: abort.exit_code; ncclfi-workload:
  // exit.code). Under srun or mpirun that is the only per-rank exit status the harness gets (the
  // launcher exits once for all ranks), and a bootstrap failure has no event of its own.
  if (const auto code = stated_exit_code(event, fields)) return mechanism_for_exit_code(*code);
  return "";
}

// The rank already has this detection in this attempt.
bool already_detected(const History& history, const std::string& mechanism, int rank, int attempt) {
  return std::any_of(history.detections.begin(), history.detections.end(), [&](const Detection& d) {
    return d.mechanism == mechanism && d.rank == rank && d.attempt == attempt;
  });
}

std::string evidence_for(const HistoryEvent& e) {
  std::string text = e.source + ":" + e.event;
  if (!e.fields.empty())
    text += " " + e.fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text;
}

template <typename T>
void take(nlohmann::json& doc, const char* key, T& out) {
  auto it = doc.find(key);
  if (it == doc.end()) return;
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    // A field of the wrong type keeps the default; the line is still useful.
  }
  doc.erase(it);
}

// What the line lacks of the events contract (every line: an event name, a wall-clock ts_ns > 0 and
// the writer's rank, -1 for the job), or "" when it keeps it.
std::string contract_problem(const nlohmann::json& doc) {
  std::string missing;
  auto need = [&](const char* key, bool ok) {
    if (!ok) missing += (missing.empty() ? "" : ", ") + std::string(key);
  };
  auto it = doc.find("event");
  need("event", it != doc.end() && it->is_string() && !it->get<std::string>().empty());
  it = doc.find("ts_ns");
  need("ts_ns", it != doc.end() && it->is_number_integer() && it->get<int64_t>() > 0);
  it = doc.find("rank");
  need("rank", it != doc.end() && it->is_number_integer());
  return missing.empty() ? "" : "missing or invalid " + missing;
}

void record_contract_error(History& history, const nlohmann::json& doc, std::string problem,
                           std::string_view line) {
  const std::string source = doc.value("source", std::string("?"));
  int rank = -1;
  if (auto it = doc.find("rank"); it != doc.end() && it->is_number_integer()) rank = it->get<int>();
  for (auto& e : history.contract_errors) {
    if (e.source == source && e.rank == rank) {
      ++e.count;
      return;
    }
  }
  constexpr size_t kMaxLine = 200;
  std::string shown(line.substr(0, kMaxLine));
  if (line.size() > kMaxLine) shown += "...";
  history.contract_errors.push_back(ContractError{source, rank, std::move(problem), std::move(shown), 1});
}

}  // namespace

bool observe_event_line(std::string_view line, History& history, int default_attempt) {
  nlohmann::json doc = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return false;
  if (std::string problem = contract_problem(doc); !problem.empty()) {
    record_contract_error(history, doc, std::move(problem), line);
    return true;  // read, and reported: not a torn or corrupt line
  }
  HistoryEvent e;
  e.attempt = default_attempt;
  take(doc, "ts_ns", e.ts_ns);
  take(doc, "mono_ns", e.mono_ns);
  take(doc, "rank", e.rank);
  take(doc, "pid", e.pid);
  take(doc, "host", e.host);
  take(doc, "source", e.source);
  take(doc, "event", e.event);
  take(doc, "attempt", e.attempt);
  e.fields = std::move(doc);
  // An abort or exit that states its exit code mostly repeats what the rank's own event said before it
  // (the exit 3 after watchdog_fired): it adds a detection only when the rank has none of that kind yet.
  const bool states_exit_code = stated_exit_code(e.event, e.fields).has_value();
  if (const std::string mechanism = mechanism_for_event(e.event, e.fields);
      !mechanism.empty() && !(states_exit_code && already_detected(history, mechanism, e.rank, e.attempt))) {
    history.detections.push_back(
        Detection{mechanism, e.rank, e.attempt, e.ts_ns, evidence_for(e), e.mono_ns, e.host});
  }
  history.events.push_back(std::move(e));
  return true;
}

EventLogReadStats read_event_log(const std::string& path, History& history, int default_attempt) {
  EventLogReadStats stats;
  std::ifstream in(path, std::ios::binary);
  if (!in) return stats;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool complete = end != std::string::npos;
    if (!complete) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++stats.lines;
    if (observe_event_line(line, history, default_attempt)) {
      ++stats.events;
    } else if (!complete) {
      // A writer killed mid-line (or still writing): the last line is torn, not corrupt.
      stats.torn_tail = true;
    } else {
      ++stats.bad_lines;
    }
  }
  return stats;
}

}  // namespace ncclfi::harness
