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
    .lines = {{"workload.loss_nan", R"(\bloss (nan|-?inf)\b)", "loss ", "a training loop's `step N loss nan`",
               "[rank 1] step 14 loss nan step_time 1.2 ms", SignatureRole::kDetection, "",
               "[rank %d] step %d loss %.6f step_time %.1f ms", "ncclfi 0.x",
               "workloads/cpu_ring/ring_modes.cc (the training mode)", "",
               "the loss became NaN or infinite: wrong data reached the gradients", "degraded_link",
               "the failing rank (the first to see it)"}},
    .doc = "failure-signatures.md#5-ncclfis-own-workloads",
};

}  // namespace ncclfi::harness
