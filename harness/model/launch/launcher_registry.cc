// The list of launchers, and what the rest of ncclfi asks of them (launcher_spec.h).
#include <stdexcept>

#include "launch_context.h"
#include "launcher_spec.h"

namespace ncclfi::cli {

// One line per launcher file. An explicit list, as the fault kinds have: ncclfi_model is a static
// library, and the linker would drop a launcher file that registered itself from a static initialiser.
#define NCCLFI_LAUNCHERS(X) \
  X(kLocalLauncher)         \
  X(kCommandLauncher)       \
  X(kMpirunLauncher)        \
  X(kHydraLauncher)         \
  X(kSrunLauncher)          \
  X(kTorchrunLauncher)

#define NCCLFI_DECLARE(spec) extern const LauncherSpec spec;
NCCLFI_LAUNCHERS(NCCLFI_DECLARE)
#undef NCCLFI_DECLARE

const std::vector<const LauncherSpec*>& launcher_specs() {
#define NCCLFI_ADDRESS(spec) &spec,
  static const std::vector<const LauncherSpec*> specs = {NCCLFI_LAUNCHERS(NCCLFI_ADDRESS)};
#undef NCCLFI_ADDRESS
  return specs;
}

const LauncherSpec* find_launcher(std::string_view name) {
  for (const LauncherSpec* spec : launcher_specs()) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

std::unique_ptr<RankLauncher> make_launcher(std::string_view name) {
  const LauncherSpec* spec = find_launcher(name);
  if (spec == nullptr) throw std::invalid_argument("no launcher named \"" + std::string(name) + "\"");
  return spec->make();
}

const LauncherSpec& default_launcher(bool command_workload) {
  return command_workload ? kCommandLauncher : kLocalLauncher;
}

const LauncherSpec& launcher_of(const Scenario& scenario) {
  const LauncherSpec* spec = find_launcher(scenario.launcher.kind);
  if (spec == nullptr) throw std::logic_error("no launcher named \"" + scenario.launcher.kind + "\"");
  return *spec;
}

const LauncherSpec* node_launcher_of(const Scenario& scenario) {
  if (scenario.launcher.node_launcher.empty()) return nullptr;
  return find_launcher(scenario.launcher.node_launcher);
}

bool has_node_agents(const Scenario& scenario) {
  if (scenario.launcher.nodes <= 0) return false;
  const LauncherSpec& spec = launcher_of(scenario);
  return spec.reach == LauncherReach::kNodes ||
         (spec.reach == LauncherReach::kThroughNodeLauncher && node_launcher_of(scenario) != nullptr);
}

bool ranks_on_this_host(const Scenario& scenario) {
  const LauncherSpec& spec = launcher_of(scenario);
  return spec.reach == LauncherReach::kThisHost ||
         (spec.reach == LauncherReach::kThroughNodeLauncher && node_launcher_of(scenario) == nullptr);
}

std::string launcher_catalogue_markdown() {
  std::string out =
      "| launcher | workload | ranks run | restarts its workers | what it does |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const LauncherSpec* spec : launcher_specs()) {
    const char* workload =
        spec->workload == LauncherWorkload::kCommand ? "`command` only" : "builtin or `command`";
    const char* reach = spec->reach == LauncherReach::kThisHost ? "this host"
                        : spec->reach == LauncherReach::kNodes
                            ? "this host, or `nodes` hosts (node agents)"
                            : "this host, or `nodes` hosts through a `node_launcher`";
    out += "| `" + std::string(spec->name) + "` | " + workload + " | " + reach + " | " +
           (spec->restarts_workers ? "yes (`max_restarts`)" : "no") + " | " + std::string(spec->summary) +
           " |\n";
  }
  return out;
}

}  // namespace ncclfi::cli
