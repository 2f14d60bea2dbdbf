#include "injection_ledger.h"

#include "ncclfi/event_log.h"
#include "observe.h"

namespace ncclfi::harness {
namespace {

// The seq a line or record states, 0 when none (the channel counts from 1, so 0 pairs with nothing).
uint64_t stated_seq(const nlohmann::json& fields) {
  const auto it = fields.find("seq");
  return it != fields.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

}  // namespace

std::string InjectionLedger::describe(const HistoryEvent& e) {
  return e.source + " rank " + std::to_string(e.rank) + " (pid " + std::to_string(e.pid) + ") fault " +
         e.fields.value("fault_id", nlohmann::json("?")).dump() + " seq " +
         std::to_string(stated_seq(e.fields));
}

void InjectionLedger::authentic(const std::string& record, uint64_t seq) {
  const nlohmann::json doc = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || doc.value("event", "") != ev::kInject || stated_seq(doc) != seq || seq == 0) {
    ++rejected_;
    return;
  }
  HistoryEvent e;
  try {
    e.pid = doc.value("pid", 0);
    e.source = doc.value("source", "");
    e.rank = doc.value("rank", -1);
  } catch (const nlohmann::json::exception&) {
    ++rejected_;  // a field of the wrong type: not a record an injector wrote
    return;
  }
  e.fields = doc;
  const Key key{e.pid, e.source, seq};
  if (!observe_event_line(record, history_, attempt_)) {
    ++rejected_;
    return;
  }
  if (waiting_.erase(key) == 0) unclaimed_.emplace(key, describe(e));
}

void InjectionLedger::claimed(HistoryEvent line) {
  const Key key{line.pid, line.source, stated_seq(line.fields)};
  if (unclaimed_.erase(key) > 0) return;  // the record is in the history already
  if (waiting_.size() >= kMaxWaitingLines || waiting_.count(key) > 0) {
    ++dropped_lines_;  // a copy of a line, or one of a flood: no record will stand for it
    return;
  }
  waiting_.emplace(key, std::move(line));
}

void InjectionLedger::settle() {
  auto& problems = history_.injection_problems;
  const size_t forged = waiting_.size() + dropped_lines_;
  if (forged > 0) {
    std::string said = "forged injection record: " + std::to_string(forged) +
                       " inject line(s) in the events file that no authenticated record stands for";
    if (!waiting_.empty()) said += ", first: " + describe(waiting_.begin()->second);
    problems.push_back(said);
  }
  // What the ranks said stays on the timeline, under a name no check counts as an injection.
  for (auto& [key, line] : waiting_) {
    line.event = "inject_unverified";
    add_event(history_, std::move(line));
  }
  waiting_.clear();
  dropped_lines_ = 0;
  if (!unclaimed_.empty()) {
    problems.push_back(std::to_string(unclaimed_.size()) +
                       " injection record(s) counted by the injection channel are missing from the events "
                       "file (truncated or rewritten), first: " +
                       unclaimed_.begin()->second);
  }
  unclaimed_.clear();
  if (rejected_ > 0) {
    problems.push_back("forged injection record: " + std::to_string(rejected_) +
                       " datagram(s) on the injection channel failed authentication");
  }
  rejected_ = 0;
}

}  // namespace ncclfi::harness
