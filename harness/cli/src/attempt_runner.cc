#include "attempt_runner.h"

#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <set>

#include "agent_hub.h"
#include "drill_abort.h"
#include "interrupt.h"
#include "link_faults.h"
#include "ncclfi/injector.h"
#include "orphan_guard.h"
#include "output_tailer.h"
#include "proc_faults.h"
#include "run_cgroup.h"

namespace ncclfi::cli {
namespace {

using harness::History;

constexpr int64_t kPollNs = 5'000'000;  // 5 ms: the resolution of output-line timestamps
// Less room than this left in the run directory's file system after an attempt: a line may not have
// fit (an event line is well under this, a rank's output line can be longer).
constexpr uint64_t kMinFreeBytes = 64 << 10;
// How long the node agents have to start and prove the secret: a launcher reaching every node (Open
// MPI's daemons, a Slurm step) takes seconds on a busy cluster.
constexpr int kAgentsStartMs = 30'000;

int64_t seconds_to_ns(double seconds) {
  return static_cast<int64_t>(seconds * 1e9);
}

void sleep_ns(int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  nanosleep(&ts, nullptr);
}

struct RunningProcess {
  std::unique_ptr<RankProcess> process;
  OutputTailer output;
  bool reaped = false;
};

class AttemptLoop final : public RankSignaller {
 public:
  AttemptLoop(const AttemptInputs& in, History& history)
      : in_(in),
        ctx_(in.ctx),
        clock_(in.clock != nullptr ? *in.clock : AttemptClock::system()),
        history_(history),
        events_(in.ctx.events_path, "harness"),
        event_tail_(in.ctx.events_path, in.events_offset, harness::kMaxEventLineBytes + 1) {}

  AttemptResult run() {
    const EventTime start = clock_.now();
    result_.start_ns = start.wall_ns;
    start_mono_ns_ = start.mono_ns;
    start_agents();
    launch_all();
    if (in_.ctx.inject) schedule_ = ProcFaultSchedule(*in_.ctx.scenario);
    if (in_.ctx.inject && hub_) link_schedule_ = LinkFaultSchedule(*in_.ctx.scenario);
    const int64_t deadline_ns = start_mono_ns_ + seconds_to_ns(in_.ctx.scenario->deadline_s);
    while (true) {
      const int64_t now = clock_.now().mono_ns;
      if (hub_) hub_->poll(0);
      follow_output();
      reap_exited(false);
      if (alive() == 0) break;
      if (poll_abort_request(in_.ctx.run_dir) || interrupted()) {
        result_.interrupted = true;
        events_.write("interrupt", {{"attempt", in_.ctx.attempt}, {"signal", interrupt_signal()}});
        stop_injection();
        teardown(abort_requested() ? "abort" : "interrupt");
        break;
      }
      apply_proc_faults(now);
      maybe_probe_ras(now, deadline_ns);
      if (now >= deadline_ns) {
        result_.deadline_hit = true;
        events_.write("deadline",
                      {{"attempt", in_.ctx.attempt}, {"deadline_s", in_.ctx.scenario->deadline_s}});
        teardown("deadline");
        break;
      }
      report_progress(now, "running");
      sleep_ns(kPollNs);
    }
    if (result_.interrupted && abort_requested()) wait_for_abort_record();
    schedule_.release_stopped(*this);
    stop_agents();
    record_rank_output();
    finish_ras_probe(true);
    follow_output(true);
    report_truncated_lines();
    follow_events(true);
    kill_cgroup();                               // what a rank left running (a daemon) dies with its attempt
    remove_dead_control_fifos(in_.ctx.run_dir);  // on every way out: a killed rank leaves its FIFOs
    check_records_written();
    result_.end_ns = clock_.now().wall_ns;
    result_.events_end_offset = event_tail_.offset();
    return result_;
  }

  // Signals a rank for a proc fault: its own process group when the harness started it, else every
  // process that carries this harness's id and that rank (ranks under mpirun or torchrun).
  int signal_rank(int rank, int sig, EventTime* sent) override {
    if (hub_) return hub_->signal_rank(rank, sig, sent);  // never this host's /proc: the rank's node's agent
    for (auto& p : procs_) {
      if (p.process->spec().rank == rank && !p.reaped) {
        if (sent != nullptr) *sent = EventTime::now();
        p.process->signal_group(sig);
        return 1;
      }
    }
    const auto pids = find_rank_pids(in_.ctx.harness_id, rank);
    if (sent != nullptr) *sent = EventTime::now();
    int n = 0;
    for (int pid : pids) n += kill(pid, sig) == 0 ? 1 : 0;
    return n;
  }

  std::set<int> running_ranks() override {
    if (hub_) return hub_->running_ranks();
    std::set<int> ranks;
    bool launcher = false;  // a process that starts ranks itself (srun, mpirun, torchrun)
    for (const auto& p : procs_) {
      if (p.reaped) continue;
      if (p.process->spec().rank >= 0)
        ranks.insert(p.process->spec().rank);
      else
        launcher = true;
    }
    if (launcher) {
      for (const auto& [rank, pids] : find_all_rank_pids(in_.ctx.harness_id)) ranks.insert(rank);
    }
    return ranks;
  }

  void record_injection(const Fault& fault, int rank, const std::string& action, int sig,
                        EventTime at) override {
    record_injection_in_window(fault, rank, action, sig, at, 0);
  }

  void record_injection_in_window(const Fault& fault, int rank, const std::string& action, int sig,
                                  EventTime at, uint64_t window) override {
    ++injections_;
    nlohmann::json fields = {{"fault_id", fault.id},
                             {"kind", fault.kind},
                             {"layer", to_string(fault.layer)},
                             {"point", std::string(to_string(fault.layer)) + "/" + fault.kind},
                             {"action", action},
                             {"signal", sig},
                             {"attempt", in_.ctx.attempt}};
    if (window != 0) fields["window"] = window;
    events_.write_for_rank(rank, ev::kInject, fields, at);
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
  // With launcher.nodes: the hub listens, one agent per node is started and must prove the drill's
  // secret before the job starts (the ranks write their events where only their agent reads them).
  void start_agents() {
    if (in_.ctx.scenario->launcher.nodes <= 0) return;
    hub_ = std::make_unique<AgentHub>(random_hex(), in_.ctx.events_path);
    ctx_.agent_addr = hub_->address();
    ctx_.agent_secret = hub_->secret();
    ctx_.agent_spool = "/tmp/ncclfi-" + in_.ctx.harness_id + "-" + std::to_string(in_.ctx.attempt);
    hub_->keep_output(in_.ctx.log_dir, in_.ctx.scenario->workload.ranks);
    auto spec = in_.launcher->agent_process(ctx_);
    if (!spec) throw std::runtime_error("the launcher cannot start node agents");
    if (cgroup_) spec->cgroup_procs = cgroup_->path() + "/cgroup.procs";
    agents_proc_ = RankProcess::spawn(*spec);
    OrphanGuard::watch_group(agents_proc_->pid());
    if (!spec->slurm_job_name.empty()) OrphanGuard::watch_slurm_job(spec->slurm_job_name);
    agents_job_name_ = spec->slurm_job_name;
    const auto wanted = static_cast<size_t>(in_.ctx.scenario->launcher.nodes);
    const size_t in = hub_->wait_for_agents(wanted, kAgentsStartMs);
    if (in < wanted) {
      stop_agents();
      throw std::runtime_error("only " + std::to_string(in) + " of " + std::to_string(wanted) +
                               " node agents reached the harness at " + ctx_.agent_addr + " (see " +
                               spec->log_path + ")");
    }
    if (in_.ctx.inject) {
      if (const auto why = link_faults_unavailable(*in_.ctx.scenario, *hub_)) {
        stop_agents();
        throw std::runtime_error(*why);
      }
    }
    hub_->relay_control_from(in_.ctx.run_dir);
    // The job's port again, now that the hub and the agents' launcher hold theirs: the one drawn before
    // was free then, and the kernel once gave it to the hub (torchrun's c10d store, finding it taken,
    // dialled the hub instead and failed).
    ctx_.master_port = pick_free_port();
  }

  // The agents tear down what is left on their nodes, send their last events and leave; their launcher
  // then ends (or is ended).
  void stop_agents() {
    if (!agents_proc_) return;
    if (hub_) hub_->quit(static_cast<int>(in_.ctx.scenario->grace_s * 1000) + 3000);
    for (int sig : {SIGTERM, SIGKILL}) {
      const int64_t end = clock_.now().mono_ns + 3'000'000'000;
      while (!agents_proc_->poll() && clock_.now().mono_ns < end) sleep_ns(kPollNs);
      if (agents_proc_->poll()) break;
      agents_proc_->signal_group(sig);
    }
    OrphanGuard::forget_group(agents_proc_->pid());
    if (!agents_job_name_.empty()) OrphanGuard::forget_slurm_job(agents_job_name_);
    agents_proc_.reset();
  }

  // What the agents streamed of each rank's output, and its final tail, into the history (the reports).
  void record_rank_output() {
    if (!hub_) return;
    for (const auto& [rank, o] : hub_->rank_output()) {
      harness::RankOutput r;
      r.attempt = in_.ctx.attempt;
      r.rank = rank;
      r.host = o.host;
      r.last_lines = o.lines;
      r.lines = static_cast<int64_t>(std::max(o.lines_total, o.streamed));
      r.dropped = static_cast<int64_t>(o.dropped);
      r.skipped_lines = static_cast<int64_t>(o.skipped_lines);
      r.cut_lines = static_cast<int64_t>(o.cut_lines);
      r.not_stored = static_cast<int64_t>(o.not_stored);
      if (!o.file.empty()) r.file = in_.log_dir_rel + "/" + o.file;
      history_.rank_output.push_back(std::move(r));
    }
  }

  void launch_all() {
    const auto specs = in_.launcher->processes(ctx_);
    auto& logs = history_.rank_logs;
    if (logs.size() <= static_cast<size_t>(in_.ctx.attempt))
      logs.resize(static_cast<size_t>(in_.ctx.attempt) + 1);
    auto& attempt_logs = logs[static_cast<size_t>(in_.ctx.attempt)];
    attempt_logs.assign(static_cast<size_t>(in_.ctx.scenario->workload.ranks), "");
    for (auto spec : specs) {
      if (cgroup_) spec.cgroup_procs = cgroup_->path() + "/cgroup.procs";
      std::unique_ptr<RankProcess> process;
      try {
        process = RankProcess::spawn(spec);
      } catch (const std::exception& e) {
        teardown("launch_failed");
        throw std::runtime_error(std::string("launch failed: ") + e.what());
      }
      OrphanGuard::watch_group(process->pid());
      if (!spec.slurm_job_name.empty()) OrphanGuard::watch_slurm_job(spec.slurm_job_name);
      const std::string log_rel =
          in_.log_dir_rel + "/" + std::filesystem::path(spec.log_path).filename().string();
      for (size_t r = 0; r < attempt_logs.size(); ++r) {
        if (spec.rank < 0 || static_cast<size_t>(spec.rank) == r) attempt_logs[r] = log_rel;
      }
      events_.write_for_rank(spec.rank, "launch",
                             {{"attempt", in_.ctx.attempt},
                              {"pid", process->pid()},
                              {"argv", spec.argv},
                              {"launcher", to_string(in_.ctx.scenario->launcher.kind)}});
      procs_.push_back({std::move(process), OutputTailer(spec.log_path, 0, harness::kMaxLineBytes), false});
    }
  }

  int alive() const {
    return static_cast<int>(
        std::count_if(procs_.begin(), procs_.end(), [](const auto& p) { return !p.reaped; }));
  }

  void follow_output(bool final = false) {
    // A line's time: the wall clock on the timeline, the monotonic one for detection times.
    const auto now = clock_.now();
    for (auto& p : procs_) {
      auto observe = [&](const std::string& text) {
        int rank = p.process->spec().rank;
        if (rank < 0) rank = in_.launcher->rank_of_line(text);
        harness::observe_log_line(history_, *in_.classifier,
                                  {now.wall_ns, rank, in_.ctx.attempt, "stdout", text, now.mono_ns, host_});
      };
      if (final) {
        p.output.read_rest(observe);
      } else {
        for (const auto& text : p.output.read_lines()) observe(text);
      }
    }
    follow_events(final);
  }

  void follow_events(bool final) {
    auto observe = [&](const std::string& line) {
      if (line.find("\"by\":\"ncclfi abort\"") != std::string::npos) abort_recorded_ = true;
      if (line.find("\"inject\"") != std::string::npos && line.find("\"harness\"") == std::string::npos)
        ++injections_;
      harness::observe_event_line(line, history_, in_.ctx.attempt);
    };
    if (final) {
      event_tail_.read_rest(observe);
    } else {
      for (const auto& line : event_tail_.read_lines()) observe(line);
    }
  }

  // Freezes and kills whatever is left in the attempt's cgroup, and reaps those that were re-parented to
  // ncclfi (a child subreaper).
  void kill_cgroup() {
    if (!cgroup_) return;
    for (int pid : cgroup_->kill_all()) ::waitpid(pid, nullptr, WNOHANG);
  }

  // The harness's lines and the ranks' output and events all land in the run directory. A line the
  // harness could not write, or a file system left without room (where a rank's failed write leaves no
  // trace the harness could read), means the records may have holes: the run cannot pass.
  void check_records_written() {
    auto note = [&](const std::string& why) {
      auto& lost = history_.records_lost;
      if (std::find(lost.begin(), lost.end(), why) == lost.end()) lost.push_back(why);
    };
    if (events_.lost() > 0)
      note("the harness could not write " + std::to_string(events_.lost()) + " event line(s) to " +
           in_.ctx.events_path);
    struct statvfs fs {};
    if (::statvfs(in_.ctx.run_dir.c_str(), &fs) == 0) {
      const auto free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
      if (free_bytes < kMinFreeBytes)
        note("the file system of " + in_.ctx.run_dir + " is full (" + std::to_string(free_bytes) +
             " bytes free): rank output and events may be missing");
    }
  }

  // Lines longer than the classifiers read were classified on their head only: the timeline says so.
  void report_truncated_lines() {
    for (const auto& p : procs_) {
      if (p.output.truncated_lines() == 0) continue;
      events_.write_for_rank(p.process->spec().rank, "output_truncated",
                             {{"attempt", in_.ctx.attempt},
                              {"lines", p.output.truncated_lines()},
                              {"kept_bytes", harness::kMaxLineBytes}});
    }
  }

  void reap_exited(bool killed_by_harness) {
    for (auto& p : procs_) {
      if (p.reaped || !p.process->poll()) continue;
      p.reaped = true;
      OrphanGuard::forget_group(p.process->pid());
      if (!p.process->spec().slurm_job_name.empty())
        OrphanGuard::forget_slurm_job(p.process->spec().slurm_job_name);
      harness::RankExit exit;
      exit.rank = p.process->spec().rank;
      exit.attempt = in_.ctx.attempt;
      exit.pid = p.process->pid();
      exit.exit_code = p.process->exit_code();
      exit.signal = p.process->exit_signal();
      exit.killed_by_harness = killed_by_harness || torn_down_.count(p.process->pid()) > 0;
      const auto ended = clock_.now();
      exit.ts_ns = ended.wall_ns;
      exit.mono_ns = ended.mono_ns;
      exit.host = host_;
      if (exit.signal || (exit.exit_code && *exit.exit_code != 0)) result_.failed = true;
      history_.exits.push_back(exit);
    }
  }

  // SIGTERM to every live process group, a grace period, then SIGKILL; then a sweep for anything
  // that carries this harness's id and escaped its group.
  void teardown(const std::string& why) {
    report_progress(clock_.now().mono_ns, "teardown");
    if (hub_) hub_->teardown();  // every node's ranks, through their agents
    for (auto& p : procs_) {
      if (p.reaped) continue;
      torn_down_.insert(p.process->pid());
      events_.write_for_rank(
          p.process->spec().rank, "kill",
          {{"attempt", in_.ctx.attempt}, {"pid", p.process->pid()}, {"signal", SIGTERM}, {"why", why}});
      p.process->signal_group(SIGCONT);  // a stopped rank cannot act on SIGTERM
      p.process->signal_group(SIGTERM);
    }
    const int64_t grace_end = clock_.now().mono_ns + seconds_to_ns(in_.ctx.scenario->grace_s);
    while (alive() > 0 && clock_.now().mono_ns < grace_end) {
      reap_exited(false);
      follow_output();
      sleep_ns(kPollNs);
    }
    for (auto& p : procs_) {
      if (!p.reaped) p.process->signal_group(SIGKILL);
    }
    while (alive() > 0) {
      reap_exited(false);
      sleep_ns(kPollNs);
    }
    signal_processes_with_harness_id(in_.ctx.harness_id, SIGKILL);
    kill_cgroup();
    if (why != "launch_failed") result_.failed = true;
    remove_dead_control_fifos(in_.ctx.run_dir);
  }

  // `ncclfi abort` writes its control event after disarming every fault, which takes longer than this
  // teardown when the ranks are gone (each dead FIFO waits out its timeout). The record of the run (the
  // drill report's abort row) must hold it: wait for it, as long as the tool itself may take.
  void wait_for_abort_record() {
    const auto faults = static_cast<int64_t>(in_.ctx.scenario->plan.faults.size());
    const int64_t end = clock_.now().mono_ns + (faults * 500 + 3000) * 1'000'000;
    while (!abort_recorded_ && clock_.now().mono_ns < end) {
      follow_events(false);
      sleep_ns(kPollNs);
    }
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
                              {"timed_out", r.timed_out}},
                             given);
    }
  }

  // `now`: the monotonic clock, like every timer of the schedule.
  void apply_proc_faults(int64_t now) {
    schedule_.fire_due(now, *this);
    if (hub_) {
      link_schedule_.fire_due(now, *hub_, [this](const Fault& fault, int rank, EventTime at) {
        record_injection(fault, rank, fault.kind, 0, at);
      });
    }
  }

  // With probe_ras: once, when three quarters of the deadline passed with ranks still running (a
  // suspected hang), ask NCCL's RAS port who is missing. Runs beside the loop: it may block seconds.
  void maybe_probe_ras(int64_t now, int64_t deadline_ns) {
    if (!in_.ctx.scenario->probe_ras) return;
    if (!ras_started_ && now >= start_mono_ns_ + (deadline_ns - start_mono_ns_) * 3 / 4) {
      ras_started_ = true;
      ras_ts_ = clock_.now().wall_ns;  // the detection's time on the timeline
      const char* addr = std::getenv("NCCL_RAS_ADDR");
      const auto it = in_.ctx.scenario->env.find("NCCL_RAS_ADDR");
      auto options =
          harness::ras_address_from_env(it != in_.ctx.scenario->env.end() ? it->second.c_str() : addr);
      options.timeout_s = 3.0;
      ras_ = std::async(std::launch::async, [options] { return harness::probe_ras(options); });
    }
    finish_ras_probe(false);
  }

  void finish_ras_probe(bool wait) {
    if (!ras_.valid()) return;
    if (!wait && ras_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    harness::record_ras_probe(history_, ras_.get(), ras_ts_, in_.ctx.attempt);
  }

  void report_progress(int64_t now, const char* phase) {
    if (!in_.progress || now < next_progress_ns_) return;
    next_progress_ns_ = now + 200'000'000;
    harness::ProgressState st = in_.progress_base;
    st.attempt = in_.ctx.attempt;
    st.ranks_total = in_.ctx.scenario->workload.ranks;
    st.ranks_running =
        procs_.size() == 1 && procs_[0].process->spec().rank < 0 ? (alive() ? st.ranks_total : 0) : alive();
    st.elapsed_s = static_cast<double>(now - start_mono_ns_) / 1e9;
    st.deadline_s = in_.ctx.scenario->deadline_s;
    st.injections = injections_;
    for (const auto& d : history_.detections) {
      if (std::find(st.detections.begin(), st.detections.end(), d.mechanism) == st.detections.end()) {
        st.detections.push_back(d.mechanism);
      }
    }
    st.phase = phase;
    in_.progress(st);
  }

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
  OutputTailer event_tail_;
  std::vector<RunningProcess> procs_;
  std::set<int> torn_down_;
  ProcFaultSchedule schedule_;
  LinkFaultSchedule link_schedule_;
  AttemptResult result_;
  int64_t start_mono_ns_ = 0;
  const std::string host_ = host_name();  // the host whose monotonic clock the harness's times are on
  int injections_ = 0;
  int64_t next_progress_ns_ = 0;
  bool ras_started_ = false;
  int64_t ras_ts_ = 0;
  std::future<harness::RasReport> ras_;
  std::unique_ptr<RunCgroup> cgroup_ = make_cgroup(in_.ctx.harness_id);
  bool abort_recorded_ = false;  // `ncclfi abort`'s control event was read
  std::unique_ptr<AgentHub> hub_;
  std::unique_ptr<RankProcess> agents_proc_;
  std::string agents_job_name_;
};

}  // namespace

const AttemptClock& AttemptClock::system() {
  static const AttemptClock clock{};
  return clock;
}

AttemptResult run_attempt(const AttemptInputs& in, History& history) {
  AttemptLoop loop(in, history);
  return loop.run();
}

}  // namespace ncclfi::cli
