// The event log observer: events.jsonl lines into HistoryEvents, and the workload events that mean
// "a mechanism noticed the fault" into Detections.
#include <algorithm>
#include <array>
#include <fstream>
#include <optional>
#include <sstream>

#include "injection_ledger.h"
#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"
#include "observe.h"

namespace ncclfi::harness {

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
  if (event == ev::kWatchdogFired) return std::string(kWorkloadWatchdogMechanism.name);
  if (event == ev::kNcclError) return std::string(kApiErrorMechanism.name);
  if (event == ev::kAsyncError) return std::string(kAsyncErrorMechanism.name);
  if (event == ev::kResultMismatch) return std::string(kVerificationMechanism.name);
  if (event == ev::kNanDetected) return std::string(kNanCheckMechanism.name);
  if (event == ev::kDone) {
    auto it = fields.find("verified");
    if (it != fields.end() && it->is_boolean() && !it->get<bool>())
      return std::string(kVerificationMechanism.name);
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

// A rank of the job, or -1 for the job itself. Without a known world size any int is taken.
bool rank_in_job(const nlohmann::json& rank, int world_size) {
  if (!rank.is_number_integer()) return false;
  const auto r = rank.get<int64_t>();
  return r >= -1 && r < (world_size > 0 ? world_size : INT32_MAX);
}

// What the line lacks of the events contract (every line: an event name, a wall-clock ts_ns > 0 and
// the writer's rank, -1 for the job, a rank of the job otherwise), or "" when it keeps it.
std::string contract_problem(const nlohmann::json& doc, int world_size) {
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
  if (!missing.empty()) return "missing or invalid " + missing;
  // A rank outside the job is out of contract, not a new row: every report sizes its rows by rank
  // (a stated rank of 100000000 made the HTML report allocate for 1e8 ranks).
  if (!rank_in_job(*it, world_size))
    return "rank " + it->dump() + " outside the job (-1 to " + std::to_string(world_size - 1) + ")";
  return "";
}

// More distinct offenders than this are counted in the last entry: the list stays small however
// many sources or ranks a hostile log invents.
constexpr size_t kMaxContractErrors = 32;
constexpr size_t kMaxRecordsLost = 32;

void record_contract_error(History& history, const nlohmann::json& doc, std::string problem,
                           std::string_view line) {
  std::string source = "?";
  if (auto it = doc.find("source"); it != doc.end() && it->is_string()) source = it->get<std::string>();
  int rank = -1;
  if (auto it = doc.find("rank"); it != doc.end() && rank_in_job(*it, 0)) rank = it->get<int>();
  for (auto& e : history.contract_errors) {
    if (e.source == source && e.rank == rank) {
      ++e.count;
      return;
    }
  }
  if (history.contract_errors.size() >= kMaxContractErrors) {
    ++history.contract_errors.back().count;
    return;
  }
  constexpr size_t kMaxLine = 200;
  std::string shown(line.substr(0, kMaxLine));
  if (line.size() > kMaxLine) shown += "...";
  history.contract_errors.push_back(ContractError{source, rank, std::move(problem), std::move(shown), 1});
}

}  // namespace

bool observe_event_line(std::string_view line, History& history, int default_attempt) {
  return observe_event_line(line, history, default_attempt, nullptr);
}

bool observe_event_line(std::string_view line, History& history, int default_attempt,
                        InjectionLedger* ledger) {
  if (line.size() > kMaxEventLineBytes) {
    record_contract_error(history, nlohmann::json::object(),
                          "longer than " + std::to_string(kMaxEventLineBytes) + " bytes", line);
    return true;
  }
  nlohmann::json doc;
  try {
    doc = parse_json_input(line, {kMaxJsonDepth, /*reject_duplicate_keys=*/false});
  } catch (const JsonInputError& e) {
    if (e.expected().find("nesting") == std::string::npos) return false;  // torn or corrupt
    record_contract_error(history, nlohmann::json::object(),
                          "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", line);
    return true;
  }
  if (!doc.is_object()) return false;
  if (std::string problem = contract_problem(doc, history.world_size); !problem.empty()) {
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
  if (ledger != nullptr && e.event == ev::kInject) {
    ledger->claimed(std::move(e));
    return true;
  }
  // An abort or exit that states its exit code mostly repeats what the rank's own event said before it
  // (the exit 3 after watchdog_fired): it adds a detection only when the rank has none of that kind yet.
  const bool states_exit_code = stated_exit_code(e.event, e.fields).has_value();
  if (const std::string mechanism = mechanism_for_event(e.event, e.fields);
      !mechanism.empty() && !(states_exit_code && already_detected(history, mechanism, e.rank, e.attempt))) {
    add_detection(history,
                  Detection{mechanism, e.rank, e.attempt, e.ts_ns, evidence_for(e), e.mono_ns, e.host});
  }
  // The first lines that say records were lost are enough: the run is unknown either way.
  if (e.event == ev::kEventsLost && history.records_lost.size() < kMaxRecordsLost) {
    history.records_lost.push_back(e.source + " rank " + std::to_string(e.rank) + " (pid " +
                                   std::to_string(e.pid) + ") could not write " +
                                   e.fields.value("lost", nlohmann::json(0)).dump() + " event line(s)");
  }
  if (e.event == ev::kNcclEnvRead) add_nccl_env_read(history.nccl_env, e.fields);
  add_event(history, std::move(e));
  return true;
}

EventLogReadStats read_event_log(const std::string& path, History& history, int default_attempt) {
  EventLogReadStats stats;
  std::ifstream in(path, std::ios::binary);
  if (!in) return stats;
  // Line by line with bounded memory: a line longer than the limit is kept only in part, which is
  // enough to report it.
  std::string text;
  size_t full = 0;
  while (read_bounded_line(in, text, kMaxEventLineBytes + 1, &full)) {
    const bool complete = !in.eof();
    std::string_view line(text);
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
