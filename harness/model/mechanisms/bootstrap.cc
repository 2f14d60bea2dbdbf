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
    // The workloads' own rendezvous (a TCP store, as torchrun's) lost a peer before the job began: the
    // rank that went away died or never came. Matched without the program's name (quiet mode drops it).
    .lines =
        {{"workload.rendezvous_failed",
          R"(rendezvous: (?:rendezvous: )?(?:a peer went away while sending|a peer closed its connection|timed out while))",
          "rendezvous: ", "ncclfi's workloads' `rendezvous: a peer went away while sending`",
          "cpu-ring: rendezvous: rendezvous: a peer went away while sending", SignatureRole::kDetection, "",
          "rendezvous: a peer went away while sending", "ncclfi 0.x",
          "workloads/common/rendezvous.cc (send_all, recv_all, wait_fd)", "",
          "the job's rendezvous lost a peer before the job began: that rank died or never came",
          "dead_rank,bootstrap", "every rank that waited for it"}},
    .doc = "failure-signatures.md#5-ncclfis-own-workloads",
};

}  // namespace ncclfi::harness
