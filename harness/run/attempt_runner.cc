#include "attempt_runner.h"

#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <set>

#include "attempt_observation.h"
#include "drill_abort.h"
#include "interrupt.h"
#include "job_processes.h"
#include "link_faults.h"
#include "ncclfi/fault_kinds.h"
#include "ncclfi/injector.h"
#include "node_agents.h"
#include "orphan_guard.h"
#include "proc_faults.h"
#include "proc_scan.h"
#include "run_cgroup.h"

namespace ncclfi::cli {
namespace {

using harness::History;

// The point a fault the harness carries out (proc, link) fires at: its kind's one point (proc/kill, ...).
std::string harness_point(const Fault& fault) {
  const FaultKindSpec* kind = find_fault_kind(fault.layer, fault.kind);
  return kind != nullptr && !kind->points.empty() ? std::string(kind->points.front())
                                                  : std::string(to_string(fault.layer)) + "/" + fault.kind;
}

// The loop itself: starts the attempt's parts, polls them every kAttemptPollNs until every process
// ended, an interrupt or `ncclfi abort`, or the deadline, and ends the attempt. It is the proc faults'
// hands (RankSignaller): through the node agents when the job has them, else on this host.
class AttemptLoop final : public RankSignaller {
 public:
  AttemptLoop(const AttemptInputs& in, History& history)
      : in_(in),
        ctx_(in.ctx),
        clock_(in.clock != nullptr ? *in.clock : AttemptClock::system()),
        history_(history),
        events_(in.ctx.events_path, "harness"),
        observation_(in, history, events_, clock_) {}

  AttemptResult run() {
    start();
    watch();
    finish();
    return result_;
  }

  // Signals a rank for a proc fault: its own process group when the harness started it, else every
  // process that carries this harness's id and that rank (ranks under mpirun or torchrun).
  int signal_rank(int rank, int sig, EventTime* sent) override {
    if (agents_) return agents_->hub().signal_rank(rank, sig, sent);  // never this host's /proc
    if (procs_.signal_rank(rank, sig, sent)) return 1;
    const auto all = job_rank_pids(in_.ctx.harness_id);
    const auto it = all.find(rank);
    if (sent != nullptr) *sent = EventTime::now();
    int n = 0;
    if (it != all.end())
      for (int pid : it->second) n += kill(pid, sig) == 0 ? 1 : 0;
    return n;
  }

  std::set<int> running_ranks() override {
    if (agents_) return agents_->hub().running_ranks();
    bool launcher = false;  // a process that starts ranks itself (srun, mpirun, torchrun)
    std::set<int> ranks = procs_.running_ranks(&launcher);
    if (launcher) {
      for (const auto& [rank, pids] : job_rank_pids(in_.ctx.harness_id)) ranks.insert(rank);
    }
    return ranks;
  }

  void record_injection(const Fault& fault, int rank, const std::string& action, int sig,
                        EventTime at) override {
    record_injection_in_window(fault, rank, action, sig, at, 0);
  }

  void record_injection_in_window(const Fault& fault, int rank, const std::string& action, int sig,
                                  EventTime at, uint64_t window) override {
    observation_.count_injection();
    nlohmann::json fields = {
        {"fault_id", fault.id},          {"kind", fault.kind}, {"layer", to_string(fault.layer)},
        {"point", harness_point(fault)}, {"action", action},   {"signal", sig},
        {"attempt", in_.ctx.attempt}};
    if (window != 0) fields["window"] = window;
    observation_.record_own_injection(rank, std::move(fields), at);
  }

  void record_heal(const Fault& fault, int rank, uint64_t window, EventTime at) override {
    nlohmann::json fields = {{"fault_id", fault.id},
                             {"kind", fault.kind},
                             {"layer", to_string(fault.layer)},
                             {"attempt", in_.ctx.attempt}};
    if (window != 0) fields["window"] = window;
    events_.write_for_rank(rank, ev::kHeal, fields, at);
  }

 private:
  // The agents first (they must be in before the job starts), then the job, then the fault schedules.
  void start() {
    const EventTime start = clock_.now();
    result_.start_ns = start.wall_ns;
    start_mono_ns_ = start.mono_ns;
    deadline_ns_ = start_mono_ns_ + seconds_to_ns(in_.ctx.scenario->deadline_s);
    if (in_.ctx.scenario->launcher.nodes > 0)
      agents_ = std::make_unique<NodeAgents>(ctx_, *in_.launcher, cgroup_procs(), in_.ctx.inject, clock_);
    observation_.open_injection_channel(ctx_, agents_ ? &agents_->hub() : nullptr);
    launch_all();
    if (in_.ctx.inject) schedule_ = ProcFaultSchedule(*in_.ctx.scenario);
    if (in_.ctx.inject && agents_) link_schedule_ = LinkFaultSchedule(*in_.ctx.scenario);
  }

  void launch_all() {
    observation_.expect_rank_logs();
    for (const auto& spec : in_.launcher->processes(ctx_)) {
      try {
        observation_.launched(procs_.start(spec, cgroup_procs()));
      } catch (const std::exception& e) {
        teardown("launch_failed");
        throw std::runtime_error(std::string("launch failed: ") + e.what());
      }
    }
  }

  // Until every process ended, an interrupt or abort, or the deadline.
  void watch() {
    while (true) {
      const int64_t now = clock_.now().mono_ns;
      if (agents_) agents_->hub().poll(0);
      observation_.follow(procs_);
      reap();
      if (procs_.alive() == 0) return;
      if (poll_abort_request(in_.ctx.run_dir) || interrupted()) {
        result_.interrupted = true;
        events_.write("interrupt", {{"attempt", in_.ctx.attempt}, {"signal", interrupt_signal()}});
        stop_injection();
        teardown(abort_requested() ? "abort" : "interrupt");
        return;
      }
      apply_proc_faults(now);
      observation_.probe_ras(now, start_mono_ns_, deadline_ns_);
      if (now >= deadline_ns_) {
        result_.deadline_hit = true;
        events_.write("deadline",
                      {{"attempt", in_.ctx.attempt}, {"deadline_s", in_.ctx.scenario->deadline_s}});
        teardown("deadline");
        return;
      }
      observation_.report_progress(now, start_mono_ns_, "running", procs_);
      sleep_ns(kAttemptPollNs);
    }
  }

  // Everything still to read and record once the job is gone, and what it left behind.
  void finish() {
    if (result_.interrupted && abort_requested()) observation_.wait_for_abort_record();
    schedule_.release_stopped(*this);
    if (agents_) {
      agents_->stop();
      agents_->record_rank_output(history_, in_.ctx.attempt, in_.log_dir_rel);
    }
    observation_.finish_ras_probe(true);
    observation_.follow(procs_, true);
    observation_.report_truncated_lines(procs_);
    observation_.follow_events(true);
    observation_.settle_injections();
    kill_cgroup();                               // what a rank left running (a daemon) dies with its attempt
    remove_dead_control_fifos(in_.ctx.run_dir);  // on every way out: a killed rank leaves its FIFOs
    observation_.check_records_written();
    result_.end_ns = clock_.now().wall_ns;
    result_.events_end_offset = observation_.events_offset();
  }

  void reap() {
    procs_.reap([this](const JobProcess& p) {
      if (observation_.ended(p)) result_.failed = true;
    });
  }

  // SIGTERM to every live process group, a grace period, then SIGKILL; then a sweep for anything
  // that carries this harness's id and escaped its group.
  void teardown(const std::string& why) {
    observation_.report_progress(clock_.now().mono_ns, start_mono_ns_, "teardown", procs_);
    if (agents_) agents_->hub().teardown();  // every node's ranks, through their agents
    procs_.terminate([&](const JobProcess& p) {
      events_.write_for_rank(
          p.rank(), ev::kKill,
          {{"attempt", in_.ctx.attempt}, {"pid", p.process->pid()}, {"signal", SIGTERM}, {"why", why}});
    });
    const int64_t grace_end = clock_.now().mono_ns + seconds_to_ns(in_.ctx.scenario->grace_s);
    while (procs_.alive() > 0 && clock_.now().mono_ns < grace_end) {
      reap();
      observation_.follow(procs_);
      sleep_ns(kAttemptPollNs);
    }
    procs_.kill();
    while (procs_.alive() > 0) {
      reap();
      sleep_ns(kAttemptPollNs);
    }
    signal_processes_with_harness_id(in_.ctx.harness_id, SIGKILL);
    kill_cgroup();
    if (why != "launch_failed") result_.failed = true;
    remove_dead_control_fifos(in_.ctx.run_dir);
  }

  // An abort or Ctrl-C: every injection stops before the teardown begins (drill_abort.h). The harness's
  // own proc faults are cancelled and stopped ranks continued; every fault is disarmed in every live rank
  // through the control FIFOs. `ncclfi abort` recorded its own control event; a signal is recorded here.
  void stop_injection() {
    const EventTime given = clock_.now();
    schedule_.release_stopped(*this);
    const ControlResult r = disarm_all(in_.ctx.run_dir, in_.ctx.scenario->plan, 500);
    if (!abort_requested()) {
      events_.write_for_rank(-1, ev::kControl,
                             {{"action", "abort"},
                              {"fault_id", "all"},
                              {"by", "signal " + std::to_string(interrupt_signal())},
                              {"acknowledged", r.acknowledged},
                              {"skipped_dead", r.skipped_dead},
                              {"timed_out", r.timed_out},
                              {"refused", r.refused}},
                             given);
    }
  }

  // `now`: the monotonic clock, like every timer of the schedule.
  void apply_proc_faults(int64_t now) {
    schedule_.fire_due(now, *this);
    if (agents_) {
      link_schedule_.fire_due(now, agents_->hub(), [this](const Fault& fault, int rank, EventTime at) {
        record_injection(fault, rank, fault.kind, 0, at);
      });
    }
  }

  // Freezes and kills whatever is left in the attempt's cgroup, and reaps those that were re-parented to
  // ncclfi (a child subreaper). Before that, what carries this harness's id outside the cgroup (a rank's
  // daemon that got out where ranks cannot be given a cgroup namespace) is killed and counted in an
  // `escaped` event.
  void kill_cgroup() {
    if (!cgroup_) return;
    if (const int escaped = cgroup_->kill_escapers(in_.ctx.harness_id); escaped > 0)
      events_.write("escaped", {{"attempt", in_.ctx.attempt}, {"killed", escaped}});
    for (int pid : cgroup_->kill_all()) ::waitpid(pid, nullptr, WNOHANG);
  }

  std::string cgroup_procs() const { return cgroup_ ? cgroup_->path() + "/cgroup.procs" : std::string(); }

  // A fresh cgroup per attempt (nullptr where the host has none): the last teardown layer.
  static std::unique_ptr<RunCgroup> make_cgroup(const std::string& harness_id) {
    static int serial = 0;
    return RunCgroup::create("ncclfi-" + harness_id + "-" + std::to_string(++serial));
  }

  const AttemptInputs& in_;
  LaunchContext ctx_;  // in_.ctx plus the agents' address, secret and spool directory
  const AttemptClock& clock_;
  History& history_;
  EventLog events_;
  AttemptObservation observation_;
  JobProcesses procs_;
  ProcFaultSchedule schedule_;
  LinkFaultSchedule link_schedule_;
  AttemptResult result_;
  int64_t start_mono_ns_ = 0;
  int64_t deadline_ns_ = 0;
  std::unique_ptr<RunCgroup> cgroup_ = make_cgroup(in_.ctx.harness_id);
  std::unique_ptr<NodeAgents> agents_;
};

}  // namespace

AttemptResult run_attempt(const AttemptInputs& in, History& history) {
  AttemptLoop loop(in, history);
  return loop.run();
}

}  // namespace ncclfi::cli
