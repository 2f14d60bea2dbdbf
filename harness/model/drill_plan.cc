// The drill's plan before launch (drill_plan.h): blast radius, allow-list, dry run.
#include "drill_plan.h"

#include "launcher_spec.h"

#include <algorithm>
#include <sstream>

#include "ncclfi/event_log.h"
#include "ncclfi/fault_kinds.h"
#include "ncclfi/fault_window.h"
#include "ncclfi/signals.h"

namespace ncclfi::cli {

using nlohmann::json;

namespace {

constexpr size_t kWindowsShown = 10;  // a dry run lists this many windows of a fault, then counts the rest

std::string join_ints(const std::vector<int>& values) {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str() + " s";
}

// When the fault fires, in words: the trigger's call index, clock, draw and count.
std::string trigger_text(const Fault& f) {
  const Trigger& t = f.trigger;
  std::string text;
  if (f.layer == Layer::kProc) {
    text = t.after_ms == 0 ? "as soon as the rank's process is seen"
                           : std::to_string(t.after_ms) + " ms after the rank's process is seen";
  } else {
    text = "from matching call " + std::to_string(t.after_calls);
    if (t.after_ms != 0)
      text += ", not before " + std::to_string(t.after_ms) + " ms after the first matching call";
    if (t.probability < 1.0) text += ", each call with probability " + std::to_string(t.probability);
    text += t.count == 0 ? ", every matching call" : ", at most " + std::to_string(t.count) + " firing(s)";
    if (t.windowed()) text += " per window";
  }
  if (!t.armed) text += "; disarmed until `ncclfi arm`";
  return text;
}

// How long one injection lasts, in words (the kind's own duration, or the window's).
std::string duration_text(const Fault& f) {
  if (f.trigger.duration_s) return "heals after " + seconds_text(*f.trigger.duration_s) + " (window)";
  if (const ProcAction* proc = f.proc_action()) {
    return std::visit(
        Overloaded{[](const StopProcess& stop) {
                     return stop.resume_after_ms ? "stopped for " + seconds_text(*stop.resume_after_ms / 1000)
                                                 : std::string("stopped until the attempt ends");
                   },
                   [](const KillProcess& kill) { return "killed by " + signal_name(kill.signal); }},
        *proc);
  }
  const FaultKindSpec* spec = find_fault_kind(f.layer, f.kind);
  return spec != nullptr ? std::string(spec->effect) : f.kind;
}

json windows_json(const Fault& f) {
  json windows = json::array();
  const Trigger& t = f.trigger;
  const double offset_s = f.layer == Layer::kProc ? static_cast<double>(t.after_ms) / 1000 : 0;
  for (uint64_t i = 0; i < t.times && i < kWindowsShown; ++i) {
    const WindowSpan span = window_span(t, i);
    json w = {{"window", i + 1}, {"opens_s", offset_s + static_cast<double>(span.opens_ns) / 1e9}};
    w["closes_s"] =
        span.closes_ns ? json(offset_s + static_cast<double>(*span.closes_ns) / 1e9) : json(nullptr);
    windows.push_back(w);
  }
  return windows;
}

json fault_entry(const Fault& f) {
  json entry = {{"fault_id", f.id},
                {"kind", f.kind},
                {"layer", to_string(f.layer)},
                {"params", f.params},
                {"points", points_for_fault(f)},
                {"target", to_json(f)["target"]},
                {"trigger", to_json(f)["trigger"]},
                {"when", trigger_text(f)},
                {"lasts", duration_text(f)}};
  if (f.trigger.windowed()) {
    entry["windows"] = windows_json(f);
    entry["windows_total"] = f.trigger.times;
    // Proc faults run on the rank's clock; the others open their first window at their first firing.
    entry["windows_from"] = f.layer == Layer::kProc ? "the rank's launch" : "the first firing";
  }
  return entry;
}

json allow_list_json(const Scenario& s, const AllowList& list) {
  json j = {{"configured", list.configured}, {"entries", list.patterns}};
  if (!list.problem.empty()) j["problem"] = list.problem;
  const std::string refusal = allow_list_refusal(s, list);
  j["refused"] = refusal.empty() ? json(nullptr) : json(refusal);
  return j;
}

}  // namespace

std::vector<std::string> planned_rank_hosts(const Scenario& s) {
  const bool here = ranks_on_this_host(s);
  return std::vector<std::string>(static_cast<size_t>(s.workload.ranks), here ? host_name() : "");
}

BlastRadius blast_radius(const Scenario& s) {
  BlastRadius radius;
  for (const Fault& f : s.plan.faults) {
    for (int rank : f.target.resolve_ranks(s.workload.ranks)) {
      if (rank < 0 || rank >= s.workload.ranks) continue;  // outside the job: the rules report it
      radius.faults_by_rank[rank].push_back(f.id);
    }
  }
  const auto hosts = planned_rank_hosts(s);
  for (const auto& [rank, ids] : radius.faults_by_rank) {
    const std::string& host = hosts[static_cast<size_t>(rank)];
    if (host.empty()) {
      ++radius.unknown_host_ranks;
    } else {
      radius.hosts.insert(host);
    }
  }
  return radius;
}

void check_blast_radius(const Scenario& s, const BlastLimits& cli,
                        std::vector<ScenarioError::Problem>& problems) {
  if (!s.max_faulted_ranks && !s.max_faulted_hosts && !cli.max_faulted_ranks && !cli.max_faulted_hosts)
    return;
  const BlastRadius radius = blast_radius(s);
  std::vector<int> ranks;
  std::set<std::string> ids;
  for (const auto& [rank, faults] : radius.faults_by_rank) {
    ranks.push_back(rank);
    ids.insert(faults.begin(), faults.end());
  }
  std::string id_list;
  for (const auto& id : ids) id_list += (id_list.empty() ? "" : ", ") + id;
  const int faulted = static_cast<int>(ranks.size());
  auto over = [&](std::optional<int> limit, int found, const std::string& where, const std::string& what,
                  const std::string& detail) {
    if (limit && found > *limit) {
      problems.push_back({where, "at most " + std::to_string(*limit) + " faulted " + what + " (drill limit)",
                          std::to_string(found) + " " + detail});
    }
  };
  const std::string rank_detail = "(ranks " + join_ints(ranks) + " by faults " + id_list + ")";
  std::string hosts_text;
  for (const auto& h : radius.hosts) hosts_text += (hosts_text.empty() ? "" : ", ") + h;
  std::string host_detail = "(" + (hosts_text.empty() ? std::string("") : "hosts " + hosts_text);
  if (radius.unknown_host_ranks > 0) {
    host_detail += std::string(hosts_text.empty() ? "" : "; ") + std::to_string(radius.unknown_host_ranks) +
                   " rank(s) placed by the launcher, counted a host each";
  }
  host_detail += ")";
  over(s.max_faulted_ranks, faulted, "/limits/max_faulted_ranks", "ranks", rank_detail);
  over(s.max_faulted_hosts, radius.host_count(), "/limits/max_faulted_hosts", "hosts", host_detail);
  over(cli.max_faulted_ranks, faulted, "--max-faulted-ranks", "ranks", rank_detail);
  over(cli.max_faulted_hosts, radius.host_count(), "--max-faulted-hosts", "hosts", host_detail);
}

std::string allow_list_refusal(const Scenario& s, const AllowList& list) {
  if (!list.configured) return "";
  const BlastRadius radius = blast_radius(s);
  for (const auto& host : radius.hosts) {
    if (!list.allows(host)) {
      return "host '" + host + "' of a faulted rank is not in the allowed hosts (" + list.describe() + ")";
    }
  }
  return "";
}

json dry_run_json(const Scenario& s, const AllowList& list, const BlastLimits& cli) {
  const auto hosts = planned_rank_hosts(s);
  const BlastRadius radius = blast_radius(s);
  // Hosts in rank order; ranks the launcher places are listed under one "decided at launch" entry.
  json by_host = json::array();
  std::map<std::string, size_t> host_index;
  for (int rank = 0; rank < s.workload.ranks; ++rank) {
    const std::string& host = hosts[static_cast<size_t>(rank)];
    const std::string key = host.empty() ? "(placed by " + s.launcher.kind + ")" : host;
    if (!host_index.count(key)) {
      host_index[key] = by_host.size();
      by_host.push_back({{"host", key}, {"known", !host.empty()}, {"ranks", json::array()}});
    }
    json faults = json::array();
    for (const Fault& f : s.plan.faults) {
      const auto targets = f.target.resolve_ranks(s.workload.ranks);
      if (std::find(targets.begin(), targets.end(), rank) != targets.end()) faults.push_back(fault_entry(f));
    }
    by_host[host_index[key]]["ranks"].push_back({{"rank", rank}, {"faults", faults}});
  }
  std::vector<int> faulted;
  for (const auto& [rank, ids] : radius.faults_by_rank) faulted.push_back(rank);
  json limits = json::object();
  auto limit = [&](const char* name, std::optional<int> scenario, std::optional<int> cmd) {
    if (scenario) limits[name]["scenario"] = *scenario;
    if (cmd) limits[name]["command_line"] = *cmd;
  };
  limit("max_faulted_ranks", s.max_faulted_ranks, cli.max_faulted_ranks);
  limit("max_faulted_hosts", s.max_faulted_hosts, cli.max_faulted_hosts);
  return {{"scenario", s.name},
          {"file", s.file},
          {"ranks", s.workload.ranks},
          {"launcher", s.launcher.kind},
          {"deadline_s", s.deadline_s},
          {"attempts", s.restart.max + 1},
          {"faults_on_attempts", s.restart.faults_on_attempts},
          {"control", s.plan.control},
          {"faulted_ranks", faulted},
          {"faulted_hosts", radius.host_count()},
          {"limits", limits},
          {"allowed_hosts", allow_list_json(s, list)},
          {"hosts", by_host},
          {"launched", false}};
}

std::string dry_run_text(const json& plan) {
  std::ostringstream out;
  out << "dry run: " << plan["scenario"].get<std::string>() << " (" << plan["file"].get<std::string>()
      << "): " << plan["ranks"] << " ranks, launcher " << plan["launcher"].get<std::string>() << ", deadline "
      << plan["deadline_s"] << " s, faults on attempt(s) " << plan["faults_on_attempts"].dump() << " of "
      << plan["attempts"] << "; nothing is launched\n";
  const json& allow = plan["allowed_hosts"];
  if (!allow["configured"].get<bool>()) {
    out << "  allowed hosts: no allow-list (every host may inject)\n";
  } else {
    out << "  allowed hosts: "
        << (allow.contains("problem") ? allow["problem"].get<std::string>() : allow["entries"].dump())
        << (allow["refused"].is_null() ? "" : "; REFUSED: " + allow["refused"].get<std::string>()) << "\n";
  }
  out << "  faulted: " << plan["faulted_ranks"].size() << " rank(s) " << plan["faulted_ranks"].dump()
      << " on " << plan["faulted_hosts"] << " host(s)";
  if (!plan["limits"].empty()) out << "; limits " << plan["limits"].dump();
  out << "\n";
  for (const auto& host : plan["hosts"]) {
    out << "  host " << host["host"].get<std::string>() << "\n";
    for (const auto& rank : host["ranks"]) {
      if (rank["faults"].empty()) {
        out << "    rank " << rank["rank"] << ": nothing injected\n";
        continue;
      }
      for (const auto& f : rank["faults"]) {
        out << "    rank " << rank["rank"] << ": " << f["fault_id"].get<std::string>() << " ("
            << f["layer"].get<std::string>() << " " << f["kind"].get<std::string>() << ", params "
            << f["params"].dump() << ") at " << f["points"].dump() << "; " << f["when"].get<std::string>()
            << "; " << f["lasts"].get<std::string>() << "\n";
        if (!f.contains("windows")) continue;
        out << "      windows (" << f["windows_total"] << ", from " << f["windows_from"].get<std::string>()
            << "):";
        for (const auto& w : f["windows"]) {
          out << " #" << w["window"] << " +" << w["opens_s"] << " s";
          out << (w["closes_s"].is_null() ? std::string(" on") : " to +" + w["closes_s"].dump() + " s")
              << ";";
        }
        if (f["windows_total"].get<uint64_t>() > f["windows"].size()) out << " ...";
        out << "\n";
      }
    }
  }
  return out.str();
}

}  // namespace ncclfi::cli
