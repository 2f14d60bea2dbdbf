// Observers: turn what a run leaves behind (the event log, each rank's output, exit statuses, a RAS
// report) into History entries and Detections. Nothing here judges; judge.h reads the History.
//
// Typical use by the runner, per attempt:
//   LogClassifier classifier = LogClassifier::builtin();
//   classifier.add_pattern("torch_watchdog", R"(my custom line)", "scenario:0");   // scenario extras
//   ... for each captured output line (as it arrives): observe_log_line(history, classifier, line);
//   ... after the attempt:  read_event_log(events_path, history);  observe_exits(history);
// then judge(history, expect, options).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "history.h"
#include "line_regex.h"
#include "mechanisms.h"

namespace ncclfi::harness {

// ---------------------------------------------------------------------------------------------
// Event log (events.jsonl)

// An event line is a few hundred bytes; a longer one than this is out of contract (reported, not
// parsed), so no line can cost the harness more than this to read.
constexpr size_t kMaxEventLineBytes = 64 << 10;

struct EventLogReadStats {
  size_t lines = 0;        // non-empty lines seen
  size_t events = 0;       // lines that became HistoryEvents
  size_t bad_lines = 0;    // unparsable lines that were not the last line (reported, skipped)
  bool torn_tail = false;  // the last line was incomplete (no newline and unparsable): ignored
};

// Appends every event of `path` to history.events (fields other than ts_ns, mono_ns, rank, pid, host,
// source, event go into HistoryEvent::fields; `attempt` from the line when present, else
// `default_attempt`), and adds a Detection for each workload event that means detection:
// watchdog_fired -> workload_watchdog, nccl_error -> api_error, async_error -> async_error,
// result_mismatch and done{verified:false} -> verification, nan_detected -> nan_check.
// A line without an event name, a wall-clock ts_ns or a rank, with a rank outside the job (when
// history.world_size is set), longer than kMaxEventLineBytes or nested deeper than kMaxJsonDepth
// breaks the events contract: it stays out of the timeline and lands in history.contract_errors (once
// per source and rank, with the line; later ones only counted). A missing file reads as empty.
// Tolerates a torn last line. Never throws on bad content.
EventLogReadStats read_event_log(const std::string& path, History& history, int default_attempt = 0);

// Same for one already-read line (used by the above and by live tailing). Returns false if the line
// is not a JSON object (a contract error is a line read: true).
bool observe_event_line(std::string_view line, History& history, int default_attempt = 0);

// ---------------------------------------------------------------------------------------------
// Rank output classifiers

// What a matched output line means.
enum class LineKind {
  kDetection,  // a mechanism noticed the fault: becomes a Detection
  kEvidence,   // worth showing on the timeline (NCCL WARN, teardown text), not a detection
  kRestart,    // torchrun announced a restart of the worker group: History::torchrun_restarts += 1
};

struct LogPattern {
  std::string name;  // short id shown in reports, e.g. "torch.watchdog_timeout"
  LineKind kind = LineKind::kDetection;
  std::string mechanism;  // for kDetection: a known mechanism; for kEvidence: a label like "nccl_warn"
  LineRegex regex;        // searched in the line's first kMaxLineBytes
  // Optional literal the line must contain before the regex is tried (a cheap prefilter: most
  // output lines match nothing).
  std::string must_contain;
  std::string site;  // the fault site(s) the line points to (SignatureLine::site), "" = any
};

// The built-in patterns in the order they are tried, as docs/failure-signatures.md's table shows them.
std::string builtin_patterns_markdown();

struct LineMatch {
  const LogPattern* pattern = nullptr;  // points into the classifier; valid while it lives
};

class LogClassifier {
 public:
  LogClassifier() = default;
  // The built-in patterns: the signature catalogue (harness/model/signatures/signature_family.h).
  static LogClassifier builtin();

  // Adds a scenario pattern (RE2 syntax, line_regex.h) that maps to `mechanism` (a detection). Throws
  // std::invalid_argument naming the pattern when the regex does not compile or the mechanism is
  // unknown. Scenario patterns are tried before the built-in ones.
  void add_pattern(const std::string& mechanism, const std::string& regex, const std::string& name);
  void add(LogPattern pattern, bool front = false);

  // The first pattern (in order) whose regex is found in `line`'s first kMaxLineBytes, or nullopt.
  std::optional<LineMatch> classify(std::string_view line) const;
  const std::vector<LogPattern>& patterns() const { return patterns_; }

 private:
  std::vector<LogPattern> patterns_;
  size_t front_count_ = 0;  // scenario patterns at the front
};

// One line of a rank's captured output, stamped when the harness read it.
struct OutputLine {
  int64_t ts_ns = 0;
  int rank = -1;
  int attempt = 0;
  std::string stream = "stdout";  // "stdout" or "stderr"
  std::string text;               // without the trailing newline
  int64_t mono_ns = 0;            // when the harness read it, on its monotonic clock (0: unknown)
  std::string host{};             // the harness's host, whose clock mono_ns is
};

// Classifies one line (its first kMaxLineBytes; a longer line's entry says `truncated_from_bytes`).
// A detection adds a Detection and a HistoryEvent{source "log", event
// "detection"}; evidence adds a HistoryEvent{source "log", event "log_evidence"}; a restart line adds
// HistoryEvent{source "log", event "restart"} and bumps torchrun_restarts. Returns the match (or
// nullopt). Thread-compatible: callers serialise access to `history`.
std::optional<LineMatch> observe_log_line(History& history, const LogClassifier& classifier,
                                          const OutputLine& line);

// Classifies a whole captured log file after the fact (used for re-reads): lines get `ts_ns` =
// `fallback_ts_ns` unless they start with "@<ts_ns> " (a stamp the runner may prefix). Reads lines
// with bounded memory (read_bounded_line). Returns the number of lines read; a missing file gives 0.
size_t observe_log_file(History& history, const LogClassifier& classifier, const std::string& path, int rank,
                        int attempt, int64_t fallback_ts_ns);

// Reads one line of `in` into `line` (without its newline), keeping at most `max_bytes` of it and
// skipping the rest, so one endless line costs bounded memory. Returns false at the end of input;
// `*full_bytes` (when given) gets the line's real length; in.eof() after a true return: the line
// had no newline.
bool read_bounded_line(std::istream& in, std::string& line, size_t max_bytes, size_t* full_bytes = nullptr);

// ---------------------------------------------------------------------------------------------
// Exit statuses

// Turns history.exits into Detections (call once, after all exits of all attempts are recorded):
//  - exit code 2 api_error, 3 workload_watchdog, 4 verification, 5 async_error, 6 bootstrap, 7 nan_check;
//  - killed_by_harness while history.deadline_hit (and it is the attempt that hit it) -> one
//    harness_deadline detection at the earliest such kill;
//  - any other nonzero exit or signal (not by the harness) of a rank whose peer (same attempt) had
//    already ended abnormally or been killed -> peer_exit; a rank whose own crash/kill fault fired is
//    the fault itself, not a detection.
// Also adds a HistoryEvent{source "exit", event "exit"} per RankExit. Idempotent per history (a
// second call adds nothing).
void observe_exits(History& history);

}  // namespace ncclfi::harness
