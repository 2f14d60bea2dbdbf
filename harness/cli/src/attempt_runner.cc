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

#include "drill_abort.h"
#include "interrupt.h"
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
        clock_(in.clock != nullptr ? *in.clock : AttemptClock::system()),
        history_(history),
        events_(in.ctx.events_path, "harness"),
        event_tail_(in.ctx.events_path, in.events_offset, harness::kMaxEventLineBytes + 1) {}

  AttemptResult run() {
    const EventTime start = clock_.now();
    result_.start_ns = start.wall_ns;
    start_mono_ns_ = start.mono_ns;
    launch_all();
    if (in_.ctx.inject) schedule_ = ProcFaultSchedule(*in_.ctx.scenario);
    const int64_t deadline_ns = start_mono_ns_ + seconds_to_ns(in_.ctx.scenario->deadline_s);
    while (true) {
      const int64_t now = clock_.now().mono_ns;
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
    schedule_.release_stopped(*this);
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
    nlohmann::json fields = {{"fault_id", fault.id},          {"kind", fault.kind}, {"layer", "proc"},
                             {"point", "proc/" + fault.kind}, {"action", action},   {"signal", sig},
                             {"attempt", in_.ctx.attempt}};
    if (window != 0) fields["window"] = window;
    events_.write_for_rank(rank, ev::kInject, fields, at);
  }

  void record_heal(const Fault& fault, int rank, uint64_t window, EventTime at) override {
    nlohmann::json fields = {
        {"fault_id", fault.id}, {"kind", fault.kind}, {"layer", "proc"}, {"attempt", in_.ctx.attempt}};
    if (window != 0) fields["window"] = window;
    events_.write_for_rank(rank, ev::kHeal, fields, at);
  }

 private:
  void launch_all() {
    const auto specs = in_.launcher->processes(in_.ctx);
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
      const auto lines = final ? p.output.read_rest() : p.output.read_lines();
      for (const auto& text : lines) {
        int rank = p.process->spec().rank;
        if (rank < 0) rank = in_.launcher->rank_of_line(text);
        harness::observe_log_line(history_, *in_.classifier,
                                  {now.wall_ns, rank, in_.ctx.attempt, "stdout", text, now.mono_ns, host_});
      }
    }
    follow_events(final);
  }

  void follow_events(bool final) {
    const auto lines = final ? event_tail_.read_rest() : event_tail_.read_lines();
    for (const auto& line : lines) {
      if (line.find("\"inject\"") != std::string::npos && line.find("\"harness\"") == std::string::npos)
        ++injections_;
      harness::observe_event_line(line, history_, in_.ctx.attempt);
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
  void apply_proc_faults(int64_t now) { schedule_.fire_due(now, *this); }

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
  const AttemptClock& clock_;
  History& history_;
  EventLog events_;
  OutputTailer event_tail_;
  std::vector<RunningProcess> procs_;
  std::set<int> torn_down_;
  ProcFaultSchedule schedule_;
  AttemptResult result_;
  int64_t start_mono_ns_ = 0;
  const std::string host_ = host_name();  // the host whose monotonic clock the harness's times are on
  int injections_ = 0;
  int64_t next_progress_ns_ = 0;
  bool ras_started_ = false;
  int64_t ras_ts_ = 0;
  std::future<harness::RasReport> ras_;
  std::unique_ptr<RunCgroup> cgroup_ = make_cgroup(in_.ctx.harness_id);
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
