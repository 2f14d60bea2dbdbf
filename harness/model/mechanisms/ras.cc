// NCCL's RAS report named missing or lagging ranks, or a problem section (ras_probe.cc asks for it).
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kRasMechanism{
    .name = "ras",
    .noticed_by =
        "NCCL's RAS report named missing or lagging ranks, or listed a problem section (`INCOMPLETE`, "
        "`DEAD`, "
        "`ERROR`, `MISMATCH`, `TIMEOUT`)",
    .source = "NCCL's RAS port",
    .events = "the harness's `ras_report`",
    .doc = "failure-signatures.md#13-ras",
};

}  // namespace ncclfi::harness
