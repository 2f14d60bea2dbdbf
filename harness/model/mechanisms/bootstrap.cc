// Rendezvous or communicator creation failed (or the rank found no GPU): the job never started talking.
#include "mechanism_spec.h"
#include "ncclfi/workload_contract.h"

namespace ncclfi::harness {

extern const MechanismSpec kBootstrapMechanism{
    .name = "bootstrap",
    .noticed_by = "rendezvous or communicator creation failed (or no GPU)",
    .source = "ncclfi's workloads",
    .events = "none of its own",
    .exit_code = kExitBootstrap,
    .doc = "failure-signatures.md#5-ncclfis-own-workloads",
};

}  // namespace ncclfi::harness
