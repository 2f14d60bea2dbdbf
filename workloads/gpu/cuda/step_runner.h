// The driver of ncclfi-workload (nccl-tests' shape): enqueues each step (fill, op, verify) on one
// stream with a bounded number in flight, and runs one poller thread that retires completed steps in
// order (verification counts, digest, op events, the per-case bandwidth line) and, as the watchdog,
// aborts the communicator when the oldest unfinished work makes no progress for --timeout-s or when
// ncclCommGetAsyncError reports an error.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint.h"
#include "device_kernels.h"
#include "ncclfi/event_log.h"
#include "workload_args.h"

namespace ncclfi::workload {

// The watchdog on its own: what is being waited for, since when, and the abort-and-exit path. It also
// covers communicator creation (op "comm_init"), before the step runner exists.
class Watchdog {
 public:
  Watchdog(const WorkloadArgs& args, const EventLog& log, int rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void set_comm(ncclComm_t comm) { comm_.store(comm); }
  // A host call that may block (an NCCL call): watched from now until end_host_call().
  void begin_host_call(const char* op, int64_t seq);
  void end_host_call();
  // The oldest enqueued, unfinished step (the poller sets it; seq -1: none).
  void set_oldest_pending(const char* op, int64_t seq);
  // One watchdog check; returns only when all is well (else the process exits 3 or 5).
  void check();
  // Aborts the communicator (bounded by --abort-wait-s), writes the abort and exit events, exits.
  [[noreturn]] void abort_and_exit(int code, const std::string& reason);
  // Whether abort_and_exit has begun: the steps still on the stream end as the abort leaves them, so their
  // results are no data to check (a job that checks its results never checks an aborted collective's).
  bool aborting() const { return aborting_.load(); }
  // --recover: a timeout or an async error is noted (failed(), failure()) instead of ending the process,
  // so the step runner can stop and the rank can shrink the communicator to the survivors.
  void set_recover(bool recover) { recover_ = recover; }
  bool failed() const { return failed_.load(); }
  std::string failure();
  void clear_failure();

 private:
  struct Watched {
    const char* op = nullptr;
    int64_t seq = -1;
    bool host = false;
  };
  const WorkloadArgs& args_;
  const EventLog& log_;
  int rank_;
  std::atomic<ncclComm_t> comm_{nullptr};
  std::atomic<bool> aborting_{false};
  std::mutex mutex_;
  Watched host_call_;
  Watched pending_;
  Watched watched_;
  int64_t watched_since_ns_ = 0;
  int64_t last_async_poll_ns_ = 0;
  std::thread thread_;  // polls while no step runner does (communicator creation)
  std::atomic<bool> standalone_{false};
  std::atomic<bool> stop_{false};
  bool recover_ = false;
  std::atomic<bool> failed_{false};
  std::string failure_;  // under mutex_

  void note_failure(int code, const std::string& reason);

 public:
  // Runs check() on a thread of its own until stop_standalone() (used around communicator creation).
  void start_standalone();
  void stop_standalone();
};

struct RunOutcome {
  int exit_code = 0;
  // --recover: a step failed; the runner stopped with every step before next_step retired.
  bool needs_recovery = false;
  uint64_t next_step = 0;
  uint64_t steps_run = 0;
  uint64_t digest = 0;
  uint64_t wrong_total = 0;
};

class StepRunner {
 public:
  StepRunner(const WorkloadArgs& args, const RunPlan& plan, ncclComm_t comm, int rank, int nranks,
             const EventLog& log, Watchdog& watchdog);
  ~StepRunner();
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // Runs steps [first_step, total). `checkpoint` (may be null) already holds the entry for first_step.
  RunOutcome run(uint64_t first_step, uint64_t digest, uint64_t wrong_total, Checkpoint* checkpoint);

  // --recover: the digest and wrong count after the steps before `step` (the resume point the survivors
  // agreed on, at most a window behind this rank's own progress). False when no longer known.
  bool state_before(uint64_t step, uint64_t& digest, uint64_t& wrong_total) const;
  // --recover: the runner goes on with the shrunk communicator. The failed steps still on the stream
  // are dropped (revoke or NCCL_SHRINK_ABORT ended their kernels); the next run() writes `resumed` when
  // its first step completes. Throws when the stream does not drain within `drain_s`.
  void rebind(ncclComm_t comm, int rank, int nranks, double drain_s);

 private:
  struct Slot {
    cudaEvent_t start = nullptr, op_end = nullptr, done = nullptr;
    VerifyCounters* device_counters = nullptr;
    VerifyCounters* host_counters = nullptr;  // pinned
    uint64_t seq = 0;
    OpLayout layout;
  };
  struct CaseTiming {
    double total_ms = 0;
    uint64_t timed = 0;
    uint64_t wrong = 0;
  };

  void allocate_buffers();
  void poll_loop();
  void stop_for_recovery(RunOutcome& outcome);
  void retire(Slot& slot);
  void print_case_line(size_t case_index);
  int enqueue_step(uint64_t seq, Slot& slot);
  void drain();

  const WorkloadArgs& args_;
  const RunPlan& plan_;
  ncclComm_t comm_;
  int rank_, nranks_;
  const EventLog& log_;
  Watchdog& watchdog_;
  cudaStream_t stream_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  uint64_t send_bytes_ = 0, recv_bytes_ = 0;
  std::vector<Slot> slots_;

  std::mutex mutex_;
  std::condition_variable retired_cv_;
  std::deque<Slot*> pending_;
  std::vector<Slot*> free_;
  std::atomic<bool> finish_{false};
  std::atomic<bool> halt_{false};  // --recover: the poller stops at once, leaving pending steps alone
  // --recover: (step, digest, wrong_total) after each retired step, the newest few (state_before)
  struct Retired {
    uint64_t seq, digest, wrong_total;
  };
  std::deque<Retired> retired_;
  uint64_t run_first_step_ = 0, run_digest_ = 0, run_wrong_ = 0;
  uint64_t next_unretired_ = 0;
  bool announce_resume_ = false;
  std::atomic<int> stop_code_{0};
  uint64_t digest_ = 0;
  uint64_t wrong_total_ = 0;
  std::vector<CaseTiming> timings_;
  std::thread poller_;
};

}  // namespace ncclfi::workload
