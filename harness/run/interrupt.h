// SIGINT/SIGTERM/SIGHUP to ncclfi: remembered in a flag that the run loops poll, so an interrupted
// run tears its ranks down (SIGTERM, grace, SIGKILL), writes a partial report and exits.
#pragma once

namespace ncclfi::cli {

void install_interrupt_handlers();
// True after SIGINT/SIGTERM/SIGHUP or an abort request (`ncclfi abort`, drill_abort.h).
bool interrupted();
int interrupt_signal();  // the signal received, 0 if none
// An abort request was seen: from then on interrupted() is true (the run stops like an interrupt).
void note_abort_request();
bool abort_requested();

}  // namespace ncclfi::cli
