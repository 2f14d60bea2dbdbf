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
    .doc = "failure-signatures.md#5-ncclfis-own-workloads",
};

}  // namespace ncclfi::harness
