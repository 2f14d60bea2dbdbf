// Stopping a drill at once (drill_abort.h).
#include "drill_abort.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "atomic_file.h"
#include "exit_status.h"
#include "interrupt.h"
#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"
#include "orphan_guard.h"
#include "run_control.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;

namespace {

bool alive(int pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

// A harness id names the process that drew it (orphan_guard.cc: "PID-WALLNS"): a record whose id is
// another process's (another drill's harness) is not this run's.
bool id_of_pid(const std::string& harness_id, int pid) {
  return harness_id.rfind(std::to_string(pid) + "-", 0) == 0;
}

}  // namespace

void write_harness_record(const std::string& run_dir) {
  const nlohmann::json record = {{"pid", ::getpid()},
                                 {"harness_id", OrphanGuard::harness_id()},
                                 {"host", host_name()},
                                 {"start_ticks", process_start_ticks(::getpid())}};
  const std::string path = run_dir + "/harness.json";
  harness::write_file_atomic(path, record.dump(2) + "\n");
  // Held open for as long as this harness runs: what `ncclfi abort` checks in /proc/PID/fd to know that
  // the process the record names is this run's harness (run_control.h), not one a copied or edited record
  // points at. One run at a time per harness process: the previous run's record is let go.
  static int held = -1;
  if (held >= 0) ::close(held);
  held = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

std::string abort_request_path(const std::string& run_dir) {
  return run_dir + "/abort-requested";
}

bool poll_abort_request(const std::string& run_dir) {
  if (abort_requested()) return true;
  if (::access(abort_request_path(run_dir).c_str(), F_OK) != 0) return false;
  note_abort_request();
  return true;
}

ControlResult disarm_all(const std::string& run_dir, const FaultPlan& plan, int timeout_ms) {
  ControlResult total;
  for (const Fault& f : plan.faults) {
    const ControlResult r = send_control(run_dir, f.id, /*arm=*/false, timeout_ms);
    total.acknowledged += r.acknowledged;
    total.skipped_dead += r.skipped_dead;
    total.timed_out += r.timed_out;
    total.refused += r.refused;
  }
  return total;
}

int abort_run(const std::string& run_dir, double timeout_s, std::ostream& out) {
  FaultPlan plan;
  try {
    plan = load_plan_file(run_dir + "/plan.json");
  } catch (const std::exception& e) {
    out << "ncclfi abort: " << run_dir << " is not a run directory (" << e.what() << ")\n";
    return kBadInput;
  }
  const RunControlState state = run_control_state(run_dir);
  if (state.kind == RunControlState::Kind::kGone && id_of_pid(state.harness_id, state.harness_pid)) {
    // A harness that died without a verdict may have left ranks behind: those are killed, and the
    // record, which nobody will finish, is left as it is.
    if (const int killed = signal_processes_with_harness_id(state.harness_id, SIGKILL); killed > 0) {
      out << "abort: no harness is running for " << run_dir << "; killed " << killed
          << " leftover process(es)\n";
      return kAllPassed;
    }
  }
  if (state.kind != RunControlState::Kind::kRunning) {
    out << "ncclfi abort: " << state.why << "; nothing was done\n";
    return kBadInput;
  }
  // Nothing is written or signalled before the process the record names has proved to be this run's
  // harness: a forged harness.json must not turn `abort` against another drill or an unrelated process.
  if (const std::string problem = harness_identity_problem(run_dir, state);
      !problem.empty() || !id_of_pid(state.harness_id, state.harness_pid)) {
    out << "ncclfi abort: " << run_dir << "/harness.json names pid " << state.harness_pid
        << ", which is not this run's harness ("
        << (problem.empty() ? "its harness_id " + state.harness_id + " is another process's" : problem)
        << "); nothing was done\n";
    return kBadInput;
  }
  const EventTime given = EventTime::now();
  // The request first: the harness stops launching and tears down even if disarming takes a while.
  harness::write_file_atomic(abort_request_path(run_dir),
                             nlohmann::json{{"ts_ns", given.wall_ns}, {"pid", ::getpid()}}.dump() + "\n");
  const ControlResult r = disarm_all(run_dir, plan, 500);
  EventLog(run_dir + "/events.jsonl", "control")
      .write_for_rank(-1, ev::kControl,
                      {{"action", "abort"},
                       {"fault_id", "all"},
                       {"by", "ncclfi abort"},
                       {"acknowledged", r.acknowledged},
                       {"skipped_dead", r.skipped_dead},
                       {"timed_out", r.timed_out},
                       {"refused", r.refused}},
                      given);
  out << "abort: " << plan.faults.size() << " fault(s) disarmed: " << r.acknowledged
      << " answer(s) from live ranks' control FIFOs (" << r.skipped_dead << " dead skipped, " << r.timed_out
      << " timed out" << (r.refused > 0 ? ", " + std::to_string(r.refused) + " refused" : "")
      << "); teardown requested\n";
  // The harness confirms by writing the run's verdict; if it dies meanwhile, clean up here.
  const int harness_pid = state.harness_pid;
  const std::string& harness_id = state.harness_id;
  const int64_t end = Clock::mono_ns() + static_cast<int64_t>(timeout_s * 1e9);
  while (alive(harness_pid) && !fs::exists(run_dir + "/verdict.json") && Clock::mono_ns() < end) {
    timespec ts{0, 20'000'000};
    nanosleep(&ts, nullptr);
  }
  if (fs::exists(run_dir + "/verdict.json")) {
    out << "abort: the job is torn down (" << run_dir << "/verdict.json written)\n";
    return kAllPassed;
  }
  if (!alive(harness_pid)) {
    const int killed = harness_id.empty() ? 0 : signal_processes_with_harness_id(harness_id, SIGKILL);
    out << "abort: no harness is running for " << run_dir << "; killed " << killed
        << " leftover process(es)\n";
    return kAllPassed;
  }
  out << "abort: the harness (pid " << harness_pid << ") has not confirmed the teardown within " << timeout_s
      << " s\n";
  return kSomeFailed;
}

}  // namespace ncclfi::cli
