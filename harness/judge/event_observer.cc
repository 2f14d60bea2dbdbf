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

}  // namespace

bool observe_event_line(std::string_view line, History& history, int default_attempt) {
  nlohmann::json doc = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return false;
  HistoryEvent e;
  e.attempt = default_attempt;
  int64_t mono_ns = 0;
  take(doc, "ts_ns", e.ts_ns);
  take(doc, "mono_ns", mono_ns);
  take(doc, "rank", e.rank);
  take(doc, "pid", e.pid);
  take(doc, "host", e.host);
  take(doc, "source", e.source);
  take(doc, "event", e.event);
  take(doc, "attempt", e.attempt);
  e.fields = std::move(doc);
  if (mono_ns != 0) e.fields["mono_ns"] = mono_ns;
  // An abort or exit that states its exit code mostly repeats what the rank's own event said before it
  // (the exit 3 after watchdog_fired): it adds a detection only when the rank has none of that kind yet.
  const bool states_exit_code = stated_exit_code(e.event, e.fields).has_value();
  if (const std::string mechanism = mechanism_for_event(e.event, e.fields);
      !mechanism.empty() && !(states_exit_code && already_detected(history, mechanism, e.rank, e.attempt))) {
    history.detections.push_back(Detection{mechanism, e.rank, e.attempt, e.ts_ns, evidence_for(e)});
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
