#include "ground_truth.h"

#include <filesystem>
#include <map>
#include <stdexcept>
#include <utility>

#include "ncclfi/bounded_input.h"

namespace fs = std::filesystem;

namespace ncclfi::score {

namespace {

// What each fault kind stands for on a real cluster (docs/faults.md's "what it models"), in the
// diagnosis's sites. Kinds that model a code rather than a place (api error, async_error) have none:
// such runs count for rank and symptom only.
const std::map<std::pair<std::string, std::string>, std::string>& fault_sites() {
  static const std::map<std::pair<std::string, std::string>, std::string> sites = {
      // The net shim: a connection's completions.
      {{"net", "delay"}, "congestion"},        // completions late: a queue in the fabric
      {{"net", "throttle"}, "congestion"},     // a rate cap behind a shared link
      {{"net", "stall"}, "congestion"},        // no completion for a while, then on: a paused port
      {{"net", "drop"}, "nic"},                // a completion that never comes: a NIC that lost it
      {{"net", "corrupt"}, "degraded_link"},   // bit errors the link's checks missed
      {{"net", "error"}, "nic"},               // the transport returns an error: NCCL's IB completion error
      {{"net", "nic_down"}, "nic"},            // retries exhausted on a dead port
      {{"net", "connect_fail"}, "bootstrap"},  // no connection at setup
      // The API preload.
      {{"api", "hang"}, "host_hang"},     // the calling thread stops: a host-side hang
      {{"api", "skip"}, "host_hang"},     // a rank that never joins the collective
      {{"api", "delay"}, "host_hang"},    // a rank late to every call: a slow host
      {{"api", "gpu_hang"}, "gpu_hang"},  // the op's stream stops
      {{"api", "crash"}, "dead_rank"},
      {{"api", "init_fail"}, "bootstrap"},
      {{"api", "init_hang"}, "bootstrap"},
      {{"api", "bootstrap_unreachable"}, "bootstrap"},  // a rank kept out of the bootstrap
      {{"api", "nvlink_error"}, "nvlink"},
      {{"api", "nvlink_down"}, "nvlink"},
      {{"api", "pcie_downgrade"}, "pcie"},
      {{"api", "bandwidth_cap"}, "pcie"},  // an op held to a lower bus rate: a link trained down
      // Processes.
      {{"proc", "kill"}, "dead_rank"},
      {{"proc", "stop"}, "host_hang"},
      // The host's link (tc).
      {{"link", "rate"}, "congestion"},
      {{"link", "delay"}, "congestion"},
      {{"link", "loss"}, "degraded_link"},
      {{"link", "corrupt"}, "degraded_link"},
      // The verbs layer.
      {{"verbs", "retry_exceeded"}, "nic"},
      {{"verbs", "wc_error"}, "nic"},
      {{"verbs", "drop"}, "nic"},
      {{"verbs", "port_down"}, "nic"},
      {{"verbs", "post_error"}, "nic"},
      {{"verbs", "delay"}, "congestion"},
      {{"verbs", "link_degrade"}, "degraded_link"},
      {{"verbs", "local_protection_error"}, "configuration"},  // a memory registration gone wrong
  };
  return sites;
}

nlohmann::json read_json(const fs::path& path) {
  std::string text;
  const std::string why = read_regular_file(path.string(), kMaxInputFileBytes, text);
  if (!why.empty()) throw std::runtime_error(path.string() + ": " + why);
  try {
    return parse_json_input(text);
  } catch (const std::exception& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
}

std::string text_at(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// The symptom the job showed: the expectation's outcome where it says one, else what the fault does.
std::string symptom_of(const std::string& outcome, const std::string& layer, const std::string& kind,
                       const std::set<std::string>& mechanisms) {
  if (outcome == "clean") return kSymptomNone;
  if (outcome == "degraded") return kSymptomSlow;
  if (outcome == "silent_corruption" || mechanisms.count("verification") || mechanisms.count("nan_check") ||
      kind == "corrupt")
    return "wrong data / NaN";
  if (outcome == "hung") return "hung";
  if (kind == "connect_fail" || kind == "init_fail" || kind == "init_hang" ||
      kind == "bootstrap_unreachable" || mechanisms.count("bootstrap"))
    return "failed to start";
  static const std::set<std::string> hangs = {"drop", "stall", "stop",     "hang", "gpu_hang",
                                              "skip", "delay", "throttle", "rate"};
  if (hangs.count(kind) && !(layer == "link" && kind == "delay")) return "hung";
  return "crashed or died";
}

std::map<int, std::string> rank_hosts_of(const nlohmann::json& verdict) {
  std::map<int, std::string> hosts;
  if (verdict.contains("rank_hosts") && verdict["rank_hosts"].is_object())
    for (const auto& [rank, host] : verdict["rank_hosts"].items())
      if (host.is_string()) {
        try {
          hosts[std::stoi(rank)] = host.get<std::string>();
        } catch (const std::exception&) {
          // a rank that is not a number is not a rank
        }
      }
  return hosts;
}

void set_hosts(Truth& t) {
  std::set<std::string> all;
  for (const auto& [rank, host] : t.rank_hosts) all.insert(host);
  t.several_hosts = all.size() > 1;
  t.hosts.clear();
  for (int r : t.ranks)
    if (auto it = t.rank_hosts.find(r); it != t.rank_hosts.end()) t.hosts.insert(it->second);
}

// The course's five fault sites, as scenarios tag them ("site1" ... "site5"): where a scenario says
// which site it stages, that wins over its fault kind's (a bit error is staged with a delay too).
std::string site_of_tags(const nlohmann::json& tags) {
  static const std::map<std::string, std::string> sites = {{"site1", "nic"},
                                                           {"site2", "congestion"},
                                                           {"site3", "degraded_link"},
                                                           {"site4", "nvlink"},
                                                           {"site5", "pcie"}};
  if (!tags.is_array()) return "";
  for (const auto& tag : tags)
    if (tag.is_string())
      if (auto it = sites.find(tag.get<std::string>()); it != sites.end()) return it->second;
  return "";
}

}  // namespace

std::string site_of_fault(const std::string& layer, const std::string& kind) {
  const auto& sites = fault_sites();
  auto it = sites.find({layer, kind});
  return it == sites.end() ? "" : it->second;
}

std::string site_of_lab_cause(const std::string& cause) {
  static const std::map<std::string, std::string> sites = {
      {"nic", "nic"},
      {"link_flap", "degraded_link"},  // a link that goes down and back: the link, not the NIC
      {"congestion", "congestion"},
      {"slow_link", "degraded_link"},
      {"link_corruption", "degraded_link"},
      {"nvlink", "nvlink"},
      {"pcie", "pcie"},
      {"hung_rank", "host_hang"},
      {"dead_rank", "dead_rank"},
      {"timeout_config", "configuration"},
      {"bootstrap", "bootstrap"},
  };
  auto it = sites.find(cause);
  return it == sites.end() ? "" : it->second;
}

std::set<std::string> accepted_sites(const std::string& site) {
  // A rank that stopped is a hang whether its host or its GPU stopped: the logs of a hung rank rarely
  // tell which, and both send the operator to the same rank.
  if (site == "host_hang" || site == "gpu_hang") return {"host_hang", "gpu_hang"};
  if (site.empty()) return {};
  return {site};
}

Truth truth_of_run(const std::string& run_dir) {
  const fs::path dir(run_dir);
  Truth t = truth_of_verdict(read_json(dir / "plan.json"), read_json(dir / "verdict.json"));
  t.source = (dir / "verdict.json").string();
  return t;
}

Truth truth_of_verdict(const nlohmann::json& plan, const nlohmann::json& verdict) {
  Truth t;
  // The injections that fired (the harness's record of them) give the ranks and the kind; a fault
  // that never fired leaves a clean run.
  std::string layer, kind;
  const nlohmann::json& history = verdict.contains("history") ? verdict["history"] : nlohmann::json();
  if (history.contains("events") && history["events"].is_array())
    for (const auto& e : history["events"]) {
      if (text_at(e, "event") != "inject" || !e.contains("fields")) continue;
      t.fault = true;
      if (e.contains("rank") && e["rank"].is_number_integer() && e["rank"].get<int>() >= 0)
        t.ranks.insert(e["rank"].get<int>());
      if (kind.empty()) {
        layer = text_at(e["fields"], "layer");
        kind = text_at(e["fields"], "kind");
      }
    }
  // The plan names the kind where an injection's fields do not (a proc fault's harness record).
  if (t.fault && kind.empty() && plan.contains("faults") && plan["faults"].is_array() &&
      !plan["faults"].empty()) {
    layer = text_at(plan["faults"][0], "layer");
    kind = text_at(plan["faults"][0], "kind");
  }
  std::set<std::string> mechanisms;
  if (verdict.contains("mechanisms") && verdict["mechanisms"].is_array())
    for (const auto& m : verdict["mechanisms"])
      if (m.is_string()) mechanisms.insert(m.get<std::string>());
  const std::string outcome = text_at(verdict.value("expect", nlohmann::json::object()), "outcome");
  if (t.fault) {
    t.site = site_of_tags(verdict.value("tags", nlohmann::json::array()));
    if (t.site.empty()) t.site = site_of_fault(layer, kind);
    t.symptom = symptom_of(outcome, layer, kind, mechanisms);
  } else {
    t.symptom = kSymptomNone;
  }
  t.sites = accepted_sites(t.site);
  t.rank_hosts = rank_hosts_of(verdict);
  set_hosts(t);
  return t;
}

Truth truth_of_lab_ticket(const std::string& ticket_dir) {
  const fs::path dir(ticket_dir);
  const nlohmann::json key = read_json(dir / "key.json");
  const nlohmann::json answer = key.value("answer", nlohmann::json::object());
  // The job that failed: the lab's jobs' run directories, the one with a fault that fired.
  Truth t;
  std::error_code ec;
  for (fs::directory_iterator it(dir / "runs", ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path latest = it->path() / "latest";
    if (!fs::exists(latest / "verdict.json", ec)) continue;
    Truth job = truth_of_run(latest.string());
    if (job.fault) t = std::move(job);
  }
  t.source = (dir / "key.json").string();
  t.workspace = text_at(key, "workspace");
  // The key's ranks and cause are the lab author's truth: they win over the injections' (a lab may
  // inject on several ranks to make one rank's fault, as a dead node's peers lose their links).
  const std::string cause = text_at(answer, "cause");
  if (answer.contains("ranks") && answer["ranks"].is_array()) {
    t.ranks.clear();
    for (const auto& r : answer["ranks"])
      if (r.is_number_integer()) t.ranks.insert(r.get<int>());
  } else if (answer.contains("ranks") && answer["ranks"].is_null()) {
    // The answer is in no rank: the injection's ranks (the rank made to hang, to show the setting's
    // effect) are not what the student is asked, nor what diagnose is held to.
    t.ranks.clear();
    t.ranks_scored = false;
  }
  t.fault = cause != "none";
  if (!t.fault) t.symptom = kSymptomNone;
  // The drawn cause's site where the key has one (lab start writes it), else the cause word's.
  const std::string site = text_at(key, "site");
  t.site = site.empty() ? site_of_lab_cause(cause) : site == "none" ? "" : site;
  t.sites = accepted_sites(t.site);
  set_hosts(t);
  return t;
}

}  // namespace ncclfi::score
