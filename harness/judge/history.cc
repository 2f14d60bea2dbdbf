// JSON form of the History: what verdict.json stores so a report can be re-rendered later.
#include "history.h"

namespace ncclfi::harness {
namespace {

template <typename T>
void read_opt(const nlohmann::json& doc, const char* key, T& out) {
  if (auto it = doc.find(key); it != doc.end() && !it->is_null()) out = it->get<T>();
}

nlohmann::json event_to_json(const HistoryEvent& e) {
  nlohmann::json j = {{"ts_ns", e.ts_ns}, {"rank", e.rank},     {"attempt", e.attempt}, {"pid", e.pid},
                      {"host", e.host},   {"source", e.source}, {"event", e.event},     {"fields", e.fields}};
  if (e.mono_ns != 0) j["mono_ns"] = e.mono_ns;
  return j;
}

HistoryEvent event_from_json(const nlohmann::json& j) {
  HistoryEvent e;
  read_opt(j, "ts_ns", e.ts_ns);
  read_opt(j, "mono_ns", e.mono_ns);
  read_opt(j, "rank", e.rank);
  read_opt(j, "attempt", e.attempt);
  read_opt(j, "pid", e.pid);
  read_opt(j, "host", e.host);
  read_opt(j, "source", e.source);
  read_opt(j, "event", e.event);
  if (auto it = j.find("fields"); it != j.end() && it->is_object()) e.fields = *it;
  return e;
}

nlohmann::json exit_to_json(const RankExit& x) {
  nlohmann::json j = {{"rank", x.rank},
                      {"attempt", x.attempt},
                      {"pid", x.pid},
                      {"killed_by_harness", x.killed_by_harness},
                      {"ts_ns", x.ts_ns}};
  j["exit_code"] = x.exit_code ? nlohmann::json(*x.exit_code) : nlohmann::json();
  j["signal"] = x.signal ? nlohmann::json(*x.signal) : nlohmann::json();
  return j;
}

RankExit exit_from_json(const nlohmann::json& j) {
  RankExit x;
  read_opt(j, "rank", x.rank);
  read_opt(j, "attempt", x.attempt);
  read_opt(j, "pid", x.pid);
  read_opt(j, "killed_by_harness", x.killed_by_harness);
  read_opt(j, "ts_ns", x.ts_ns);
  if (auto it = j.find("exit_code"); it != j.end() && it->is_number_integer()) x.exit_code = it->get<int>();
  if (auto it = j.find("signal"); it != j.end() && it->is_number_integer()) x.signal = it->get<int>();
  return x;
}

nlohmann::json detection_to_json(const Detection& d) {
  return {{"mechanism", d.mechanism}, {"rank", d.rank},       {"attempt", d.attempt}, {"ts_ns", d.ts_ns},
          {"evidence", d.evidence},   {"mono_ns", d.mono_ns}, {"host", d.host}};
}

Detection detection_from_json(const nlohmann::json& j) {
  Detection d;
  read_opt(j, "mechanism", d.mechanism);
  read_opt(j, "rank", d.rank);
  read_opt(j, "attempt", d.attempt);
  read_opt(j, "ts_ns", d.ts_ns);
  read_opt(j, "evidence", d.evidence);
  read_opt(j, "mono_ns", d.mono_ns);
  read_opt(j, "host", d.host);
  return d;
}

}  // namespace

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
    baselines.push_back(
        {{"total_s", b.total_s ? nlohmann::json(*b.total_s) : nlohmann::json()}, {"step_s", b.step_s}});
  }
  doc["armed_faults"] = history.armed_faults;
  auto& contract = doc["contract_errors"] = nlohmann::json::array();
  for (const auto& c : history.contract_errors) {
    contract.push_back({{"source", c.source},
                        {"rank", c.rank},
                        {"problem", c.problem},
                        {"line", c.line},
                        {"count", c.count}});
  }
  doc["records_lost"] = history.records_lost;
  auto& events = doc["events"] = nlohmann::json::array();
  for (const auto& e : history.events) events.push_back(event_to_json(e));
  auto& exits = doc["exits"] = nlohmann::json::array();
  for (const auto& x : history.exits) exits.push_back(exit_to_json(x));
  auto& detections = doc["detections"] = nlohmann::json::array();
  for (const auto& d : history.detections) detections.push_back(detection_to_json(d));
  return doc;
}

History history_from_json(const nlohmann::json& doc) {
  History h;
  if (!doc.is_object()) return h;
  read_opt(doc, "scenario", h.scenario);
  read_opt(doc, "start_ns", h.start_ns);
  read_opt(doc, "end_ns", h.end_ns);
  read_opt(doc, "world_size", h.world_size);
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
  for (const auto& c : doc.value("contract_errors", nlohmann::json::array())) {
    ContractError e;
    read_opt(c, "source", e.source);
    read_opt(c, "rank", e.rank);
    read_opt(c, "problem", e.problem);
    read_opt(c, "line", e.line);
    read_opt(c, "count", e.count);
    h.contract_errors.push_back(std::move(e));
  }
  read_opt(doc, "records_lost", h.records_lost);
  for (const auto& e : doc.value("events", nlohmann::json::array())) h.events.push_back(event_from_json(e));
  for (const auto& x : doc.value("exits", nlohmann::json::array())) h.exits.push_back(exit_from_json(x));
  for (const auto& d : doc.value("detections", nlohmann::json::array())) {
    h.detections.push_back(detection_from_json(d));
  }
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

}  // namespace ncclfi::harness
