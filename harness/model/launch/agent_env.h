// The node agents' environment variables, which the launchers set and the agents read.
#pragma once

namespace ncclfi::cli {

// The node agents' variables (docs/multihost.md): in the environment of the process that starts the
// agents, never on a command line, and never the secret to the ranks.
inline constexpr const char* kAgentAddrVar = "NCCLFI_AGENT_ADDR";      // host:port the agent dials
inline constexpr const char* kAgentSecretVar = "NCCLFI_AGENT_SECRET";  // hex, drawn per drill
inline constexpr const char* kAgentSpoolVar = "NCCLFI_AGENT_SPOOL";    // node-local: events, FIFOs
// For the ranks, when the job has an injector: "1" tells each rank's `ncclfi agent --exec` to hand its
// program the injection channel its node's agent opened (harness/agents/injection_relay.h). No secret:
// it travels with the other injection variables.
inline constexpr const char* kInjectFromAgentVar = "NCCLFI_INJECT_FROM_AGENT";

}  // namespace ncclfi::cli
