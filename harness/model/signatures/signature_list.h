// The signature families, one line per file of this folder, in the order their lines are tried (after
// every mechanism's own lines). An explicit list for the same reason as mechanism_list.h: a static
// library drops a file that only registers itself. The catch-all NCCL WARN family stays last.
#pragma once

#include "signature_family.h"

#define NCCLFI_SIGNATURE_FAMILIES(X) \
  X(kNcclIbFamily)                   \
  X(kNcclSocketFamily)               \
  X(kAwsOfiFamily)                   \
  X(kNcclRasFamily)                  \
  X(kLaunchersFamily)                \
  X(kPytorchTeardownFamily)          \
  X(kCudaRuntimeFamily)              \
  X(kKernelFamily)                   \
  X(kOperatorToolsFamily)            \
  X(kNcclWarnFamily)

namespace ncclfi::harness {
#define NCCLFI_DECLARE_FAMILY(family) extern const SignatureFamily family;
NCCLFI_SIGNATURE_FAMILIES(NCCLFI_DECLARE_FAMILY)
#undef NCCLFI_DECLARE_FAMILY
}  // namespace ncclfi::harness
