// The per-process injector: loads the plan named by NCCLFI_PLAN, keeps the faults of the asked layer
// that target this process, enables their points in libfiu, opens the event log and, when the plan
// asks, libfiu's remote-control FIFO in the run directory. Front ends call Injector::instance() once
// (it is created on first use) and then FaultPoint::check() per call.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "ncclfi/event_log.h"
#include "ncclfi/params.h"
#include "ncclfi/plan.h"
#include "ncclfi/point.h"

namespace ncclfi {

class Injector {
 public:
  // Builds an injector for `source` ("preload", "net", ...) holding the faults of `layer` from
  // params.plan_path. With no plan it is inert (no faults, gate closed). A plan that fails to parse is
  // reported once on stderr and leaves the injector inert: a fault plan must never break the job.
  Injector(const Params& params, Layer layer, std::string source);
  ~Injector();

  // Attaches the faults whose point is one of `points` and opens the gate if any. Called once per
  // front end with its compiled-in points. Faults that name a point no front end owns are ignored.
  void install(std::span<FaultPoint* const> points);

  // Records an injection in the event log (and on stderr with NCCLFI_LOG=1).
  void record_injection(const ArmedFault& fault, const char* point, const CallSite& site,
                        const nlohmann::json& extra = nlohmann::json::object()) const;

  const EventLog& events() const { return events_; }
  EventLog& events() { return events_; }
  const Params& params() const { return params_; }
  bool inert() const { return armed_.empty(); }
  std::string load_error() const { return load_error_; }
  const std::vector<std::unique_ptr<ArmedFault>>& faults() const { return armed_; }
  // Writes `ncclfi[rank pid] msg` to stderr when NCCLFI_LOG=1.
  void log(const std::string& msg) const;

  // The process-wide injector of a front end, created from Params::get() on first call.
  static Injector& instance(Layer layer, const char* source);

 private:
  Params params_;
  Layer layer_;
  std::string source_;
  EventLog events_;
  std::string load_error_;
  FaultPlan plan_;
  std::vector<std::unique_ptr<ArmedFault>> armed_;
  std::vector<std::unique_ptr<std::vector<ArmedFault*>>> point_lists_;
};

// Initialises libfiu once per process (fiu_init must precede any enable).
void ensure_fiu_initialised();

// Opens libfiu's remote-control FIFO `<run_dir>/ncclfi-<source>-<pid>.in/.out` (one per front end:
// the preload and the shim each carry their own static libfiu). Returns false on failure.
bool open_control_fifo(const std::string& run_dir, const std::string& source);

// Runtime control from the harness: writes `enable name=ncclfi/fault/<id>` (arm) or `disable ...`
// (disarm) to every live process's FIFO in `run_dir`, with a timeout per process; dead processes
// (stale FIFOs) are skipped. A FIFO is opened without following symlinks and counts only when it is a
// FIFO of the caller's user that the process its name gives holds open: anything else is refused and
// never written to. Returns the number of processes that acknowledged.
struct ControlResult {
  int acknowledged = 0;
  int skipped_dead = 0;
  int timed_out = 0;
  int refused = 0;  // a symlink, not a FIFO, not ours, or not held by the process its name gives
};
ControlResult send_control(const std::string& run_dir, const std::string& fault_id, bool arm,
                           int timeout_ms = 2000);

// Removes the control FIFOs in `run_dir` whose process is gone. libfiu removes its FIFOs only at a
// normal exit; a rank killed at teardown leaves them, so the harness calls this after every attempt.
// Returns the number of FIFOs removed.
int remove_dead_control_fifos(const std::string& run_dir);

}  // namespace ncclfi
