// A scenario: the workload to run, how to launch it, the faults to inject and what must happen (the
// format is scenarios/schema.json, documented in docs/scenarios.md). load_scenario() validates
// everything, the expectation included, before anything is launched.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "expectation.h"
#include "ncclfi/plan.h"

namespace ncclfi::cli {

// A bad scenario: file, JSON pointer, what was expected and what was found. what() is
// "file: /pointer: expected X, got Y" (one line per problem when several were found).
class ScenarioError : public std::runtime_error {
 public:
  struct Problem {
    std::string pointer, expected, found;
    int line = 0;  // 1-based line in a YAML scenario (0: not known, JSON)
  };
  ScenarioError(std::string file, std::vector<Problem> problems);
  const std::string& file() const { return file_; }
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::string file_;
  std::vector<Problem> problems_;
};

struct WorkloadSpec {
  std::string builtin;               // "cpu-ring", "nccl-workload" or "" (command)
  std::vector<std::string> command;  // argv with {rank}/{world_size} placeholders (no builtin)
  int ranks = 1;
  std::vector<std::string> args;
};

// The scenario's `launcher`: which one (a name in launch/launcher_spec.h's registry) and its settings.
struct LaunchSettings {
  std::string kind = "local";
  int max_restarts = 0;  // a launcher that restarts its workers (torchrun): how often
  bool per_rank = true;  // a launcher with the per_rank option (command): one process per rank
  std::vector<std::string> extra_args;
  // The job spans this many nodes, each with a node agent (`ncclfi agent`) that carries out proc
  // faults, arm/disarm and teardown there and streams its ranks' events (docs/multihost.md). 0: one
  // host, no agents.
  int nodes = 0;
  // A launcher that reaches nodes through another (torchrun): the launcher that starts one of its
  // processes and one node agent per node (a kNodes launcher: mpirun or srun), and that launcher's own
  // arguments (extra_args are the outer launcher's). Empty: this host only.
  std::string node_launcher;
  std::vector<std::string> node_launcher_args;
  // `local` only: rank r's process runs as the node hostnames[r] (its own UTS namespace, so gethostname()
  // returns it): a job on one machine whose ranks name their nodes as on a cluster (the training labs).
  // Empty: every rank has this host's name.
  std::vector<std::string> hostnames;
};

struct RestartPolicy {
  int max = 0;
  std::vector<int> faults_on_attempts = {0};
  double backoff_s = 0.5;
  bool faults_on(int attempt) const;
};

struct Scenario {
  std::string file;    // where it was loaded from
  nlohmann::json doc;  // the document as written
  std::string name;
  std::string summary;
  std::vector<std::string> tags;
  WorkloadSpec workload;
  LaunchSettings launcher;
  bool layer_net = false;  // load the net shim (NCCL_NET_PLUGIN)
  // `net_wrap`: the net plugin the shim wraps (NCCLFI_NET_INNER), so net faults ride on its data path
  // (an IB plugin's RDMA and GPUDirect); empty: the shim's own TCP transport.
  std::string net_wrap;
  bool layer_api = false;  // load the preload (LD_PRELOAD)
  // Not in the file format: `ncclfi timeouts` sets it for the healthy runs, whose ops the preload then times
  // (NCCLFI_TIME_OPS: op_time events, the job's longest collective).
  bool time_ops = false;
  // Not in the file format either: `ncclfi timeouts` sets it for its nic_down cells, whose ranks then run
  // the net shim in its IB persona (NCCLFI_NET_PERSONA=ib, and NCCL_NET=IB, the name it then has), so a
  // dead NIC's peers fail after NCCL's IB retry budget as on InfiniBand.
  bool ib_persona = false;
  bool layer_verbs =
      false;  // load libncclfi-ibverbs.so as NCCL's libibverbs (NCCL_IBVERBS_LIB, LD_LIBRARY_PATH)
  std::map<std::string, std::string> env;
  FaultPlan plan;  // every fault; proc ones are the harness's
  // Drill safety (`limits`): the most ranks and hosts the faults may reach (drill_plan.h checks them).
  std::optional<int> max_faulted_ranks, max_faulted_hosts;
  double deadline_s = 60;
  double grace_s = 3;
  RestartPolicy restart;
  bool probe_ras = false;
  std::optional<bool> baseline;  // unset: when the expectation needs it
  int baseline_runs = 2;         // fault-free runs to measure the noise against (baseline_runs)
  nlohmann::json log_patterns = nlohmann::json::array();
  harness::Expectation expectation;  // parsed once, what the judge reads
  int required_gpus = 0;
  bool needs_intra_node_paths = false;  // P2P/NVLink between ranks: never run in shared-GPU mode
  std::vector<std::string> required_env;
  std::vector<std::string> required_commands;
  // NCCL API the job's libnccl.so.2 must export (ncclCommShrink, ...): skipped with the reason otherwise.
  std::vector<std::string> required_nccl_symbols;
  // The oldest NCCL release the job's libnccl.so.2 may be ("2.29.7" from ">=2.29.7"; "" = any).
  std::string required_nccl_version;
  // How many Active InfiniBand/RoCE ports (/sys/class/infiniband/*/ports/*) the host needs (0 = none).
  int required_ib_ports = 0;
  // What loads but probably does not do what the author meant ("file: /faults/0/trigger: ..."), printed by
  // `ncclfi validate` and `ncclfi run` before anything starts (scenario_rules.h).
  std::vector<std::string> warnings;

  bool has_layer_faults(Layer layer) const;
  bool needs_baseline() const;
  // A one-line description of the expectation for tables: "detected by workload_watchdog in 2.5-5 s".
  std::string expected_text() const;
};

// Reads, schema-checks, parses and cross-checks a scenario file, JSON or YAML (scenario_yaml.h; errors
// then name the line too), its {param:NAME} placeholders replaced (scenario_params.h; `params`
// overrides their defaults). Throws ScenarioError.
Scenario load_scenario(const std::string& path, const std::map<std::string, std::string>& params = {});
// Same for a text already in memory (the limits of bounded_input.h apply; the fuzz target uses it).
Scenario scenario_from_text(std::string_view text, const std::string& file);
// Only the reading of a scenario file into JSON, with the same limits (sweeps patch the document).
nlohmann::json read_scenario_json(const std::string& path);
nlohmann::json scenario_json_from_text(std::string_view text, const std::string& file);
// Same for a document already in memory (sweeps patch documents before loading them).
Scenario scenario_from_json(const nlohmann::json& doc, const std::string& file,
                            const std::map<std::string, std::string>& params = {});

// The mechanisms a detection can name (docs/scenarios.md).
const std::vector<std::string>& detection_mechanisms();

// Expands files and directories (recursively, *.json except schema.json, *.yaml, *.yml) in a stable order.
// Throws ScenarioError for a path that does not exist.
std::vector<std::string> expand_scenario_paths(const std::vector<std::string>& paths);

// Why a scenario cannot run on this host ("needs `torchrun` on PATH"), or "" when it can: commands,
// variables and launchers. GPUs are gpu_placement.h's to decide.
std::string unmet_requirement(const Scenario& scenario);
// Whether `command` is an executable on PATH (or a path to one).
bool command_on_path(const std::string& command);

}  // namespace ncclfi::cli
