#include "scenario_rules.h"

#include <algorithm>

#include "rank_launcher.h"

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

// 10 -> "10", 2.5 -> "2.5": numbers as a person wrote them.
std::string num(double v) {
  if (v == static_cast<double>(static_cast<long long>(v))) return std::to_string(static_cast<long long>(v));
  return json(v).dump();
}

// torchrun across nodes: one torchrun per node, started by a node launcher (mpirun or srun) that also
// starts the node agents; torchrun itself reaches no other host.
void check_node_launcher(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  const LauncherSpec& l = s.launcher;
  const bool torchrun = l.kind == LauncherKind::kTorchrun;
  if (l.node_launcher && !torchrun) {
    problems.push_back({"/launcher/node_launcher",
                        "node_launcher only with the torchrun launcher (mpirun and srun place their ranks "
                        "on the nodes themselves)",
                        std::string("launcher \"") + to_string(l.kind) + "\""});
  }
  if (!l.node_launcher_args.empty() && !l.node_launcher) {
    problems.push_back({"/launcher/node_launcher_args",
                        "node_launcher_args only with a node_launcher (\"mpirun\" or \"srun\")",
                        "no /launcher/node_launcher"});
  }
  if (torchrun && l.nodes > 0 && !l.node_launcher) {
    problems.push_back({"/launcher/node_launcher",
                        "\"mpirun\" or \"srun\" with torchrun across nodes: the launcher that starts one "
                        "torchrun and one node agent per node",
                        "none, with nodes " + std::to_string(l.nodes)});
  }
  if (torchrun && l.node_launcher && l.nodes <= 0) {
    problems.push_back(
        {"/launcher/nodes", "the number of nodes the node launcher starts a torchrun on", "none"});
  }
  if (torchrun && l.nodes > 0 && s.workload.ranks % l.nodes != 0) {
    problems.push_back({"/workload/ranks",
                        "a multiple of /launcher/nodes (" + std::to_string(l.nodes) +
                            "): each node's torchrun starts ranks / nodes workers",
                        std::to_string(s.workload.ranks)});
  }
}

void check_workload(const Scenario& s, std::vector<ScenarioError::Problem>& problems) {
  const json& w = s.doc["workload"];
  const bool builtin = w.contains("builtin"), command = w.contains("command");
  if (builtin == command) {
    problems.push_back(
        {"/workload", "exactly one of \"builtin\" or \"command\"", builtin ? "both" : "neither"});
  }
  if (s.launcher.kind == LauncherKind::kCommand && !command) {
    problems.push_back({"/launcher/kind", "a workload with \"command\" for the command launcher",
                        "\"command\" with a builtin workload"});
  }
  if (s.launcher.kind == LauncherKind::kTorchrun && !command) {
    problems.push_back({"/launcher/kind", "torchrun with a workload \"command\" (the script torchrun starts)",
                        "\"torchrun\" with builtin \"" + s.workload.builtin + "\""});
  }
  if (s.doc.contains("launcher") && s.doc["launcher"].contains("max_restarts") &&
      s.launcher.kind != LauncherKind::kTorchrun) {
    problems.push_back({"/launcher/max_restarts", "max_restarts only with the torchrun launcher",
                        std::string("launcher \"") + to_string(s.launcher.kind) + "\""});
  }
  // Node agents are started by a launcher that places one process per node (mpirun, srun); torchrun
  // takes the count as --nnodes. The others start no processes on other hosts.
  if (s.launcher.nodes > 0 && s.launcher.kind != LauncherKind::kMpirun &&
      s.launcher.kind != LauncherKind::kSrun && s.launcher.kind != LauncherKind::kTorchrun) {
    problems.push_back({"/launcher/nodes", "nodes only with the mpirun, srun or torchrun launcher",
                        std::string("launcher \"") + to_string(s.launcher.kind) + "\""});
  }
  check_node_launcher(s, problems);
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
    if (f.layer == Layer::kApi && s.workload.builtin == "cpu-ring") {
      problems.push_back(
          {ptr + "/layer", "\"net\" or \"proc\": cpu-ring makes no NCCL API calls", "\"api\""});
    }
    // A link fault changes a host's traffic control: only a node agent does that (launcher.nodes).
    const bool agents = s.launcher.nodes > 0 &&
                        (s.launcher.kind == LauncherKind::kMpirun || s.launcher.kind == LauncherKind::kSrun ||
                         (s.launcher.kind == LauncherKind::kTorchrun && s.launcher.node_launcher));
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

}  // namespace ncclfi::cli
