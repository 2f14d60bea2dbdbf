#include "attempt_observation.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "agent_hub.h"
#include "attempt_runner.h"
#include "judge.h"
#include "ncclfi/event_line.h"
#include "ncclfi/injection_channel.h"

namespace ncclfi::cli {
namespace {

// Less room than this left in the run directory's file system after an attempt: a line may not have
// fit (an event line is well under this, a rank's output line can be longer).
constexpr uint64_t kMinFreeBytes = 64 << 10;

}  // namespace

AttemptObservation::AttemptObservation(const AttemptInputs& in, harness::History& history, EventLog& events,
                                       const AttemptClock& clock)
    : in_(in),
      history_(history),
      events_(events),
      clock_(clock),
      event_tail_(in.ctx.events_path, in.events_offset, harness::kMaxEventLineBytes + 1) {}

void AttemptObservation::expect_rank_logs() {
  auto& logs = history_.rank_logs;
  const auto attempt = static_cast<size_t>(in_.ctx.attempt);
  if (logs.size() <= attempt) logs.resize(attempt + 1);
  logs[attempt].assign(static_cast<size_t>(in_.ctx.scenario->workload.ranks), "");
}

void AttemptObservation::launched(const JobProcess& p) {
  const ProcessSpec& spec = p.process->spec();
  const std::string log_rel =
      in_.log_dir_rel + "/" + std::filesystem::path(spec.log_path).filename().string();
  auto& attempt_logs = history_.rank_logs[static_cast<size_t>(in_.ctx.attempt)];
  for (size_t r = 0; r < attempt_logs.size(); ++r) {
    if (spec.rank < 0 || static_cast<size_t>(spec.rank) == r) attempt_logs[r] = log_rel;
  }
  events_.write_for_rank(spec.rank, "launch",
                         {{"attempt", in_.ctx.attempt},
                          {"pid", p.process->pid()},
                          {"argv", spec.argv},
                          {"launcher", in_.ctx.scenario->launcher.kind}});
}

bool AttemptObservation::ended(const JobProcess& p) {
  harness::RankExit exit;
  exit.rank = p.rank();
  exit.attempt = in_.ctx.attempt;
  exit.pid = p.process->pid();
  exit.exit_code = p.process->exit_code();
  exit.signal = p.process->exit_signal();
  exit.killed_by_harness = p.torn_down;
  const auto at = clock_.now();
  exit.ts_ns = at.wall_ns;
  exit.mono_ns = at.mono_ns;
  exit.host = host_;
  history_.exits.push_back(exit);
  return exit.signal || (exit.exit_code && *exit.exit_code != 0);
}

void AttemptObservation::follow(JobProcesses& procs, bool final) {
  // A line's time: the wall clock on the timeline, the monotonic one for detection times.
  const auto now = clock_.now();
  for (auto& p : procs.all()) {
    auto observe = [&](const std::string& text) {
      int rank = p.rank();
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

void AttemptObservation::follow_events(bool final) {
  auto observe = [&](const std::string& line) {
    if (line.find("\"by\":\"ncclfi abort\"") != std::string::npos) abort_recorded_ = true;
    if (line.find("\"inject\"") != std::string::npos && line.find("\"harness\"") == std::string::npos)
      ++injections_;
    harness::observe_event_line(line, history_, in_.ctx.attempt, injection_ledger_.get());
  };
  // The channel first: an injector sends its record before it writes its line, so a line read now
  // finds its record already in the ledger.
  if (injection_ledger_) {
    harness::InjectionLedger& ledger = *injection_ledger_;
    const InjectionSink sink{[&](const InjectionDatagram& d) { ledger.authentic(d.record, d.seq); },
                             [&](size_t n) { ledger.rejected(n); }};
    if (injection_receiver_) injection_receiver_->drain(sink);
    if (injection_relays_) injection_relays_->drain_injections(sink);
  }
  if (final) {
    event_tail_.read_rest(observe);
  } else {
    for (const auto& line : event_tail_.read_lines()) observe(line);
  }
}

void AttemptObservation::open_injection_channel(LaunchContext& ctx, AgentHub* agents) {
  if (agents != nullptr) {  // each node's agent gives its ranks a channel (injection_env says when)
    injection_relays_ = agents;
    injection_ledger_ = std::make_unique<harness::InjectionLedger>(history_, in_.ctx.attempt);
    return;
  }
  try {
    injection_receiver_ = std::make_unique<InjectionReceiver>();
  } catch (const std::exception& e) {
    harness::note_unauthenticated_injections(history_, in_.ctx.attempt, clock_.now().wall_ns, e.what());
    return;
  }
  injection_ledger_ = std::make_unique<harness::InjectionLedger>(history_, in_.ctx.attempt);
  if (job_has_injector(*ctx.scenario)) ctx.inject_channel_env = injection_receiver_->env();
}

void AttemptObservation::record_own_injection(int rank, nlohmann::json fields, EventTime at) {
  if (injection_ledger_) {
    const uint64_t seq = ++own_injection_seq_;
    fields[kRecordSeqField] = seq;
    injection_ledger_->authentic(event_line("harness", host_, rank, ev::kInject, fields, at).dump(), seq);
  }
  events_.write_for_rank(rank, ev::kInject, fields, at);
}

void AttemptObservation::settle_injections() {
  if (injection_ledger_) {
    follow_events(true);  // the last records and lines
    injection_ledger_->settle();
  }
  // An events file cut or replaced under the harness may have lost any record, not only injections.
  if (const std::string& how = event_tail_.tampered(); !how.empty()) {
    history_.records_lost.push_back("the events file " + in_.ctx.events_path + " " + how);
  }
}

// `ncclfi abort` writes its control event after disarming every fault, which takes longer than the
// teardown when the ranks are gone (each dead FIFO waits out its timeout). The record of the run (the
// drill report's abort row) must hold it.
void AttemptObservation::wait_for_abort_record() {
  const auto faults = static_cast<int64_t>(in_.ctx.scenario->plan.faults.size());
  const int64_t end = clock_.now().mono_ns + (faults * 500 + 3000) * 1'000'000;
  while (!abort_recorded_ && clock_.now().mono_ns < end) {
    follow_events(false);
    sleep_ns(kAttemptPollNs);
  }
}

// Once, when three quarters of the deadline passed with ranks still running (a suspected hang), ask
// NCCL's RAS port who is missing. Runs beside the loop: it may block seconds.
void AttemptObservation::probe_ras(int64_t now, int64_t start_ns, int64_t deadline_ns) {
  if (!in_.ctx.scenario->probe_ras) return;
  if (!ras_started_ && now >= start_ns + (deadline_ns - start_ns) * 3 / 4) {
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

void AttemptObservation::finish_ras_probe(bool wait) {
  if (!ras_.valid()) return;
  if (!wait && ras_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  harness::record_ras_probe(history_, ras_.get(), ras_ts_, in_.ctx.attempt);
}

void AttemptObservation::report_progress(int64_t now, int64_t start_ns, const char* phase,
                                         const JobProcesses& procs) {
  if (!in_.progress || now < next_progress_ns_) return;
  next_progress_ns_ = now + 200'000'000;
  harness::ProgressState st = in_.progress_base;
  st.attempt = in_.ctx.attempt;
  st.ranks_total = in_.ctx.scenario->workload.ranks;
  const bool one_launcher = procs.all().size() == 1 && procs.all()[0].rank() < 0;
  st.ranks_running = one_launcher ? (procs.alive() ? st.ranks_total : 0) : procs.alive();
  st.elapsed_s = static_cast<double>(now - start_ns) / 1e9;
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

// Lines longer than the classifiers read were classified on their head only: the timeline says so.
void AttemptObservation::report_truncated_lines(const JobProcesses& procs) {
  for (const auto& p : procs.all()) {
    if (p.output.truncated_lines() == 0) continue;
    events_.write_for_rank(p.rank(), "output_truncated",
                           {{"attempt", in_.ctx.attempt},
                            {"lines", p.output.truncated_lines()},
                            {"kept_bytes", harness::kMaxLineBytes}});
  }
}

// The harness's lines and the ranks' output and events all land in the run directory. A line the
// harness could not write, or a file system left without room (where a rank's failed write leaves no
// trace the harness could read), means the records may have holes: the run cannot pass.
void AttemptObservation::check_records_written() {
  auto note = [&](const std::string& why) {
    auto& lost = history_.records_lost;
    if (std::find(lost.begin(), lost.end(), why) == lost.end()) lost.push_back(why);
  };
  if (events_.lost() > 0)
    note("the harness could not write " + std::to_string(events_.lost()) + " event line(s) to " +
         in_.ctx.events_path);
  // ncclfi's own workloads write `done` before every normal exit: one that exited 0 without it lost its
  // last lines, even when the file system has room again by now.
  if (!in_.ctx.scenario->workload.builtin.empty()) {
    for (const auto& why : harness::missing_done_lines(history_, in_.ctx.attempt)) note(why);
  }
  struct statvfs fs {};
  if (::statvfs(in_.ctx.run_dir.c_str(), &fs) == 0) {
    const auto free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (free_bytes < kMinFreeBytes)
      note("the file system of " + in_.ctx.run_dir + " is full (" + std::to_string(free_bytes) +
           " bytes free): rank output and events may be missing");
  }
}

}  // namespace ncclfi::cli
