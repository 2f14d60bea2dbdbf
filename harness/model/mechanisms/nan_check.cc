// The training loop saw a NaN or infinite loss (ddp_train.py).
#include "mechanism_spec.h"
#include "ncclfi/workload_contract.h"

namespace ncclfi::harness {

extern const MechanismSpec kNanCheckMechanism{
    .name = "nan_check",
    .noticed_by = "the training loop saw a NaN or infinite loss",
    .source = "ncclfi's workloads",
    .events = "`nan_detected`",
    .exit_code = kExitNanLoss,
    .doc = "failure-signatures.md#5-ncclfis-own-workloads",
};

}  // namespace ncclfi::harness
