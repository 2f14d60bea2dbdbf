#include "node_agents.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "agent_protocol.h"
#include "host_env.h"
#include "link_faults.h"
#include "orphan_guard.h"

namespace ncclfi::cli {
namespace {

// How long the node agents have to start and prove the secret: a launcher reaching every node (Open
// MPI's daemons, a Slurm step) takes seconds on a busy cluster.
constexpr int kAgentsStartMs = 30'000;

}  // namespace

NodeAgents::NodeAgents(LaunchContext& ctx, const RankLauncher& launcher, const std::string& cgroup_procs,
                       bool inject, const AttemptClock& clock)
    : clock_(clock), grace_s_(ctx.scenario->grace_s) {
  try {
    start(ctx, launcher, cgroup_procs, inject);
  } catch (...) {
    stop();
    throw;
  }
}

void NodeAgents::start(LaunchContext& ctx, const RankLauncher& launcher, const std::string& cgroup_procs,
                       bool inject) {
  hub_ = std::make_unique<AgentHub>(random_hex(), ctx.events_path);
  ctx.agent_addr = hub_->address();
  ctx.agent_secret = hub_->secret();
  ctx.agent_spool = "/tmp/ncclfi-" + ctx.harness_id + "-" + std::to_string(ctx.attempt);
  local_spool_ = ctx.agent_spool;
  hub_->keep_output(ctx.log_dir, ctx.scenario->workload.ranks);
  auto spec = launcher.agent_process(ctx);
  if (!spec) throw std::runtime_error("the launcher cannot start node agents");
  spec->cgroup_procs = cgroup_procs;
  process_ = RankProcess::spawn(*spec);
  OrphanGuard::watch_group(process_->pid());
  if (!spec->slurm_job_name.empty()) OrphanGuard::watch_slurm_job(spec->slurm_job_name);
  slurm_job_name_ = spec->slurm_job_name;
  const auto wanted = static_cast<size_t>(ctx.scenario->launcher.nodes);
  const size_t in = hub_->wait_for_agents(wanted, kAgentsStartMs);
  if (in < wanted) {
    throw std::runtime_error("only " + std::to_string(in) + " of " + std::to_string(wanted) +
                             " node agents reached the harness at " + ctx.agent_addr + " (see " +
                             spec->log_path + ")");
  }
  if (inject) {
    if (const auto why = link_faults_unavailable(*ctx.scenario, *hub_)) throw std::runtime_error(*why);
  }
  hub_->relay_control_from(ctx.run_dir);
  // The job's port again, now that the hub and the agents' launcher hold theirs: the one drawn before
  // was free then, and the kernel once gave it to the hub (torchrun's c10d store, finding it taken,
  // dialled the hub instead and failed).
  ctx.master_port = pick_free_port();
}

void NodeAgents::stop() {
  if (!process_) return;
  if (hub_) hub_->quit(static_cast<int>(grace_s_ * 1000) + 3000);
  for (int sig : {SIGTERM, SIGKILL}) {
    const int64_t end = clock_.now().mono_ns + 3'000'000'000;
    while (!process_->poll() && clock_.now().mono_ns < end) sleep_ns(kAttemptPollNs);
    if (process_->poll()) break;
    process_->signal_group(sig);
  }
  OrphanGuard::forget_group(process_->pid());
  if (!slurm_job_name_.empty()) OrphanGuard::forget_slurm_job(slurm_job_name_);
  process_.reset();
  // This host's agent removes its spool when it quits, but a teardown (deadline, interrupt) may have
  // SIGKILLed it first, with every process of the job. Its agents are all gone now: what is left under
  // the spool's name on this host is theirs. remove_all removes a symlink planted there, not its target.
  std::error_code ec;
  std::filesystem::remove_all(local_spool_, ec);
}

void NodeAgents::record_rank_output(harness::History& history, int attempt,
                                    const std::string& log_dir_rel) const {
  for (const auto& [rank, o] : hub_->rank_output()) {
    harness::RankOutput r;
    r.attempt = attempt;
    r.rank = rank;
    r.host = o.host;
    r.last_lines = o.lines;
    r.lines = static_cast<int64_t>(std::max(o.lines_total, o.streamed));
    r.dropped = static_cast<int64_t>(o.dropped);
    r.skipped_lines = static_cast<int64_t>(o.skipped_lines);
    r.cut_lines = static_cast<int64_t>(o.cut_lines);
    r.not_stored = static_cast<int64_t>(o.not_stored);
    if (!o.file.empty()) r.file = log_dir_rel + "/" + o.file;
    history.rank_output.push_back(std::move(r));
  }
}

}  // namespace ncclfi::cli
