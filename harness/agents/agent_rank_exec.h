// `ncclfi agent --exec -- PROGRAM ARGS`: how a rank of a job with node agents records its own fate. The
// launcher (orted, slurmstepd) starts this in the rank's place; it starts PROGRAM as its child, passes
// on every signal the launcher or a proc fault sends, and when PROGRAM ends writes a `rank_exit` event
// (exit code or signal) to the rank's event log, which the node's agent streams to the harness; then it
// ends the same way. An agent is not the parent of the ranks, and only a parent learns how a process ended.
#pragma once

#include <string>
#include <vector>

namespace ncclfi::cli {

// Runs `argv` as described; returns the exit status to end with (after re-raising a fatal signal).
int exec_rank_and_report(const std::vector<std::string>& argv);

}  // namespace ncclfi::cli
