#include "scenario_rules.h"

#include <algorithm>
#include <cctype>

#include "launcher_spec.h"
#include "nccl_env.h"
#include "ncclfi/fault_kinds.h"
#include "ncclfi/fault_points.h"

namespace ncclfi::cli {

using nlohmann::json;

std::optional<double> flag_seconds(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] != flag) continue;
    try {
      size_t used = 0;
      const double v = std::stod(args[i + 1], &used);
      if (used == args[i + 1].size()) return v;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  for (const auto& a : args) {  // --flag=value
    if (a.rfind(flag + "=", 0) == 0) {
      try {
        return std::stod(a.substr(flag.size() + 1));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

namespace {

// An api fault that strikes only the job's rendezvous (libc's connect() to MASTER_ADDR:MASTER_PORT): the
// one api point a job without NCCL calls reaches, ncclfi-cpu-ring's stand-in for NCCL's bootstrap.
bool only_at_the_rendezvous(const Fault& f) {
  const auto points = points_for_fault(f);
  return !points.empty() && std::all_of(points.begin(), points.end(), [](const std::string& p) {
    return p == points::kBootstrapRendezvous;
  });
}

// 10 -> "10", 2.5 -> "2.5": numbers as a person wrote them.
std::string num(double v) {
  if (v == static_cast<double>(static_cast<long long>(v))) return std::to_string(static_cast<long long>(v));
  return json(v).dump();
}

// The launcher's traits (launch/launcher_spec.h) against the scenario's launcher settings, then the
// launcher's own rules.
void check_launcher(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  const LaunchSettings& l = s.launcher;
  auto names_with = [](auto has) {
    std::string names;
    for (const LauncherSpec* other : launcher_specs()) {
      if (has(*other)) names += (names.empty() ? "" : ", ") + std::string(other->name);
    }
    return names;
  };
  // The registry is the one list of launchers (the schema only asks for a string).
  if (find_launcher(l.kind) == nullptr) {
    problems.push_back({"/launcher/kind",
                        "a launcher (" + names_with([](const LauncherSpec&) { return true; }) + ")",
                        "\"" + l.kind + "\""});
    return;
  }
  const LauncherSpec& spec = launcher_of(s);
  const std::string launcher = "launcher \"" + l.kind + "\"";
  if (spec.workload == LauncherWorkload::kCommand && !s.doc["workload"].contains("command")) {
    problems.push_back({"/launcher/kind",
                        "a workload with \"command\" for the " + l.kind + " launcher (the program it starts)",
                        "\"" + l.kind + "\" with builtin \"" + s.workload.builtin + "\""});
  }
  if (s.doc.contains("launcher") && s.doc["launcher"].contains("max_restarts") && !spec.restarts_workers) {
    problems.push_back({"/launcher/max_restarts",
                        "max_restarts only with a launcher that restarts its workers (" +
                            names_with([](const LauncherSpec& o) { return o.restarts_workers; }) + ")",
                        launcher});
  }
  // Node agents are started by a launcher that places one process per node; a launcher through a node
  // launcher takes the count for itself. The others start no processes on other hosts.
  if (l.nodes > 0 && spec.reach == LauncherReach::kThisHost) {
    problems.push_back(
        {"/launcher/nodes",
         "nodes only with a launcher that reaches other hosts (" +
             names_with([](const LauncherSpec& o) { return o.reach != LauncherReach::kThisHost; }) + ")",
         launcher});
  }
  const LauncherSpec* node_launcher = node_launcher_of(s);
  if (!l.node_launcher.empty() && spec.reach != LauncherReach::kThroughNodeLauncher) {
    problems.push_back({"/launcher/node_launcher",
                        "node_launcher only with a launcher that reaches nodes through another (" +
                            names_with([](const LauncherSpec& o) {
                              return o.reach == LauncherReach::kThroughNodeLauncher;
                            }) +
                            "); this one places its ranks on the nodes itself",
                        launcher});
  } else if (!l.node_launcher.empty() &&
             (node_launcher == nullptr || node_launcher->reach != LauncherReach::kNodes)) {
    problems.push_back(
        {"/launcher/node_launcher",
         "a launcher that places one process per node (" +
             names_with([](const LauncherSpec& o) { return o.reach == LauncherReach::kNodes; }) + ")",
         "\"" + l.node_launcher + "\""});
  }
  if (!l.node_launcher_args.empty() && l.node_launcher.empty()) {
    problems.push_back({"/launcher/node_launcher_args", "node_launcher_args only with a node_launcher",
                        "no /launcher/node_launcher"});
  }
  // Each rank's own host name is given in the child the local launcher forks (one process per rank).
  if (!l.hostnames.empty() && l.kind != "local") {
    problems.push_back({"/launcher/hostnames", "hostnames only with the local launcher", launcher});
  } else if (!l.hostnames.empty() && l.hostnames.size() != static_cast<size_t>(s.workload.ranks)) {
    problems.push_back({"/launcher/hostnames",
                        "one host name per rank (" + std::to_string(s.workload.ranks) + ")",
                        std::to_string(l.hostnames.size()) + " names"});
  }
  if (spec.check != nullptr) spec.check(s, problems);
}

void check_workload(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  const json& w = s.doc["workload"];
  const bool builtin = w.contains("builtin"), command = w.contains("command");
  if (builtin == command) {
    problems.push_back(
        {"/workload", "exactly one of \"builtin\" or \"command\"", builtin ? "both" : "neither"});
  }
  check_launcher(s, problems);
}

void check_faults(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  const int world = s.workload.ranks;
  const json& faults = s.doc.contains("faults") ? s.doc["faults"] : json::array();
  for (size_t i = 0; i < s.plan.faults.size() && i < faults.size(); ++i) {
    const Fault& f = s.plan.faults[i];
    const std::string ptr = "/faults/" + std::to_string(i);
    const Target& t = f.target;
    for (size_t j = 0; j < t.ranks.size(); ++j) {
      if (t.ranks[j] < 0 || t.ranks[j] >= world) {
        problems.push_back({ptr + "/target/ranks/" + std::to_string(j),
                            "a rank of the job (0-" + std::to_string(world - 1) + ")",
                            std::to_string(t.ranks[j])});
      }
    }
    if (t.rank_select == Target::RankSelect::kRandom && t.random_count > world) {
      problems.push_back({ptr + "/target/ranks/random", "at most " + std::to_string(world) + " ranks",
                          std::to_string(t.random_count)});
    }
    if (t.peer && (*t.peer < 0 || *t.peer >= world)) {
      problems.push_back({ptr + "/target/peer", "a rank of the job (0-" + std::to_string(world - 1) + ")",
                          std::to_string(*t.peer)});
    }
    if (f.layer == Layer::kApi && s.workload.builtin == "cpu-ring" && !only_at_the_rendezvous(f)) {
      problems.push_back(
          {ptr + "/layer",
           "\"net\" or \"proc\" (or an api fault at op \"rendezvous\" only): cpu-ring makes no "
           "NCCL API calls",
           "\"api\""});
    }
    // A link fault changes a host's traffic control: only a node agent does that (launcher.nodes).
    const bool agents = has_node_agents(s);
    if (f.layer == Layer::kLink && !agents) {
      problems.push_back({ptr + "/layer",
                          "a link fault in a job with node agents (launcher mpirun or srun with \"nodes\", "
                          "or torchrun with \"nodes\" and a \"node_launcher\")",
                          "\"link\""});
    }
    if ((f.layer == Layer::kProc || f.layer == Layer::kLink) && f.trigger.after_ms > 0 &&
        static_cast<double>(f.trigger.after_ms) / 1000.0 >= s.deadline_s) {
      problems.push_back({ptr + "/trigger/after_ms",
                          "a time before the deadline (" + num(s.deadline_s) + " s)",
                          std::to_string(f.trigger.after_ms)});
    }
  }
}

void check_times(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  for (const char* flag : {"--timeout-s", "--pg-timeout-s"}) {
    const auto t = flag_seconds(s.workload.args, flag);
    if (t && s.deadline_s <= *t) {
      problems.push_back(
          {"/deadline_s",
           "a deadline longer than the workload's " + std::string(flag) + " (" + num(*t) + " s)",
           num(s.deadline_s)});
    }
  }
  const auto& d = s.expectation.detection_s;
  if (d && d->max && s.deadline_s < *d->max) {
    problems.push_back({"/deadline_s",
                        "a deadline no shorter than /expect/detection_s/max (" + num(*d->max) + " s)",
                        num(s.deadline_s)});
  }
  // min <= max of detection_s and restarts: parse_expectation's rule.
}

void check_expectation(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  const int world = s.workload.ranks;
  const harness::Expectation& e = s.expectation;
  // Rank lists in the expectation must name ranks of the job.
  const std::string job_ranks = "a rank of the job (0-" + std::to_string(world - 1) + ")";
  if (e.ranks && e.ranks->kind == harness::RankExpectation::Kind::kList) {
    for (size_t j = 0; j < e.ranks->ranks.size(); ++j) {
      if (e.ranks->ranks[j] >= world)
        problems.push_back(
            {"/expect/ranks/" + std::to_string(j), job_ranks, std::to_string(e.ranks->ranks[j])});
    }
  }
  if (e.ras_ranks) {
    // A set has lost the written order: the pointer's index is the rank's place in the list as written.
    const json& written = e.doc["ras_ranks"];
    for (size_t j = 0; j < written.size(); ++j) {
      if (written[j].is_number_integer() && e.ras_ranks->count(written[j].get<int>()) &&
          written[j].get<int>() >= world)
        problems.push_back({"/expect/ras_ranks/" + std::to_string(j), job_ranks, written[j].dump()});
    }
    if (!s.probe_ras) {
      problems.push_back({"/expect/ras_ranks",
                          "\"probe_ras\": true in the scenario (only the RAS probe names ranks)",
                          e.doc["ras_ranks"].dump()});
    }
  }
  auto expects = [&](harness::Outcome o) {
    return std::find(e.outcomes.begin(), e.outcomes.end(), o) != e.outcomes.end();
  };
  const int restarts_available = s.restart.max + s.launcher.max_restarts;
  if (expects(harness::Outcome::kRecovered) && restarts_available == 0) {
    problems.push_back({"/expect/outcome",
                        "an outcome other than \"recovered\" when no restart is allowed "
                        "(set /restart/max or /launcher/max_restarts)",
                        "\"recovered\""});
  }
  // resume_s and survivors measure an in-place recovery: nothing else has them.
  for (const char* field : {"resume_s", "survivors"}) {
    if (e.doc.contains(field) && !expects(harness::Outcome::kRecoveredInPlace)) {
      problems.push_back({std::string("/expect/") + field, "\"outcome\": \"recovered_in_place\" beside it",
                          e.doc.contains("outcome") ? e.doc["outcome"].dump() : "no outcome"});
    }
  }
  if (e.survivors && *e.survivors >= world && world > 0) {
    problems.push_back(
        {"/expect/survivors",
         "fewer survivors than the job's " + std::to_string(world) + " ranks (some rank is lost)",
         std::to_string(*e.survivors)});
  }
  if (e.restarts && e.restarts->min && *e.restarts->min > restarts_available) {
    problems.push_back({"/expect/restarts/min",
                        "at most the restarts allowed (" + std::to_string(restarts_available) + ")",
                        num(*e.restarts->min)});
  }
  const bool faulty = !s.plan.faults.empty();
  if (!faulty && s.expectation.fault_may_not_fire) {
    problems.push_back({"/expect/fault_may_not_fire", "fault_may_not_fire only in a scenario with faults",
                        "true without faults"});
  }
  for (harness::Outcome o : e.outcomes) {
    if (!faulty && o != harness::Outcome::kClean && o != harness::Outcome::kDegraded) {
      problems.push_back({"/expect/outcome", "\"clean\" or \"degraded\" for a scenario without faults",
                          "\"" + std::string(harness::to_string(o)) + "\""});
    }
  }
  for (size_t j = 0; j < s.restart.faults_on_attempts.size(); ++j) {
    if (s.restart.faults_on_attempts[j] > s.restart.max) {
      problems.push_back({"/restart/faults_on_attempts/" + std::to_string(j),
                          "an attempt that can happen (0-" + std::to_string(s.restart.max) + ")",
                          std::to_string(s.restart.faults_on_attempts[j])});
    }
  }
}

// Names the harness gives a meaning of its own under --out: runs/suites/ holds the suites (and
// runs/suites/latest would point at a scenario's run).
void check_name_and_env(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  if (s.name == "suites")
    problems.push_back({"/name", "a name other than \"suites\" (reserved)", "\"suites\""});
  for (const auto& [key, value] : s.env) {
    // A name with '=' in it ("NCCLFI_PLAN=/x" set to anything) reaches the environment as that very
    // assignment and slipped past the reserved-name check: names are POSIX names or nothing.
    const bool posix_name = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0])) &&
                            std::all_of(key.begin(), key.end(), [](char c) {
                              return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                            });
    if (!posix_name) {
      problems.push_back({(json::json_pointer("/env") / key).to_string(),
                          "a variable name of letters, digits and '_' (not starting with a digit)",
                          "\"" + key + "\""});
      continue;
    }
    if (is_reserved_env(key)) {
      problems.push_back({(json::json_pointer("/env") / key).to_string(),
                          key == "NCCLFI_NET_INNER"
                              ? "the plugin to wrap in \"net_wrap\" (the harness sets NCCLFI_NET_INNER)"
                              : "no variable the harness sets (NCCLFI_*, LD_PRELOAD, NCCL_NET_PLUGIN)",
                          "\"" + key + "\""});
    }
  }
  // The shim wraps the plugin: without it (no net fault, "net" not in layers) nothing would.
  if (!s.net_wrap.empty() && !s.layer_net) {
    problems.push_back({"/net_wrap", "a net fault or \"net\" in layers (the shim is what wraps the plugin)",
                        "\"" + s.net_wrap + "\" with no net layer"});
  }
}

}  // namespace

void check_scenario_rules(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  check_name_and_env(s, problems);
  check_workload(s, problems);
  check_faults(s, problems);
  check_times(s, problems);
  check_expectation(s, problems);
}

namespace {

// A rate fault (a delay, a throttle) that fires once by default under an expected `degraded`.
void rate_fault_warnings(const Scenario& s, std::vector<std::string>& warnings) {
  const auto& outcomes = s.expectation.outcomes;
  if (std::find(outcomes.begin(), outcomes.end(), harness::Outcome::kDegraded) == outcomes.end()) return;
  const nlohmann::json& faults = s.doc.contains("faults") ? s.doc["faults"] : nlohmann::json::array();
  for (size_t i = 0; i < s.plan.faults.size() && i < faults.size(); ++i) {
    const Fault& f = s.plan.faults[i];
    const FaultKindSpec* spec = find_fault_kind(f.layer, f.kind);
    const nlohmann::json& trigger = faults[i].contains("trigger") ? faults[i]["trigger"] : nlohmann::json();
    if (spec == nullptr || !spec->traits.rate || (trigger.is_object() && trigger.contains("count"))) continue;
    warnings.push_back(s.file + ": /faults/" + std::to_string(i) +
                       "/trigger: " + std::string(to_string(f.layer)) + " " + f.kind + " \"" + f.id +
                       "\" fires once (count defaults to 1) and slows one call, but the scenario expects "
                       "degraded: set \"count\": 0 to slow every matching call, or a count to say how many");
  }
}

// An NCCL_* variable of `env` that no NCCL reads (NCCL_TIMEOUT, a typo): NCCL ignores it silently.
void nccl_env_warnings(const Scenario& s, std::vector<std::string>& warnings) {
  harness::NcclEnvObserved unread;
  unread.given = harness::given_nccl_env({}, s.env);
  for (const auto& note : harness::nccl_env_notes(unread)) warnings.push_back(s.file + ": /env: " + note);
}

}  // namespace

std::vector<std::string> scenario_warnings(const Scenario& s) {
  std::vector<std::string> warnings;
  rate_fault_warnings(s, warnings);
  nccl_env_warnings(s, warnings);
  return warnings;
}

bool is_reserved_env(std::string_view name) {
  return name.rfind("NCCLFI_", 0) == 0 || name == "LD_PRELOAD" || name == "NCCL_NET_PLUGIN" ||
         name == "NCCL_IBVERBS_LIB";
}

}  // namespace ncclfi::cli
