// Nobody noticed: the harness's deadline ended the attempt. A "detection" only so that a hang has a time.
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kHarnessDeadlineMechanism{
    .name = "harness_deadline",
    .noticed_by = "nobody: the harness's deadline ended the attempt",
    .source = "the harness",
    .events = "the harness's `deadline`",
    .doc = "outcomes.md#the-seven-outcomes",
};

}  // namespace ncclfi::harness
