// The harness's account of one attempt's injections. Ground truth comes only from the injection channel
// (injection_channel.h): each authenticated record enters the history as the attempt's `inject` event.
// The events file's `inject` lines are only what the ranks say; each must pair with one authenticated
// record (same host, pid, source and seq: the ranks of several hosts may share a pid), and each record
// with one line. At the end of the attempt what is
// left unpaired breaks the events contract (history.contract_errors; the `events` check is unknown):
//  - a line with no record: a forged injection record (kept on the timeline as `inject_unverified`);
//  - a record with no line: the events file lost it (truncated or rewritten);
//  - a datagram that failed authentication.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "history.h"

namespace ncclfi::harness {

class InjectionLedger {
 public:
  InjectionLedger(History& history, int attempt) : history_(history), attempt_(attempt) {}

  // A record the channel authenticated under `seq` (or the harness's own injection): the inject line
  // itself, one JSON object stating that seq. A record that is not one is counted as rejected.
  void authentic(const std::string& record, uint64_t seq);
  // An `inject` line read from the events file.
  void claimed(HistoryEvent line);
  // `n` datagrams (or records relayed by a node agent) whose MAC or format was wrong.
  void rejected(size_t n = 1) { rejected_ += n; }
  // Everything still unpaired into history.contract_errors. Call once, after the last read.
  void settle();

  // Lines held while they wait for their record: more than this are forged beyond doubt (the channel's
  // records arrive before their lines) and only counted.
  static constexpr size_t kMaxWaitingLines = 4096;

 private:
  using Key = std::tuple<std::string, int, std::string, uint64_t>;  // host, pid, source, seq
  static std::string describe(const HistoryEvent& e);

  History& history_;
  int attempt_;
  std::map<Key, std::string> unclaimed_;  // records no line stood for yet: their description
  std::map<Key, HistoryEvent> waiting_;   // lines no record stood for yet
  size_t dropped_lines_ = 0;              // lines past kMaxWaitingLines
  size_t rejected_ = 0;
};

// The harness's own timeline entry (never read from the events file) saying that this attempt's
// injections could only be read from the events file, and why (no socket could be made); and the first
// such reason in a history, "" when the channel vouched for every attempt.
inline constexpr const char* kUnauthenticatedInjections = "injections_unauthenticated";
void note_unauthenticated_injections(History& history, int attempt, int64_t ts_ns, const std::string& why);
std::string unauthenticated_injections(const History& history);

// observe_event_line (observe.h) with a ledger: an `inject` line is only a claim, handed to `ledger`
// (nullptr: taken as an event, as before); every other line is observed as usual.
bool observe_event_line(std::string_view line, History& history, int default_attempt,
                        InjectionLedger* ledger);

}  // namespace ncclfi::harness
