// Command line of ncclfi-workload and the run plan it describes (the cases and their steps).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dtype.h"
#include "expected_values.h"

namespace ncclfi::workload {

// "8", "1M", "1GiB", "64k" -> bytes (K/M/G/T are powers of 1024). Throws UsageError on garbage,
// zero, or overflow.
uint64_t parse_byte_size(const std::string& text);
std::string format_byte_size(uint64_t bytes);

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WorkloadArgs {
  std::vector<OpKind> ops{OpKind::kAllReduce};
  std::vector<DType> dtypes{DType::kFloat};
  std::vector<uint64_t> sizes{1u << 20};
  uint64_t iters = 20;
  uint64_t warmup = 5;
  bool check = false;        // a mismatch stops the job with exit 4 (else: result_mismatch event only)
  bool nonblocking = false;  // ncclConfig_t.blocking = 0
  bool watchdog = true;
  double timeout_s = 30.0;        // watchdog: no progress for this long -> abort, exit 3
  double poll_ms = 1.0;           // watchdog / completion polling period
  double abort_wait_s = 0.5;      // how long the watchdog waits for ncclCommAbort before exiting anyway
  double rdzv_timeout_s = 120.0;  // rendezvous (unique id exchange)
  std::string checkpoint_dir;     // empty: no checkpoints
  uint64_t checkpoint_every = 100;
  uint64_t op_events_every = 1;  // write an `op` event every N steps (0: none)
  uint64_t window = 4;           // steps in flight at most
  double step_delay_ms = 0;      // host sleep between steps (keeps a long run killable mid-way)
  int device = -1;               // -1: LOCAL_RANK modulo the visible devices
  bool quiet = false;
  // "shrink": on a peer's failure, revoke the communicator (where NCCL has ncclCommRevoke), agree on the
  // dead ranks through the rendezvous, shrink to the survivors (ncclCommShrink) and carry on. "" : off.
  std::string recover;
  double recover_wait_s = 10.0;  // rank 0 waits this long for the survivors to report
};

// Parses argv. Returns true with `args` filled; returns false when --help was printed (exit 0).
// Throws UsageError with a one-line message for anything wrong (exit 64).
bool parse_workload_args(int argc, const char* const* argv, WorkloadArgs& args, std::string& help_text);

// One (op, dtype, size) combination; the run is the cases in order, each `warmup + iters` steps.
struct WorkloadCase {
  OpKind op;
  DType dtype;
  uint64_t bytes;
};

struct RunPlan {
  std::vector<WorkloadCase> cases;
  uint64_t steps_per_case = 0;
  uint64_t total_steps() const { return steps_per_case * cases.size(); }
  // Which case a global step belongs to, and its index within the case (< warmup: a warm-up step).
  size_t case_of(uint64_t step) const { return static_cast<size_t>(step / steps_per_case); }
  uint64_t index_in_case(uint64_t step) const { return step % steps_per_case; }
  // A hash of everything that decides the steps (and the world size): checkpoints of another plan are
  // refused.
  uint64_t fingerprint(int world_size) const;
  // The digest (checkpoint.h, digest_step) of steps [0, upto) on `rank` when every element verifies.
  uint64_t expected_digest(int rank, int nranks, uint64_t upto) const;
  // The digest after steps [from, upto) on `rank` of `nranks`, continuing from `digest` (after a
  // shrink the steps from the resume point run on the smaller communicator).
  uint64_t expected_digest_from(uint64_t digest, int rank, int nranks, uint64_t from, uint64_t upto) const;
};

// Orders cases op-major, then dtype, then size (the nccl-tests sweep order).
RunPlan make_run_plan(const WorkloadArgs& args);

}  // namespace ncclfi::workload
