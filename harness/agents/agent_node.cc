#include "agent_node.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <stdexcept>

#include "agent_protocol.h"
#include "child_signals.h"
#include "injection_relay.h"
#include "ncclfi/event_log.h"
#include "ncclfi/injector.h"
#include "ncclfi/params.h"
#include "output_tailer.h"
#include "proc_scan.h"
#include "rank_output_tail.h"

extern char** environ;

namespace ncclfi::cli {
namespace fs = std::filesystem;

namespace {

constexpr int kPollMs = 20;
constexpr int64_t kScanNs = 100'000'000;  // how often the ranks on this node are looked for
constexpr int kConnectTries = 50;         // 10 s: the harness listens before it starts the agents
constexpr int kControlTimeoutMs = 2000;
constexpr size_t kMaxEventLine = (64 << 10) + 1;
constexpr int64_t kWrapperExitNs = 2'000'000'000;  // a wrapper ends within ms of its rank
constexpr int kSealFailuresSaid = 8;

volatile sig_atomic_t stop_requested = 0;

// Runs a program (no shell), its output captured (the first 4 KiB); returns the exit status, or -1.
int run_program(const std::vector<std::string>& argv, std::string* output) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  reset_signals_on_spawn(&attr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string out;
  char buf[512];
  ssize_t n = 0;
  while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0)
    if (out.size() < 4096) out.append(buf, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  if (rc != 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  if (output != nullptr) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The link faults this node's kernel can do, tried on the loopback of a scratch network namespace (so
// no real link is touched): tbf ("rate") and netem ("delay", "loss", "corrupt"). Needs root and tc.
std::vector<std::string> probe_link_faults() {
  auto works = [](const std::string& qdisc) {
    return run_program(
               {"unshare", "--net", "sh", "-c", "ip link set lo up && tc qdisc add dev lo root " + qdisc},
               nullptr) == 0;
  };
  std::vector<std::string> can;
  if (works("tbf rate 1mbit burst 32kb latency 400ms")) can.push_back("rate");
  if (works("netem delay 1ms")) can.insert(can.end(), {"delay", "loss", "corrupt"});
  return can;
}

// The interface the job's traffic leaves by: the default route's, else the first routed one but lo.
std::string routed_device() {
  std::ifstream in("/proc/net/route");
  std::string line, first;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string dev, dest;
    fields >> dev >> dest;
    if (dev == "lo") continue;
    if (dest == "00000000") return dev;
    if (first.empty()) first = dev;
  }
  return first;
}

// A tc word from the harness: letters, digits, '.', '%' only (never an option or a shell word).
bool plain_word(const std::string& w) {
  return !w.empty() && w.size() < 32 && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '%';
  });
}

std::string env_or_throw(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0')
    throw std::runtime_error(std::string("ncclfi agent: ") + name + " is not set");
  return v;
}

class Agent {
 public:
  Agent(const AgentConfig& config, const FaultGate& gate)
      : config_(config),
        gate_(gate),
        host_(host_name()),
        events_(config.spool_dir + "/events.jsonl", 0, kMaxEventLine),
        refusals_(config.spool_dir + "/events.jsonl", "agent"),
        output_(config.spool_dir, Clock::mono_ns()) {}

  int run() {
    open_injection_relay();  // before the job can start: that waits for this agent's welcome
    if (!connect_and_authenticate()) {
      remove_spool();
      return 3;
    }
    int64_t next_scan = 0;
    while (true) {
      if (agent_stop_requested()) {
        agent_log_line("ncclfi agent on " + host_ + ": stopped by a signal; tearing down this node's ranks");
        finish();
        return 3;
      }
      if (!channel_.pump(kPollMs)) {
        agent_log_line("ncclfi agent on " + host_ + ": lost the harness; tearing down this node's ranks");
        teardown();
        remove_spool();
        return 3;
      }
      while (auto message = channel_.next()) {
        if (!handle(*message)) return finish();
      }
      log_seal_failures();
      relay_injections();  // an injector sends its record before it writes its line
      forward_events(false);
      output_.poll(send_, Clock::mono_ns());
      if (Clock::mono_ns() >= next_scan) {
        scan_ranks();
        next_scan = Clock::mono_ns() + kScanNs;
      }
    }
  }

 private:
  bool connect_and_authenticate() {
    int fd = -1;
    for (int i = 0; i < kConnectTries && fd < 0 && !agent_stop_requested(); ++i) {
      fd = connect_to(config_.harness_addr, 200);
      if (fd < 0) ::usleep(200'000);
    }
    if (fd < 0) {
      agent_log_line("ncclfi agent on " + host_ + ": cannot reach the harness at " + config_.harness_addr);
      return false;
    }
    channel_ = LineChannel(fd);
    const std::string mine = random_hex(16);
    channel_.send(
        {{"t", "hello"}, {"host", host_}, {"challenge", mine}, {"link_faults", probe_link_faults()}});
    const auto reply = channel_.receive(kAgentHandshakeMs);
    // The harness proves the secret first: an agent answers no challenge of a stranger.
    if (!reply || text_field(*reply, "t") != "challenge" ||
        !macs_equal(text_field(*reply, "mac"), agent_mac(config_.secret, "harness", mine, host_))) {
      agent_log_line("ncclfi agent on " + host_ + ": the harness at " + config_.harness_addr +
                     " did not prove the drill's secret; refused");
      return false;
    }
    channel_.send(
        {{"t", "auth"}, {"mac", agent_mac(config_.secret, "agent", text_field(*reply, "challenge"), host_)}});
    const auto welcome = channel_.receive(kAgentHandshakeMs);
    if (!welcome || text_field(*welcome, "t") != "welcome") {
      agent_log_line("ncclfi agent on " + host_ + ": the harness refused this agent");
      return false;
    }
    // Everything after the welcome is sealed with this connection's key (agent_seal.h): an order
    // injected into the connection is never carried out.
    channel_.seal_with(MessageSeal(session_key(config_.secret, mine, text_field(*reply, "challenge"), host_),
                                   kToHarness, kToAgent));
    return true;
  }

  // This node's injection channel (injection_relay.h). Without one its ranks get none, and their
  // injections are judged forged: never a pass on a rank's line alone.
  void open_injection_relay() {
    try {
      injections_ = std::make_unique<NodeInjectionRelay>(config_.spool_dir);
    } catch (const std::exception& e) {
      agent_log_line("ncclfi agent on " + host_ + ": " + e.what() +
                     "; the injections of this node's ranks cannot be authenticated");
    }
  }

  void relay_injections() {
    if (injections_) injections_->relay(send_);
  }

  // Orders dropped for their seal, said on stderr (agents.log): the first few, then only the count at
  // the end (finish()).
  void log_seal_failures() {
    for (const SealCheck check : channel_.take_seal_failures()) {
      if (++seal_failures_ > kSealFailuresSaid) continue;
      agent_log_line("ncclfi agent on " + host_ +
                     ": dropped a message from the harness's connection: " + describe(check));
    }
  }

  // false: the harness said quit.
  bool handle(const nlohmann::json& m) {
    const std::string t = text_field(m, "t");
    const auto id = int_field(m, "id", 0);
    if (t == "quit") return false;
    if (t == "signal") {
      const int rank = static_cast<int>(int_field(m, "rank", -1)),
                sig = static_cast<int>(int_field(m, "signal", 0));
      int n = 0;
      const auto pids = node_rank_pids(config_.harness_id);
      const auto it = pids.find(rank);
      // Asked only where the rank runs: an agent without it has nothing to refuse.
      const std::string why =
          it != pids.end() ? refused("proc", "signal", std::to_string(sig), rank) : std::string();
      if (it != pids.end() && why.empty())
        for (int pid : it->second) n += ::kill(pid, sig) == 0 ? 1 : 0;
      channel_.send({{"t", "reply"}, {"id", id}, {"n", n}, {"refused", why}});
    } else if (t == "control") {
      const bool arm = bool_field(m, "arm", false);
      const std::string fault = text_field(m, "fault");
      int acknowledged = 0;
      const std::string why = refused("control", arm ? "arm" : "disarm", fault, -1);
      if (why.empty())
        acknowledged = send_control(config_.spool_dir, fault, arm, kControlTimeoutMs).acknowledged;
      channel_.send({{"t", "reply"}, {"id", id}, {"n", acknowledged}, {"refused", why}});
    } else if (t == "link") {
      std::string error;
      const int n = apply_link(m, &error);
      channel_.send({{"t", "reply"}, {"id", id}, {"n", n}, {"error", error}});
    } else if (t == "teardown") {
      const int n = teardown();
      channel_.send({{"t", "reply"}, {"id", id}, {"n", n}});
    }
    return true;
  }

  // `tc qdisc replace dev DEV root QDISC...` on this node; 1 when tc did it.
  int apply_link(const nlohmann::json& m, std::string* error) {
    std::vector<std::string> qdisc;
    if (m.contains("qdisc") && m["qdisc"].is_array())
      for (const auto& w : m["qdisc"])
        if (w.is_string()) qdisc.push_back(w.get<std::string>());
    std::string device = text_field(m, "device");
    if (device.empty()) device = routed_device();
    if (qdisc.empty() || !std::all_of(qdisc.begin(), qdisc.end(), plain_word) || !plain_word(device)) {
      *error = "not a qdisc this agent installs";
      return 0;
    }
    std::string words;
    for (const auto& w : qdisc) words += (words.empty() ? "" : " ") + w;
    if (const std::string why = refused("link", "link", device + " " + words, -1); !why.empty()) {
      *error = "refused on " + host_ + ": " + why;
      return 0;
    }
    std::vector<std::string> argv = {"tc", "qdisc", "replace", "dev", device, "root"};
    argv.insert(argv.end(), qdisc.begin(), qdisc.end());
    if (run_program(argv, error) != 0) return 0;
    shaped_.insert(device);
    return 1;
  }

  // The gate's answer; a refusal is recorded as an `injection_refused` event of this node and said once
  // per action on stderr (agents.log): loud, but a fault retried is not a flood.
  std::string refused(const char* layer, const std::string& action, const std::string& what, int rank) {
    std::string why = gate_.refusal(action, what, rank);
    if (why.empty()) return why;
    refusals_.write_for_rank(
        rank, ev::kRefused,
        {{"host", host_}, {"layer", layer}, {"action", action}, {"what", what}, {"why", why}});
    if (said_.insert(action + " " + what + " " + std::to_string(rank)).second)
      agent_log_line("ncclfi agent on " + host_ + ": refused " + action + " " + what + " for rank " +
                     std::to_string(rank) + ": " + why);
    return why;
  }

  // Removes every qdisc this agent installed: a link fault never outlives its drill.
  void clear_links() {
    for (const auto& device : shaped_) run_program({"tc", "qdisc", "del", "dev", device, "root"}, nullptr);
    shaped_.clear();
  }

  int finish() {
    if (seal_failures_ > kSealFailuresSaid)
      agent_log_line("ncclfi agent on " + host_ + ": dropped " + std::to_string(seal_failures_) +
                     " messages in all for their seal");
    teardown();
    relay_injections();
    forward_events(true);
    output_.finish(send_, Clock::mono_ns());
    channel_.send({{"t", "bye"}});
    remove_spool();
    return 0;
  }

  // The node keeps nothing of the drill, however it ended.
  void remove_spool() {
    remove_dead_control_fifos(config_.spool_dir);
    std::error_code ec;
    fs::remove_all(config_.spool_dir, ec);
  }

  // Each event line as it is; after a rank's rank_exit (written once its output was closed), the rank's
  // final output tail.
  void forward_events(bool final) {
    for (auto& line : final ? events_.read_rest() : events_.read_lines()) {
      const bool rank_exit = line.find("\"rank_exit\"") != std::string::npos;
      channel_.send({{"t", "event"}, {"line", line}});
      if (!rank_exit) continue;
      const auto event = nlohmann::json::parse(line, nullptr, false);
      if (event.is_object() && text_field(event, "event") == "rank_exit")
        output_.rank_ended(event, send_, Clock::mono_ns());
    }
  }

  // Reports the ranks that appeared and those whose process ended since the last scan.
  void scan_ranks() {
    std::map<int, int> now;  // pid -> rank
    for (const auto& [rank, pids] : node_rank_pids(config_.harness_id))
      for (int pid : pids) now[pid] = rank;
    for (const auto& [pid, rank] : seen_) {
      if (!now.count(pid)) channel_.send({{"t", "rank_gone"}, {"rank", rank}, {"pid", pid}});
    }
    std::set<int> ranks;
    for (const auto& [pid, rank] : now) ranks.insert(rank);
    if (ranks != ranks_) channel_.send({{"t", "ranks"}, {"ranks", ranks}});
    ranks_ = std::move(ranks);
    seen_ = std::move(now);
  }

  // SIGCONT and SIGTERM to every rank on this node, the grace period, SIGKILL, and the links healed.
  // Returns how many ranks there were.
  int teardown() {
    clear_links();
    auto signal_all = [this](int sig) {
      int n = 0;
      for (const auto& [rank, pids] : node_rank_pids(config_.harness_id))
        for (int pid : pids) n += ::kill(pid, sig) == 0 ? 1 : 0;
      return n;
    };
    signal_all(SIGCONT);
    const int n = signal_all(SIGTERM);
    const int64_t end = Clock::mono_ns() + static_cast<int64_t>(config_.grace_s * 1e9);
    while (!node_rank_pids(config_.harness_id).empty() && Clock::mono_ns() < end) ::usleep(20'000);
    signal_all(SIGKILL);
    // The wrappers write each rank's rank_exit and close its output once it ended: waited for (briefly),
    // so that what is sent last, and the spool removed after, is complete.
    const int64_t wrappers_end = Clock::mono_ns() + kWrapperExitNs;
    while (!node_rank_pids(config_.harness_id, true).empty() && Clock::mono_ns() < wrappers_end)
      ::usleep(20'000);
    return n;
  }

  const AgentConfig& config_;
  const FaultGate& gate_;
  const std::string host_;
  LineChannel channel_;
  OutputTailer events_;
  std::map<int, int> seen_;
  std::set<int> ranks_;
  std::set<std::string> shaped_;  // devices carrying a qdisc of this agent
  EventLog refusals_;             // this node's injection_refused events, streamed with the ranks'
  std::set<std::string> said_;
  int seal_failures_ = 0;
  NodeOutputStreamer output_;
  std::unique_ptr<NodeInjectionRelay> injections_;  // null when no channel could be made
  const NodeOutputStreamer::Send send_ = [this](const nlohmann::json& m) { return channel_.send(m); };
};

}  // namespace

void request_agent_stop() {
  stop_requested = 1;
}

bool agent_stop_requested() {
  return stop_requested != 0;
}

AgentConfig agent_config_from_env() {
  AgentConfig c;
  c.harness_addr = env_or_throw(kAgentAddrVar);
  c.secret = env_or_throw(kAgentSecretVar);
  c.harness_id = env_or_throw("NCCLFI_HARNESS_ID");
  c.spool_dir = env_or_throw(kAgentSpoolVar);
  return c;
}

std::map<int, std::vector<int>> node_rank_pids(const std::string& harness_id, bool with_wrappers) {
  return job_rank_pids(harness_id, RankScan{true, with_wrappers});
}

int run_agent(const AgentConfig& config, const FaultGate& gate) {
  std::error_code ec;
  fs::create_directories(config.spool_dir, ec);
  if (ec) {
    agent_log_line("ncclfi agent: cannot create " + config.spool_dir + ": " + ec.message());
    return 3;
  }
  // However it ends, the node keeps nothing of the drill: the injection channel's directory goes with
  // the agent (its destructor), the spool here.
  try {
    Agent agent(config, gate);
    return agent.run();
  } catch (const std::exception& e) {
    agent_log_line("ncclfi agent: " + std::string(e.what()));
    fs::remove_all(config.spool_dir, ec);
    return 3;
  }
}

}  // namespace ncclfi::cli
