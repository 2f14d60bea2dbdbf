// The node agents' environment variables, which the launchers set and the agents read.
#pragma once

namespace ncclfi::cli {

// The node agents' variables (docs/multihost.md): in the environment of the process that starts the
// agents, never on a command line, and never the secret to the ranks.
inline constexpr const char* kAgentAddrVar = "NCCLFI_AGENT_ADDR";      // host:port the agent dials
inline constexpr const char* kAgentSecretVar = "NCCLFI_AGENT_SECRET";  // hex, drawn per drill
inline constexpr const char* kAgentSpoolVar = "NCCLFI_AGENT_SPOOL";    // node-local: events, FIFOs

}  // namespace ncclfi::cli
