// SIGINT/SIGTERM/SIGHUP to ncclfi: remembered in a flag that the run loops poll, so an interrupted
// run tears its ranks down (SIGTERM, grace, SIGKILL), writes a partial report and exits.
#pragma once

namespace ncclfi::cli {

void install_interrupt_handlers();
bool interrupted();
int interrupt_signal();  // the signal received, 0 if none

}  // namespace ncclfi::cli
