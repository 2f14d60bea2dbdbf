// The name ncclfi-workload puts before its own lines: under NCCLFI_QUIET (labs, drills) a plain
// "workload", so that nothing a rank prints names ncclfi (ncclfi-cpu-ring does the same).
#pragma once

#include "ncclfi/params.h"

namespace ncclfi::workload {

inline const char* program_tag() {
  return Params::get().quiet ? "workload" : "ncclfi-workload";
}

}  // namespace ncclfi::workload
