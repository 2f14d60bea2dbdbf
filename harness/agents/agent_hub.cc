#include "agent_hub.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace ncclfi::cli {
namespace {

constexpr int kRequestMs = 3000;  // an agent answers at once; a teardown takes its grace period more
// Connections proving the secret at once: one more is refused at once (a flood costs memory and file
// descriptors, never time).
constexpr size_t kMaxHandshakes = 256;
// agent_message_refused events written per agent; the rest are counted only (refused_messages()).
constexpr int kMaxSealEventsPerAgent = 32;

// An agent's count of what it did (ranks signalled, faults armed): never negative, never huge.
int count_of(const nlohmann::json& reply) {
  return static_cast<int>(std::clamp<int64_t>(int_field(reply, "n", 0), 0, int64_t{1} << 20));
}

}  // namespace

namespace {

// A socket listening on every address (IPv6 and IPv4 where the host has IPv6, else IPv4) on a port the
// kernel picks; -1 when neither works.
int listen_everywhere(int* port) {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0) {
    int off = 0;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_addr = in6addr_any;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, 256) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      *port = ntohs(addr.sin6_port);
      return fd;
    }
    ::close(fd);
  }
  fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, 256) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    *port = ntohs(addr.sin_port);
    return fd;
  }
  ::close(fd);
  return -1;
}

}  // namespace

AgentHub::AgentHub(std::string secret, std::string events_path)
    : secret_(std::move(secret)), events_path_(std::move(events_path)), log_(events_path_, "harness") {
  listen_fd_ = listen_everywhere(&port_);
  if (listen_fd_ < 0) throw std::runtime_error("cannot listen for the node agents");
  events_fd_ = ::open(events_path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

AgentHub::~AgentHub() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (events_fd_ >= 0) ::close(events_fd_);
  if (relay_in_fd_ >= 0) ::close(relay_in_fd_);
  if (!relay_prefix_.empty()) {
    ::unlink((relay_prefix_ + ".in").c_str());
    ::unlink((relay_prefix_ + ".out").c_str());
  }
}

void AgentHub::keep_output(const std::string& log_dir, int world_size) {
  output_ = std::make_unique<HarnessOutputStore>(log_dir, world_size);
}

void AgentHub::relay_control_from(const std::string& run_dir) {
  relay_prefix_ = run_dir + "/ncclfi-agents-" + std::to_string(::getpid());
  ::mkfifo((relay_prefix_ + ".in").c_str(), 0600);
  ::mkfifo((relay_prefix_ + ".out").c_str(), 0600);
  // Held open for reading, so that a writer's non-blocking open finds a reader (as libfiu's rc thread).
  relay_in_fd_ = ::open((relay_prefix_ + ".in").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

// One command per writer, as `ncclfi arm` sends it: "enable name=ncclfi/fault/ID" or "disable ...".
void AgentHub::serve_control_relay() {
  if (relay_in_fd_ < 0 || relaying_) return;
  char buf[512];
  const ssize_t n = ::read(relay_in_fd_, buf, sizeof buf - 1);
  if (n <= 0) {
    if (n == 0) {  // the writer closed: reopen, or every later poll would read end-of-file at once
      ::close(relay_in_fd_);
      relay_in_fd_ = ::open((relay_prefix_ + ".in").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    }
    return;
  }
  const std::string command(buf, static_cast<size_t>(n));
  static const std::string kPoint = "name=ncclfi/fault/";
  const auto at = command.find(kPoint);
  if (at == std::string::npos) return;
  std::string fault = command.substr(at + kPoint.size());
  fault = fault.substr(0, fault.find_first_of(" \n"));
  relaying_ = true;
  const int acknowledged = control(fault, command.rfind("enable", 0) == 0);
  relaying_ = false;
  if (acknowledged == 0) return;  // no answer: `ncclfi arm` counts no acknowledgement
  const int out = ::open((relay_prefix_ + ".out").c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (out < 0) return;
  const std::string reply = "0\n";
  if (::write(out, reply.data(), reply.size()) < 0)
    log_.write("agent_relay_unanswered", {{"fault_id", fault}});
  ::close(out);
}

std::string AgentHub::address() const {
  const char* host = std::getenv("NCCLFI_AGENT_HOST");
  return (host != nullptr && *host != '\0' ? std::string(host) : host_name()) + ":" + std::to_string(port_);
}

void AgentHub::poll(int wait_ms) {
  accept_new();
  const int64_t now = Clock::mono_ns();
  handshakes_.erase(
      std::remove_if(handshakes_.begin(), handshakes_.end(), [&](Handshake& h) { return !advance(h, now); }),
      handshakes_.end());
  serve_control_relay();
  for (auto& a : agents_) {
    if (!a.channel.open()) continue;
    a.channel.pump(wait_ms);
    wait_ms = 0;
    while (auto m = a.channel.next()) take(a, *m);
    record_seal_failures(a);
  }
  if (wait_ms > 0) wait_for_handshakes(wait_ms);  // no agent to wait on yet
}

void AgentHub::wait_for_handshakes(int wait_ms) {
  std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
  for (const auto& h : handshakes_) fds.push_back({h.channel.fd(), POLLIN, 0});
  ::poll(fds.data(), fds.size(), wait_ms);
}

size_t AgentHub::wait_for_agents(size_t count, int timeout_ms) {
  const int64_t end = Clock::mono_ns() + static_cast<int64_t>(timeout_ms) * 1'000'000;
  while (agents_.size() < count && Clock::mono_ns() < end) {
    poll(0);
    ::usleep(20'000);
  }
  return agents_.size();
}

void AgentHub::accept_new() {
  while (true) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    Handshake h{LineChannel(fd), Clock::mono_ns() + int64_t{kAgentHandshakeMs} * 1'000'000, "", "", nullptr};
    if (handshakes_.size() >= kMaxHandshakes) {
      refuse(h, "too many connections proving the secret at once");
      continue;
    }
    handshakes_.push_back(std::move(h));
  }
}

// The agent's hello names its host and a challenge; the hub proves the secret over it and sends its own
// challenge; the agent's answer decides. A wrong answer, silence (kAgentHandshakeMs for each half) or
// garbage: refused, recorded, closed. Only what has arrived is read: the attempt loop polls the hub
// between its other duties, and a stranger that never speaks must not hold its deadline back.
bool AgentHub::advance(Handshake& h, int64_t now_ns) {
  const bool open = h.channel.pump(0);
  while (auto m = h.channel.next()) {
    if (h.challenge.empty()) {
      if (text_field(*m, "t") != "hello") {
        refuse(h, "no hello");
        return false;
      }
      if (text_field(*m, "host").empty() || text_field(*m, "challenge").empty()) {
        refuse(h, "a hello without a host name and a challenge");
        return false;
      }
      h.host = text_field(*m, "host");
      h.hello = std::move(*m);
      h.challenge = random_hex(16);
      h.channel.send({{"t", "challenge"},
                      {"challenge", h.challenge},
                      {"mac", agent_mac(secret_, "harness", text_field(h.hello, "challenge"), h.host)}});
      h.until_ns = now_ns + int64_t{kAgentHandshakeMs} * 1'000'000;
      continue;
    }
    if (text_field(*m, "t") == "auth" &&
        macs_equal(text_field(*m, "mac"), agent_mac(secret_, "agent", h.challenge, h.host))) {
      welcome(h);
      return false;
    }
    refuse(h, "a wrong proof of the drill's secret");
    return false;
  }
  if (h.channel.dropped_lines() > 0) {  // garbage is refused at once, not after the handshake's wait
    refuse(h, "a line that is not a JSON object");
    return false;
  }
  if (open && now_ns < h.until_ns) return true;
  refuse(h, h.challenge.empty() ? "no hello" : "a wrong proof of the drill's secret");
  return false;
}

void AgentHub::welcome(Handshake& h) {
  h.channel.send({{"t", "welcome"}});
  // The welcome is the last message in the clear: from here on a line that does not carry the
  // connection's seal is dropped (agent_seal.h).
  h.channel.seal_with(MessageSeal(session_key(secret_, text_field(h.hello, "challenge"), h.challenge, h.host),
                                  kToAgent, kToHarness));
  std::set<std::string> link_faults;
  if (h.hello.contains("link_faults") && h.hello["link_faults"].is_array())
    for (const auto& f : h.hello["link_faults"])
      if (f.is_string()) link_faults.insert(f.get<std::string>());
  log_.write("agent", {{"agent_host", h.host}, {"link_faults", link_faults}});
  agents_.push_back({std::move(h.channel), h.host, {}, std::move(link_faults), false, 0});
}

void AgentHub::refuse(Handshake& h, const std::string& why) {
  ++refused_;
  h.channel.send({{"t", "refused"}});
  h.channel.close();
  log_.write("agent_refused", {{"agent_host", h.host}, {"why", why}});
}

// Each message dropped for its seal is counted; the first kMaxSealEventsPerAgent of an agent are also
// written to the events as agent_message_refused (host, why, how many so far), so that a flood of
// forged lines cannot flood the records.
void AgentHub::record_seal_failures(Agent& agent) {
  for (const SealCheck check : agent.channel.take_seal_failures()) {
    if (++agent.seal_failures > kMaxSealEventsPerAgent) continue;
    log_.write("agent_message_refused",
               {{"agent_host", agent.host}, {"why", describe(check)}, {"refused", agent.seal_failures}});
  }
}

size_t AgentHub::refused_messages() const {
  size_t n = 0;
  for (const auto& a : agents_) n += a.channel.sealed_dropped();
  return n;
}

void AgentHub::take(Agent& agent, const nlohmann::json& m) {
  const std::string t = text_field(m, "t");
  if (t == "event") {
    append_event_line(text_field(m, "line"));
  } else if (t == "ranks") {
    agent.ranks.clear();
    if (m.contains("ranks") && m["ranks"].is_array())
      for (const auto& r : m["ranks"])
        if (r.is_number_integer()) agent.ranks.insert(r.get<int>());
  } else if (t == "rank_gone") {
    log_.write_for_rank(static_cast<int>(int_field(m, "rank", -1)), "rank_gone",
                        {{"agent_host", agent.host}, {"pid", int_field(m, "pid", 0)}});
  } else if (t == "reply") {
    replies_.push_back(m);
  } else if (t == "output") {
    if (output_) output_->line(agent.host, m);
  } else if (t == "tail") {
    if (output_) output_->tail(agent.host, m);
  } else if (t == kRelayedRecord || t == kRelayedRejections) {
    RelayedInjections relayed = read_relayed(m, agent.host);
    relayed_rejected_ += relayed.rejected;
    if (relayed.record && relayed_.size() < kMaxRelayedRecords) {
      relayed_.push_back(std::move(*relayed.record));
    } else if (relayed.record) {
      ++relayed_rejected_;
    }
  } else if (t == "bye") {
    agent.bye = true;
  }
}

// The line as the rank wrote it, in one write: the attempt loop's tail reads it like any other.
void AgentHub::append_event_line(const std::string& line) {
  if (events_fd_ < 0 || line.empty() || line.size() > kMaxAgentLineBytes) return;
  const std::string out = line + "\n";
  if (::write(events_fd_, out.data(), out.size()) != static_cast<ssize_t>(out.size())) {
    log_.write("agent_event_lost", {{"bytes", out.size()}});
  }
}

std::vector<nlohmann::json> AgentHub::request(nlohmann::json message, const std::string& only_host) {
  const int id = next_id_++;
  message["id"] = id;
  size_t asked = 0;
  for (auto& a : agents_)
    if (only_host.empty() || a.host == only_host) asked += a.channel.send(message) ? 1u : 0u;
  std::vector<nlohmann::json> answers;
  const int64_t end = Clock::mono_ns() + static_cast<int64_t>(kRequestMs) * 1'000'000;
  while (answers.size() < asked && Clock::mono_ns() < end) {
    poll(5);
    for (auto it = replies_.begin(); it != replies_.end();) {
      if (int_field(*it, "id", -1) == id) {
        answers.push_back(*it);
        it = replies_.erase(it);
      } else {
        ++it;
      }
    }
  }
  return answers;
}

// The injection's time is when the harness gave the command, on the harness's clocks: an agent's
// monotonic clock is another host's, and the rank's reaction follows the command either way.
int AgentHub::signal_rank(int rank, int sig, EventTime* sent) {
  if (sent != nullptr) *sent = EventTime::now();
  int n = 0;
  bool refused = false;
  for (const auto& r : request({{"t", "signal"}, {"rank", rank}, {"signal", sig}})) {
    n += count_of(r);
    refused = refused || !text_field(r, "refused").empty();
  }
  return n == 0 && refused ? kSignalRefused : n;
}

int AgentHub::control(const std::string& fault_id, bool arm) {
  int n = 0;
  for (const auto& r : request({{"t", "control"}, {"fault", fault_id}, {"arm", arm}})) n += count_of(r);
  return n;
}

int AgentHub::link(const std::string& host, const std::vector<std::string>& qdisc,
                   const std::string& device) {
  int n = 0;
  for (const auto& r : request({{"t", "link"}, {"qdisc", qdisc}, {"device", device}}, host)) {
    n += count_of(r);
    if (int_field(r, "n", 0) <= 0)
      log_.write("link_failed", {{"agent_host", host}, {"why", text_field(r, "error")}});
  }
  return n;
}

std::map<std::string, std::set<std::string>> AgentHub::link_capabilities() const {
  std::map<std::string, std::set<std::string>> caps;
  for (const auto& a : agents_) caps[a.host] = a.link_faults;
  return caps;
}

int AgentHub::teardown() {
  int n = 0;
  for (const auto& r : request({{"t", "teardown"}})) n += count_of(r);
  return n;
}

void AgentHub::quit(int timeout_ms) {
  for (auto& a : agents_) a.channel.send({{"t", "quit"}});
  const int64_t end = Clock::mono_ns() + static_cast<int64_t>(timeout_ms) * 1'000'000;
  while (Clock::mono_ns() < end && std::any_of(agents_.begin(), agents_.end(),
                                               [](const Agent& a) { return a.channel.open() && !a.bye; }))
    poll(10);
  poll(0);
}

void AgentHub::drain_injections(const InjectionSink& sink) {
  for (const auto& record : relayed_) sink.authentic(record);
  relayed_.clear();
  if (relayed_rejected_ > 0) sink.rejected(std::exchange(relayed_rejected_, 0));
}

std::set<int> AgentHub::running_ranks() const {
  std::set<int> ranks;
  for (const auto& a : agents_) ranks.insert(a.ranks.begin(), a.ranks.end());
  return ranks;
}

std::map<int, std::string> AgentHub::rank_hosts() const {
  std::map<int, std::string> hosts;
  for (const auto& a : agents_)
    for (int r : a.ranks) hosts[r] = a.host;
  return hosts;
}

}  // namespace ncclfi::cli
