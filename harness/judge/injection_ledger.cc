#include "injection_ledger.h"

#include "ncclfi/event_log.h"
#include "ncclfi/injection_channel.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {

// The record seq a line or record states, 0 when none (the channel counts from 1, so 0 pairs with nothing).
uint64_t stated_seq(const nlohmann::json& fields) {
  const auto it = fields.find(kRecordSeqField);
  return it != fields.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

}  // namespace

std::string InjectionLedger::describe(const HistoryEvent& e) {
  return e.source + " rank " + std::to_string(e.rank) + " (pid " + std::to_string(e.pid) +
         (e.host.empty() ? "" : " on " + e.host) + ") fault " +
         e.fields.value("fault_id", nlohmann::json("?")).dump() + " record_seq " +
         std::to_string(stated_seq(e.fields));
}

void InjectionLedger::authentic(const std::string& record, uint64_t seq) {
  const nlohmann::json doc = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
  HistoryEvent e;
  try {
    if (!doc.is_object() || doc.value("event", "") != ev::kInject || stated_seq(doc) != seq || seq == 0) {
      ++rejected_;
      return;
    }
    e.host = doc.value("host", "");
    e.pid = doc.value("pid", 0);
    e.source = doc.value("source", "");
    e.rank = doc.value("rank", -1);
  } catch (const nlohmann::json::exception&) {
    ++rejected_;  // a field of the wrong type: not a record an injector wrote
    return;
  }
  e.fields = doc;
  const Key key{e.host, e.pid, e.source, seq};
  if (!observe_event_line(record, history_, attempt_)) {
    ++rejected_;
    return;
  }
  if (waiting_.erase(key) == 0) unclaimed_.emplace(key, describe(e));
}

void InjectionLedger::claimed(HistoryEvent line) {
  const Key key{line.host, line.pid, line.source, stated_seq(line.fields)};
  if (unclaimed_.erase(key) > 0) return;  // the record is in the history already
  if (waiting_.size() >= kMaxWaitingLines || waiting_.count(key) > 0) {
    ++dropped_lines_;  // a copy of a line, or one of a flood: no record will stand for it
    return;
  }
  waiting_.emplace(key, std::move(line));
}

void InjectionLedger::settle() {
  auto& errors = history_.contract_errors;
  const size_t forged = waiting_.size() + dropped_lines_;
  if (forged > 0) {
    ContractError e{"?", -1, "", "", static_cast<int>(forged)};
    e.problem =
        "forged injection record: an inject line that no authenticated record of the injection "
        "channel stands for (counted as no injection)";
    if (!waiting_.empty()) {
      const HistoryEvent& first = waiting_.begin()->second;
      e.source = first.source;
      e.rank = first.rank;
      e.line = describe(first);
    }
    errors.push_back(std::move(e));
  }
  // What the ranks said stays on the timeline, under a name no check counts as an injection.
  for (auto& [key, line] : waiting_) {
    line.event = "inject_unverified";
    add_event(history_, std::move(line));
  }
  waiting_.clear();
  dropped_lines_ = 0;
  if (!unclaimed_.empty()) {
    errors.push_back(ContractError{std::get<2>(unclaimed_.begin()->first), -1,
                                   "an injection the injection channel recorded is missing from the events "
                                   "file (truncated or rewritten)",
                                   unclaimed_.begin()->second, static_cast<int>(unclaimed_.size())});
  }
  unclaimed_.clear();
  if (rejected_ > 0) {
    errors.push_back(ContractError{"injection channel", -1,
                                   "forged injection record: a datagram that failed authentication", "",
                                   static_cast<int>(rejected_)});
  }
  rejected_ = 0;
}

void note_unauthenticated_injections(History& history, int attempt, int64_t ts_ns, const std::string& why) {
  HistoryEvent e;
  e.ts_ns = ts_ns;
  e.attempt = attempt;
  e.source = "harness";
  e.event = kUnauthenticatedInjections;
  e.fields = {{"why", why}};
  add_event(history, std::move(e));
}

std::string unauthenticated_injections(const History& history) {
  for (const auto& e : history.events) {
    // A rank could write a line like it into the events file: that only adds words to a reason.
    if (e.event == kUnauthenticatedInjections && e.source == "harness") return e.fields.value("why", "");
  }
  return "";
}

}  // namespace ncclfi::harness
