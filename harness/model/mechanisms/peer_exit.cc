// A rank ended abnormally because a peer had died first (exit_observer.cc decides from the exit order).
#include "mechanism_spec.h"

namespace ncclfi::harness {

extern const MechanismSpec kPeerExitMechanism{
    .name = "peer_exit",
    .noticed_by = "a rank ended abnormally because a peer had died first",
    .source = "exit statuses, as the harness saw them",
    .doc = "outcomes.md#from-exit-statuses-exit_observercc",
};

}  // namespace ncclfi::harness
