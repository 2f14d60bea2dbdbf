// The harness's end of the node agents (agent_node.h, docs/multihost.md): listens for them, checks
// each one's proof of the drill's secret (and proves it in turn), appends the event lines they stream to
// the run's events.jsonl (where the attempt loop reads them, as if the ranks had written there), keeps
// the injection records they relay for the attempt's ledger, keeps which ranks run on which host, and
// sends them proc faults, arm/disarm and teardown.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <memory>

#include "agent_protocol.h"
#include "injection_relay.h"
#include "ncclfi/event_log.h"
#include "rank_output_tail.h"

namespace ncclfi::cli {

class AgentHub {
 public:
  // Listens on every address, on a port the kernel picks. `events_path`: the run's events.jsonl.
  AgentHub(std::string secret, std::string events_path);
  AgentHub(const AgentHub&) = delete;
  ~AgentHub();

  // host:port the agents dial: NCCLFI_AGENT_HOST when set, else this host's name.
  std::string address() const;
  const std::string& secret() const { return secret_; }
  // Accepts connections, moves each handshake on by what its peer sent (never waiting for one: a
  // silent stranger costs the caller nothing), and reads what the agents sent. Cheap when nothing
  // happened; waits at most `wait_ms` for something to arrive.
  void poll(int wait_ms = 0);
  // Waits (polling) until `count` agents are in or `timeout_ms` passed; returns how many are in.
  size_t wait_for_agents(size_t count, int timeout_ms);
  size_t agents() const { return agents_.size(); }
  // Connections refused for a wrong or missing proof (each also written to the events as agent_refused).
  int refused() const { return refused_; }
  // Messages of welcomed agents dropped because their seal did not hold (a line injected into the
  // connection, replayed or out of order: agent_seal.h); the first of each agent are also written to the
  // events as agent_message_refused.
  size_t refused_messages() const;

  // Sends a proc fault's signal to `rank` through every agent; returns how many processes were
  // signalled (kSignalRefused: none, and the rank's agent refused: its host is outside the drill's
  // allow-list), and in `sent` the earliest time an agent sent it.
  int signal_rank(int rank, int sig, EventTime* sent);
  // Arms or disarms a fault in the ranks of every node; returns how many processes acknowledged.
  int control(const std::string& fault_id, bool arm);
  // Installs `qdisc` (tc's words after `root`) on `host`'s link (interface `device`, or the agent's
  // choice when empty) through that host's agent; returns 1 when it did, 0 when not.
  int link(const std::string& host, const std::vector<std::string>& qdisc, const std::string& device);
  // host -> the link faults its agent's kernel can do ("rate", "delay", "loss", "corrupt").
  std::map<std::string, std::set<std::string>> link_capabilities() const;
  // Every agent tears its node's ranks down (SIGCONT, SIGTERM, grace, SIGKILL); returns how many.
  int teardown();
  // Tells every agent to quit (each tears down what is left, sends its last events) and waits for
  // their goodbyes up to `timeout_ms`.
  void quit(int timeout_ms);
  // Makes `ncclfi arm/disarm RUN_DIR ID` reach the agents: a control FIFO pair in the run directory,
  // named like a rank's (ncclfi-agents-<pid>.in/.out), whose commands the hub relays to every agent and
  // answers once some rank acknowledged. Served by poll(); removed by the destructor.
  void relay_control_from(const std::string& run_dir);
  // Keeps the ranks' output the agents stream: lines in `log_dir` (the attempt's), final tails in
  // memory (rank_output_tail.h). Without it, output messages are ignored.
  void keep_output(const std::string& log_dir, int world_size);
  // rank -> what arrived of its output (empty before keep_output).
  std::map<int, HarnessOutputStore::Rank> rank_output() const {
    return output_ ? output_->ranks() : std::map<int, HarnessOutputStore::Rank>{};
  }
  // Hands the injection records the agents relayed since the last call (injection_relay.h) to `sink`,
  // with the count of those their agents, or this hub, refused.
  void drain_injections(const InjectionSink& sink);
  // Relayed records kept until drained: more are counted as refused (their lines will stand alone).
  static constexpr size_t kMaxRelayedRecords = 65536;
  std::set<int> running_ranks() const;
  // rank -> host, as the agents reported them.
  std::map<int, std::string> rank_hosts() const;

 private:
  struct Agent {
    LineChannel channel;
    std::string host;
    std::set<int> ranks;
    std::set<std::string> link_faults;
    bool bye = false;
    int seal_failures = 0;  // its messages dropped for their seal
  };
  // A connection still proving the secret (agent_protocol.h's handshake), moved on by poll().
  struct Handshake {
    LineChannel channel;
    int64_t until_ns = 0;   // this half of the handshake ends then (kAgentHandshakeMs each)
    std::string challenge;  // the hub's, sent once the hello came; empty before
    std::string host;       // the hello's
    nlohmann::json hello;
  };
  void accept_new();
  // Moves every pending handshake on; false for one that ended (welcomed or refused).
  bool advance(Handshake& h, int64_t now_ns);
  void welcome(Handshake& h);
  void refuse(Handshake& h, const std::string& why);
  // Waits up to `wait_ms` for a new connection or a pending handshake's next line.
  void wait_for_handshakes(int wait_ms);
  void take(Agent& agent, const nlohmann::json& message);
  void record_seal_failures(Agent& agent);
  // Sends `message` (with a fresh id) to every agent and collects each one's reply (up to 3 s).
  std::vector<nlohmann::json> request(nlohmann::json message, const std::string& only_host = "");
  void append_event_line(const std::string& line);
  void serve_control_relay();

  std::string secret_;
  std::string events_path_;
  int listen_fd_ = -1;
  int events_fd_ = -1;
  int port_ = 0;
  int refused_ = 0;
  std::string relay_prefix_;  // run_dir/ncclfi-agents-<pid>
  int relay_in_fd_ = -1;
  bool relaying_ = false;
  int next_id_ = 1;
  std::vector<Handshake> handshakes_;
  std::vector<Agent> agents_;
  std::vector<nlohmann::json> replies_;     // answers to requests, taken by the request that waits for them
  std::vector<InjectionDatagram> relayed_;  // injection records relayed by the agents, not yet drained
  size_t relayed_rejected_ = 0;
  EventLog log_;
  std::unique_ptr<HarnessOutputStore> output_;
};

}  // namespace ncclfi::cli
