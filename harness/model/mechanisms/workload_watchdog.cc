// The workload's own watchdog timed out an operation (ncclfi's workloads, --watchdog).
#include "mechanism_spec.h"
#include "ncclfi/workload_contract.h"

namespace ncclfi::harness {

extern const MechanismSpec kWorkloadWatchdogMechanism{
    .name = "workload_watchdog",
    .noticed_by = "the workload's own watchdog timed out an operation",
    .source = "ncclfi's workloads",
    .events = "`watchdog_fired`",
    .exit_code = kExitWatchdog,
    // The lines ncclfi's own workloads print when their watchdog fires, matched without the program's
    // name (quiet mode drops it).
    .lines =
        {{"workload.cpu_ring_watchdog", R"(watchdog: allreduce seq \d+ did not complete within)",
          "did not complete within",
          "ncclfi-cpu-ring's `watchdog: allreduce seq N did not complete within T s (waited W s; ring step S "
          "of "
          "M waits to receive from rank P)`",
          "ncclfi-cpu-ring: watchdog: allreduce seq 188 did not complete within 2.000000 s (waited 2.003 s; "
          "ring "
          "step 2 of 6 waits to receive from rank 0)",
          SignatureRole::kDetection, "",
          "watchdog: allreduce seq %d did not complete within %f s (waited %.3f s; ring step %d of %d waits "
          "%s)",
          "ncclfi 0.x", "workloads/cpu_ring/ring_job.cc (watch)", "",
          "an all-reduce made no progress for the workload's timeout: a peer or the network stopped",
          "host_hang,gpu_hang,dead_rank,congestion", "every rank that waits"},
         {"workload.gpu_watchdog", R"(watchdog: \S+ \(seq \d+\) made no progress for)",
          "made no progress for", "ncclfi-workload's `watchdog: OP (seq N) made no progress for M ms`",
          "ncclfi-workload: rank 1: watchdog: allreduce (seq 42) made no progress for 5003 ms (timeout 5 s, "
          "waiting in the GPU stream): aborting the communicator",
          SignatureRole::kDetection, "",
          "ncclfi-workload: rank %d: watchdog: %s (seq %lld) made no progress for %.0f ms (timeout %.3g s, "
          "waiting in %s): aborting the communicator",
          "ncclfi 0.x", "workloads/gpu/cuda/step_runner.cc (StepRunner::watch)", "",
          "a collective made no progress for the workload's timeout: a peer, the GPU or the network stopped",
          "host_hang,gpu_hang,dead_rank,congestion", "every rank that waits"}},
    .doc = "failure-signatures.md#5-ncclfis-own-workloads",
};

}  // namespace ncclfi::harness
