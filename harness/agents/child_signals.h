// The signal state every process the harness starts begins with: every disposition at its default and
// nothing blocked, whoever starts it (the attempt's ranks and launchers, `agent --exec`'s rank, the
// programs an agent or the orphan guard runs). ncclfi ignores SIGPIPE (orphan_guard.cc), the guard
// ignores SIGINT, SIGTERM and SIGHUP, and exec keeps an ignored signal ignored and a blocked one
// blocked: without this a rank would write to a closed pipe and get EPIPE where, outside ncclfi, it
// would die, and a job would not behave as it does in production.
#pragma once

#include <spawn.h>

namespace ncclfi::cli {

// In a child between fork and exec (async-signal-safe calls only).
void reset_signals_in_child();
// For posix_spawn: the same state, on `attr` (POSIX_SPAWN_SETSIGDEF for every signal, an empty
// POSIX_SPAWN_SETSIGMASK).
void reset_signals_on_spawn(posix_spawnattr_t* attr);

}  // namespace ncclfi::cli
