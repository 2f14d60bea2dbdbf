// The history of one scenario run: every event of every rank and of the harness, in one timeline.
// Launching (runner) produces it; observers add to it; checkers read only it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ncclfi::harness {

// One entry of the timeline. Sources: "harness" (launch, deadline, kill, restart, arm), "workload",
// "preload", "net", "log" (a classifier matched a rank's output line), "exit", "ras".
struct HistoryEvent {
  int64_t ts_ns = 0;    // wall clock, ns since the epoch
  int64_t mono_ns = 0;  // CLOCK_MONOTONIC of the writing host when the line had it, else 0
  int rank = -1;        // -1: the whole job / harness
  int attempt = 0;      // restart attempt (0 = first launch)
  int pid = 0;
  std::string host;
  std::string source;
  std::string event;  // ev::* names, or "detection", "launch", "exit", "deadline", "restart", ...
  nlohmann::json fields = nlohmann::json::object();
};

// How a rank process of one attempt ended.
struct RankExit {
  int rank = -1;
  int attempt = 0;
  int pid = 0;
  std::optional<int> exit_code;    // set when it exited
  std::optional<int> signal;       // set when a signal ended it
  bool killed_by_harness = false;  // teardown (deadline, interrupt, peer policy)
  int64_t ts_ns = 0;
  int64_t mono_ns = 0;  // when the harness saw it end, on its own monotonic clock (0: unknown)
  std::string host{};   // the harness's host, whose clock mono_ns is
};

// A detection: some mechanism noticed the fault (api_error, async_error, workload_watchdog,
// torch_watchdog, torch_heartbeat, nccl_tests_timeout, verification, nan_check, peer_exit,
// launcher_teardown, ras, harness_deadline, bootstrap; docs/scenarios.md).
struct Detection {
  std::string mechanism;
  int rank = -1;
  int attempt = 0;
  int64_t ts_ns = 0;
  std::string evidence;  // the log line or event that shows it
  int64_t mono_ns = 0;   // set when it came from an event that had mono_ns
  std::string host{};    // the host of that event ("" when unknown)
};

// An events.jsonl line that breaks the events contract (no event name, no wall-clock ts_ns, no
// rank): it is kept out of the timeline and reported, once per source and rank.
struct ContractError {
  std::string source;
  int rank = -1;        // as the line said, -1 when it had none
  std::string problem;  // "missing ts_ns", ...
  std::string line;     // the first offending line (clipped)
  int count = 1;        // offending lines from this source and rank
};

// One fault-free baseline run: its total time and the duration of each step (one per op/step seq,
// the slowest rank's).
struct BaselineRun {
  std::optional<double> total_s;
  std::vector<double> step_s;
};

struct History {
  std::string scenario;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int world_size = 0;
  int attempts = 1;           // launches made (1 + restarts by the harness)
  int torchrun_restarts = 0;  // restarts torchrun reported in its own output
  bool deadline_hit = false;
  bool interrupted = false;          // ncclfi was interrupted (SIGINT/SIGTERM)
  std::vector<HistoryEvent> events;  // sorted by ts_ns when judged
  std::vector<RankExit> exits;
  std::vector<Detection> detections;  // filled by the observers/classifiers
  // Per attempt, per rank: the captured output log path (relative to the run directory).
  std::vector<std::vector<std::string>> rank_logs;
  // The baseline runs (same scenario, nothing armed) when the expectation needs them; empty when
  // none ran.
  std::vector<BaselineRun> baselines;
  // Ids of the faults armed on some attempt of this run: a run that armed faults and shows no
  // inject event never passes.
  std::vector<std::string> armed_faults;
  std::vector<ContractError> contract_errors;
  // What of the run's records could not be written (a rank's events_lost line, the harness's own
  // failed writes, a full file system): such a run is judged unknown, never pass.
  std::vector<std::string> records_lost;
};

nlohmann::json to_json(const History& history);
History history_from_json(const nlohmann::json& doc);
// The host each rank ran on, from the rank's own events (not the harness's lines about it); a rank
// that wrote on several hosts (a restart elsewhere) is given its last one. Every report shows it.
std::map<int, std::string> rank_hosts(const History& history);
// "node1: 0, 3, 6; node2: 1, 4, 7" (empty when no rank's host is known).
std::string rank_hosts_text(const History& history);

}  // namespace ncclfi::harness
