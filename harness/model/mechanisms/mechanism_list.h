// The list of detection mechanisms, one line per file of this folder, in the order their output lines
// are tried. An explicit list, as the fault kinds and launchers have: ncclfi_model is a static library,
// and the linker would drop a file that registered itself from a static initialiser.
#pragma once

#include "mechanism_spec.h"

#define NCCLFI_MECHANISMS(X)    \
  X(kGpuFaultMechanism)         \
  X(kTorchWatchdogMechanism)    \
  X(kTorchHeartbeatMechanism)   \
  X(kAsyncErrorMechanism)       \
  X(kApiErrorMechanism)         \
  X(kNcclTestsTimeoutMechanism) \
  X(kVerificationMechanism)     \
  X(kLauncherTeardownMechanism) \
  X(kWorkloadWatchdogMechanism) \
  X(kNanCheckMechanism)         \
  X(kBootstrapMechanism)        \
  X(kPeerExitMechanism)         \
  X(kRasMechanism)              \
  X(kHarnessDeadlineMechanism)

namespace ncclfi::harness {
#define NCCLFI_DECLARE_MECHANISM(spec) extern const MechanismSpec spec;
NCCLFI_MECHANISMS(NCCLFI_DECLARE_MECHANISM)
#undef NCCLFI_DECLARE_MECHANISM
}  // namespace ncclfi::harness
