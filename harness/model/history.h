// The history of one scenario run: every event of every rank and of the harness, in one timeline.
// Launching (runner) produces it; observers add to it; checkers read only it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "nccl_env.h"

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

// The end of one rank's output in a job with node agents, as its host's agent streamed it
// (harness/agents/rank_output_tail.h holds the limits): its last lines, oldest first, and the counts of
// what did not travel.
struct RankOutput {
  int attempt = 0;
  int rank = -1;
  std::string host;
  std::vector<std::string> last_lines;
  int64_t lines = 0;          // lines the agent read of it
  int64_t dropped = 0;        // not streamed: over the node's byte budget (still in the tail)
  int64_t skipped_lines = 0;  // not kept on its node: over the spool's cap (still counted)
  int64_t cut_lines = 0;      // cut to the line limit
  int64_t not_stored = 0;     // streamed but not written to `file`: over its cap
  std::string file;           // the streamed lines, relative to the run directory ("" when none)
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

// How much of a long run the history holds. The events of one kind (attempt, rank, source, event name;
// for an injection, also its fault id) are kept while they are the first kKeepFirstEvents or the last
// kKeepLastEvents of their kind, and so are the extremes between them, which a report must still draw
// and a reader still find: the kKeepLongestEvents longest ones (by dur_us: the stalls and longest waits)
// and the events at the edges of a fault's windows (the first and last of each `window` value, up to
// kKeepWindowEdges per kind). The others are counted (FoldedEvents) and their step durations kept as
// numbers (FoldedSteps), so memory and verdict.json stay bounded however many events a run writes.
// events.jsonl, on disk, has every line. Detections fold the same way per (mechanism, rank, attempt),
// first and last only. A kind first seen once kMaxKeptEvents events are held, or past kMaxEventKinds
// kinds, is counted only, and that is reported as a contract error (the `events` check is then
// unknown, never pass).
inline constexpr size_t kKeepFirstEvents = 32;
// The largest job a scenario may name (the schema's workload.ranks): a bound on what a read verdict.json
// may declare.
inline constexpr int kMaxWorldSize = 4096;
inline constexpr size_t kMaxMpsFailures = 12;  // History::mps_failures
inline constexpr size_t kKeepLastEvents = 32;
inline constexpr size_t kKeepLongestEvents = 32;
inline constexpr size_t kKeepWindowEdges = 256;
inline constexpr size_t kKeepFirstDetections = 8;
inline constexpr size_t kKeepLastDetections = 8;
inline constexpr size_t kMaxEventKinds = 8192;
inline constexpr size_t kMaxKeptEvents = 100000;
// Step seqs below this are kept in a flat array (8 bytes a seq); others one pair per event.
inline constexpr int64_t kDenseStepSeqs = int64_t{1} << 22;

// Events of one kind the history counted instead of holding. source "detection": folded detections of
// mechanism `event`; source "*": events of kinds past the limits.
struct FoldedEvents {
  int attempt = 0;
  int rank = -1;
  std::string source;
  std::string event;
  int64_t count = 0;
  int64_t first_ts_ns = 0;
  int64_t last_ts_ns = 0;
};

// One step sample: an op or step event's duration and seq (noise.cc decides which events are steps).
struct StepSample {
  std::optional<int64_t> seq;
  double seconds = 0;
};

// The step samples of one attempt's folded events: per seq the longest (NaN: none), then the rest.
struct FoldedSteps {
  std::vector<double> slowest_by_seq;                   // seq in [0, kDenseStepSeqs)
  std::vector<std::pair<int64_t, double>> sparse_seqs;  // other seqs, one pair per event
  std::vector<double> unnumbered;
};

struct History {
  std::string scenario;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int world_size = 0;
  int attempts = 1;           // launches made (1 + restarts by the harness)
  int torchrun_restarts = 0;  // restarts torchrun reported in its own output
  // The longest op of the run, µs, over every event (folded ones too): the preload's op_time or a workload
  // op other than a training step. What `ncclfi timeouts` calls the longest collective.
  std::optional<double> longest_op_us;
  bool deadline_hit = false;
  bool interrupted = false;          // ncclfi was interrupted (SIGINT/SIGTERM)
  std::vector<HistoryEvent> events;  // sorted by ts_ns when judged
  std::vector<RankExit> exits;
  std::vector<Detection> detections;  // filled by the observers/classifiers
  // Per attempt, per rank: the captured output log path (relative to the run directory).
  std::vector<std::vector<std::string>> rank_logs;
  // The ranks' last output lines, from their hosts' agents (a job with launcher.nodes), per attempt.
  std::vector<RankOutput> rank_output;
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
  // Shared-GPU mode: whether some attempt ran under ncclfi's own MPS daemons, and the lines in which
  // their MPS servers reported failing themselves ("attempt N, gK: <line>", at most kMaxMpsFailures). A
  // job that failed after such a line may have failed because of the mode, not of itself.
  bool own_mps = false;
  std::vector<std::string> mps_failures;
  // Not in verdict.json (the judgement's notes are): the NCCL_* variables the ranks were given and what
  // NCCL read of them (the preload's nccl_env_read events, NCCL's INFO lines).
  NcclEnvObserved nccl_env;
  // The events and detections counted instead of held (kKeepFirstEvents above).
  std::vector<FoldedEvents> folded;
  // Not in verdict.json: the folded events' step samples by attempt, and the folding's working state
  // (per kind: how many seen, the latest ones held back until settle_history()).
  std::map<int, FoldedSteps> folded_steps;
  struct Fold {
    size_t seen = 0;
    size_t folded_index = SIZE_MAX;  // into `folded`
    std::deque<HistoryEvent> last_events;
    std::deque<Detection> last_detections;
    // The extremes past the first events (kKeepLongestEvents above): a min-heap on dur_us, and the
    // window of the kind's latest event with the window edges held so far.
    std::vector<HistoryEvent> longest;
    std::optional<uint64_t> window;
    size_t window_edges = 0;
  };
  std::map<std::tuple<int, int, std::string, std::string>, Fold> event_folds;
  size_t last_events_held = 0;  // in event_folds (last_events, longest), not yet in `events`
  std::map<std::tuple<int, int, std::string>, Fold> detection_folds;
};

// Adds an event or a detection under the limits above. Every observer adds through these.
// Seconds from one moment to another: on the monotonic clock when both carry it (mono_ns > 0) from one
// host, immune to wall-clock steps; else on the wall clock.
double seconds_between(int64_t from_ts_ns, int64_t from_mono_ns, const std::string& from_host,
                       int64_t to_ts_ns, int64_t to_mono_ns, const std::string& to_host);

void add_event(History& history, HistoryEvent event);
void add_detection(History& history, Detection detection);
// Moves the last events and detections of each kind into `events` and `detections` (judge() calls it
// first); afterwards the history is one timeline again.
void settle_history(History& history);
// Events held and counted (history.events.size() + every folded count).
int64_t total_events(const History& history);

// The step sample of an event, or nullopt when it is not a timed op/step (noise.cc).
std::optional<StepSample> step_sample(const HistoryEvent& event);

nlohmann::json to_json(const History& history);
History history_from_json(const nlohmann::json& doc);
// The host each rank ran on, from the rank's own events (not the harness's lines about it); a rank
// that wrote on several hosts (a restart elsewhere) is given its last one. Every report shows it.
std::map<int, std::string> rank_hosts(const History& history);
// "node1: 0, 3, 6; node2: 1, 4, 7" (empty when no rank's host is known).
std::string rank_hosts_text(const History& history);

}  // namespace ncclfi::harness
