// The node agents' connection after its handshake (agent_seal.h): a man in the middle who cannot prove
// the drill's secret injects lines into an authenticated connection, or sends a genuine line again.
// Neither side takes them, each says why, and the genuine stream goes on being taken. An agent leaves
// no spool directory behind however it ends (refused, stopped by SIGTERM).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "agent_hub.h"
#include "agent_node.h"
#include "agent_protocol.h"
#include "agent_seal.h"
#include "injection_relay.h"
#include "ncclfi/injection_channel.h"
#include "ncclfi/params.h"
#include "sleeper.h"
#include "unit_temp_dir.h"

namespace ncclfi::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ncclfi::test_support::TempDir;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes `text` as it is on `fd`, as an attacker on the path would.
void inject(int fd, const std::string& text) {
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

std::string line_of(const json& message) {
  return message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

// An inject event as an injector sends it, with its channel seq.
std::string inject_record(uint64_t seq) {
  return json{{"event", "inject"}, {"rank", 0},         {"pid", 4242},    {"host", "nodeM"},
              {"source", "net"},   {"fault_id", "f1"},  {"kind", "drop"}, {"layer", "net"},
              {"attempt", 0},      {"record_seq", seq}, {"ts_ns", 1},     {"mono_ns", 1}}
      .dump();
}

// What the hub holds of relayed injections: the authenticated records' seqs and the refused count.
struct Drained {
  std::vector<uint64_t> seqs;
  size_t rejected = 0;
};
Drained drain(AgentHub& hub) {
  Drained out;
  hub.drain_injections(
      {[&](const InjectionDatagram& d) { out.seqs.push_back(d.seq); }, [&](size_t n) { out.rejected += n; }});
  return out;
}

// An agent's side of the handshake by hand (it knows the secret); returns its seal of the connection.
std::optional<MessageSeal> join_as_agent(LineChannel& c, const std::string& secret, const std::string& host) {
  const std::string mine = random_hex(16);
  c.send({{"t", "hello"}, {"host", host}, {"challenge", mine}});
  const auto challenge = c.receive(3000);
  if (!challenge) return std::nullopt;
  const std::string theirs = text_field(*challenge, "challenge");
  c.send({{"t", "auth"}, {"mac", agent_mac(secret, "agent", theirs, host)}});
  const auto welcome = c.receive(3000);
  if (!welcome || text_field(*welcome, "t") != "welcome") return std::nullopt;
  return MessageSeal(session_key(secret, mine, theirs, host), kToHarness, kToAgent);
}

// A hub on a fresh events file and one agent, `nodeM`, that joins it by hand with the right secret and
// then writes whatever `send` writes on its connection, as a man in the middle could. The agent stays
// connected until the hub has read up to `marker` into the events file; returns that file's text. The
// hub is left for the test to question (hub()).
class AgentLink : public ::testing::Test {
 protected:
  using Sender = std::function<void(int fd, MessageSeal& seal)>;

  std::string run_one_agent(const Sender& send, const std::string& marker) {
    setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
    hub_ = std::make_unique<AgentHub>("the-secret", events_.string());
    std::promise<void> sent_all;
    std::promise<void> hub_done;
    auto agent = std::async(std::launch::async, [&] {
      LineChannel c(connect_to(hub_->address(), 2000));
      auto seal = join_as_agent(c, "the-secret", "nodeM");
      if (seal) send(c.fd(), *seal);
      sent_all.set_value();
      hub_done.get_future().wait();
      return seal.has_value();
    });
    EXPECT_EQ(hub_->wait_for_agents(1, 10000), 1u);
    sent_all.get_future().wait();
    std::string text;
    for (int i = 0; i < 300 && text.find(marker) == std::string::npos; ++i) {
      hub_->poll(10);
      text = read_text(events_);
    }
    drained_ = drain(*hub_);
    hub_done.set_value();
    EXPECT_TRUE(agent.get()) << "the agent's handshake failed";
    unsetenv("NCCLFI_AGENT_HOST");
    return text;
  }
  AgentHub& hub() { return *hub_; }
  const Drained& drained() const { return drained_; }

 private:
  TempDir dir_;
  fs::path events_ = fs::path(dir_.path) / "events.jsonl";
  std::unique_ptr<AgentHub> hub_;
  Drained drained_;
};

TEST_F(AgentLink, SealsBindKeyDirectionSequenceAndBody) {
  const std::string key = session_key("s", "ca", "ch", "node1");
  EXPECT_NE(key, session_key("s", "ca", "ch2", "node1"));
  EXPECT_NE(key, session_key("t", "ca", "ch", "node1"));
  MessageSeal agent(key, kToHarness, kToAgent);
  MessageSeal hub(key, kToAgent, kToHarness);
  json first = agent.seal({{"t", "ranks"}, {"ranks", {0, 1}}});
  json replay = first;
  json edited = agent.seal({{"t", "event"}, {"line", "genuine"}});
  edited["line"] = "forged";
  json reflected = hub.seal({{"t", "quit"}});
  EXPECT_EQ(hub.open(first), SealCheck::kTaken);
  EXPECT_EQ(first, json({{"t", "ranks"}, {"ranks", {0, 1}}}));  // seq and mac removed
  EXPECT_EQ(hub.open(replay), SealCheck::kOutOfOrder);
  EXPECT_EQ(hub.open(edited), SealCheck::kBadMac);
  EXPECT_EQ(hub.open(reflected), SealCheck::kBadMac);  // the hub's own message sent back to it
  json bare = {{"t", "event"}, {"line", "x"}};
  EXPECT_EQ(hub.open(bare), SealCheck::kNoMac);
  json skipped = agent.seal({{"t", "bye"}});  // seq 3: the hub took 1 only, and 2 was edited
  EXPECT_EQ(hub.open(skipped), SealCheck::kOutOfOrder);
}

// A message cut to the wire's limit less kSealBytes (an output tail) still fits the limit once sealed,
// whatever its sequence number: else the receiver would close the connection on it.
TEST_F(AgentLink, ASealedMessageCutForTheSealFitsTheLineLimit) {
  const size_t envelope = line_of({{"line", ""}, {"t", "tail"}}).size() - 1;
  const json message = {{"line", std::string(kMaxAgentLineBytes - kSealBytes - envelope, 'x')},
                        {"t", "tail"}};
  ASSERT_EQ(line_of(message).size() - 1, kMaxAgentLineBytes - kSealBytes);  // as long as a cut one can be
  MessageSeal seal("k", kToHarness, kToAgent);
  json sealed = seal.seal(message);
  sealed["seq"] = std::numeric_limits<int64_t>::max();  // the longest number a seal can carry
  EXPECT_LE(line_of(sealed).size() - 1, kMaxAgentLineBytes);
}

// Before: once the handshake was over, every line was trusted: a forged `event` reached the run's
// events.jsonl and a replayed `ranks` message changed which ranks the harness thought were running.
TEST_F(AgentLink, TheHubDropsInjectedAndReplayedLinesAndTakesTheGenuineStream) {
  const std::string text = run_one_agent(
      [](int fd, MessageSeal& seal) {
        const std::string ranks_0 = line_of(seal.seal({{"t", "ranks"}, {"ranks", {0}}}));
        inject(fd, ranks_0);
        inject(fd, line_of(seal.seal({{"t", "ranks"}, {"ranks", json::array()}})));
        // The man in the middle: a forged event without a MAC, one with a MAC of another key and the
        // next number, a genuine line changed, and the first `ranks` line again.
        const std::string forged_line = R"({"event":"forged","source":"workload","rank":0})";
        inject(fd, line_of({{"t", "event"}, {"line", forged_line}}));
        MessageSeal stranger(session_key("guess", "a", "b", "nodeM"), kToHarness, kToAgent);
        for (int i = 0; i < 2; ++i) stranger.seal({{"t", "x"}});
        inject(fd, line_of(stranger.seal({{"t", "event"}, {"line", forged_line}})));
        json edited =
            seal.seal({{"t", "event"}, {"line", R"({"event":"genuine","source":"workload","rank":0})"}});
        json tampered = edited;
        tampered["line"] = forged_line;
        inject(fd, line_of(tampered));
        inject(fd, ranks_0);
        // The genuine stream goes on: the edited line's number was never taken, so it is sent as it was.
        inject(fd, line_of(edited));
        inject(fd, line_of(seal.seal(
                       {{"t", "event"}, {"line", R"({"event":"genuine2","source":"workload","rank":0})"}})));
      },
      "genuine2");
  AgentHub& hub = this->hub();
  EXPECT_NE(text.find("\"event\":\"genuine\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"event\":\"genuine2\""), std::string::npos) << text;
  EXPECT_EQ(text.find("\"event\":\"forged\""), std::string::npos) << text;
  EXPECT_TRUE(hub.running_ranks().empty()) << "the replayed ranks message was taken";
  EXPECT_EQ(hub.refused_messages(), 4u);
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> whys;
  while (std::getline(lines, line)) {
    const auto e = json::parse(line, nullptr, false);
    if (e.is_object() && e.value("event", "") == "agent_message_refused") {
      EXPECT_EQ(e.value("agent_host", ""), "nodeM");
      whys.push_back(e.value("why", ""));
    }
  }
  EXPECT_EQ(whys, (std::vector<std::string>{"no MAC", "a wrong MAC", "a wrong MAC",
                                            "a replayed or out-of-order sequence number"}));
}

// Relayed injection records (injection_relay.h) are messages like any other: one whose seal does not
// hold is dropped and recorded; one whose fields have the wrong types (a seq of text, a negative seq, a
// record that is an object, a count of text) or that names another host than its agent's is counted as
// refused, which the attempt's ledger counts as a forged record. None of them ends the connection, and
// the genuine records around them are taken.
TEST_F(AgentLink, TheHubRefusesAndCountsRelayedRecordsOfTheWrongShape) {
  const auto record = [](MessageSeal& seal, const json& seq, const json& text) {
    json message = {{"t", "inject_record"}, {"record_seq", seq}};
    if (!text.is_null()) message["record"] = text;
    return line_of(seal.seal(message));
  };
  const std::string text = run_one_agent(
      [&](int fd, MessageSeal& seal) {
        inject(fd, record(seal, 1, inject_record(1)));
        // A record with the next number but a MAC of another key: a man in the middle's.
        MessageSeal stranger(session_key("guess", "a", "b", "nodeM"), kToHarness, kToAgent);
        stranger.seal({{"t", "x"}});
        inject(fd, record(stranger, 2, inject_record(2)));
        // Sealed, but of the wrong types.
        inject(fd, record(seal, "3", inject_record(3)));
        inject(fd, record(seal, -4, inject_record(4)));
        inject(fd, record(seal, 5, json::parse(inject_record(5))));
        inject(fd, record(seal, 6, nullptr));
        std::string elsewhere = inject_record(6);  // another host's record: not this agent's to vouch for
        elsewhere.replace(elsewhere.find("nodeM"), 5, "nodeX");
        inject(fd, record(seal, 6, elsewhere));
        inject(fd, line_of(seal.seal({{"t", "inject_rejected"}, {"n", "many"}})));
        inject(fd, line_of(seal.seal({{"t", "inject_rejected"}, {"n", 2}})));
        inject(fd, record(seal, 7, inject_record(7)));
        inject(fd, line_of(seal.seal(
                       {{"t", "event"}, {"line", R"({"event":"last","source":"workload","rank":0})"}})));
      },
      "\"last\"");
  AgentHub& hub = this->hub();
  const Drained& drained = this->drained();
  EXPECT_NE(text.find("\"last\""), std::string::npos) << "the stream stopped after the refused records\n"
                                                      << text;
  EXPECT_EQ(drained.seqs, (std::vector<uint64_t>{1, 7}));
  EXPECT_EQ(drained.rejected, 8u);  // 3, -4, an object, none, another host's, "many" (one), the agent's 2
  EXPECT_EQ(hub.refused_messages(), 1u);
  EXPECT_NE(text.find("agent_message_refused"), std::string::npos) << text;
  EXPECT_EQ(hub.agents(), 1u);
}

// Sends one datagram to the Unix socket at `path`, as an injector does.
void send_datagram(const std::string& path, const std::string& datagram) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  EXPECT_EQ(::sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<const sockaddr*>(&addr),
                     sizeof(addr)),
            static_cast<ssize_t>(datagram.size()));
  ::close(fd);
}

// A real agent's channel: a record its rank sends under the key it handed out is relayed, sealed, to the
// harness; one made with another key is only counted. Its channel's directory goes with it.
TEST_F(AgentLink, AnAgentRelaysItsRanksAuthenticatedRecordsAndLeavesNoChannel) {
  TempDir dir;
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const AgentConfig config{"127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), "s",
                           "relay-test-" + std::to_string(getpid()), dir.path + "/spool", 0.5};
  const FaultGate gate;
  auto agent = std::async(std::launch::async, [&] { return run_agent(config, gate); });
  LineChannel c(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
  ::close(listener);
  const auto hello = c.receive(5000);
  ASSERT_TRUE(hello);
  const std::string host = text_field(*hello, "host");
  const std::string theirs = text_field(*hello, "challenge");
  const std::string mine = random_hex(16);
  c.send({{"t", "challenge"}, {"challenge", mine}, {"mac", agent_mac("s", "harness", theirs, host)}});
  ASSERT_TRUE(c.receive(3000));
  c.send({{"t", "welcome"}});
  c.seal_with(MessageSeal(session_key("s", theirs, mine, host), kToAgent, kToHarness));
  // What `agent --exec` hands its program on this node.
  const auto channel = node_injection_env(config.spool_dir);
  ASSERT_EQ(channel.size(), 2u);
  const std::string socket = channel.at(kInjectSocketVar);
  EXPECT_EQ(fs::status(fs::path(socket).parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
  // The key stays in the channel's own directory (which a SIGKILLed agent's successor removes); the
  // spool only links to it.
  EXPECT_EQ(fs::read_symlink(fs::path(config.spool_dir) / "inject-channel.json").parent_path(),
            fs::path(socket).parent_path());
  send_datagram(socket, encode_injection_datagram(channel.at(kInjectKeyVar), 1, inject_record(1)));
  send_datagram(socket, encode_injection_datagram("guessed", 2, inject_record(2)));
  std::optional<json> record, rejected;
  for (int i = 0; i < 250 && !(record && rejected); ++i) {
    const auto m = c.receive(20);
    if (m && text_field(*m, "t") == kRelayedRecord) record = m;
    if (m && text_field(*m, "t") == kRelayedRejections) rejected = m;
  }
  ASSERT_TRUE(record) << "the authenticated record was not relayed";
  ASSERT_TRUE(rejected) << "the forged datagram was not counted";
  EXPECT_EQ(int_field(*record, kRecordSeqField, 0), 1);
  EXPECT_EQ(text_field(*record, "record"), inject_record(1));
  EXPECT_EQ(int_field(*rejected, "n", 0), 1);
  c.send({{"t", "quit"}});
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(agent.get(), 0);
  EXPECT_FALSE(fs::exists(config.spool_dir));
  EXPECT_FALSE(fs::exists(fs::path(socket).parent_path())) << "the agent left its channel's directory";
}

// The harness's end played by hand, to a real agent: an order injected into the connection (a SIGKILL
// for the agent's rank, a quit) is not carried out; the genuine quit is, and the agent's own messages
// carry its seal.
TEST_F(AgentLink, AnAgentCarriesOutNoInjectedOrder) {
  TempDir dir;
  const std::string harness_id = "link-test-" + std::to_string(getpid());
  const pid_t rank = test_support::start_sleeper(
      {"NCCLFI_HARNESS_ID=" + harness_id, std::string(kRankMarkerVar) + "=1", "RANK=0"});
  ASSERT_GT(rank, 0);
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const AgentConfig config{"127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), "s", harness_id,
                           dir.path + "/spool", 0.5};
  const FaultGate gate;
  auto agent = std::async(std::launch::async, [&] { return run_agent(config, gate); });
  LineChannel c(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
  ::close(listener);
  const auto hello = c.receive(5000);
  ASSERT_TRUE(hello);
  const std::string host = text_field(*hello, "host");
  const std::string theirs = text_field(*hello, "challenge");
  const std::string mine = random_hex(16);
  c.send({{"t", "challenge"}, {"challenge", mine}, {"mac", agent_mac("s", "harness", theirs, host)}});
  const auto auth = c.receive(3000);
  ASSERT_TRUE(auth && macs_equal(text_field(*auth, "mac"), agent_mac("s", "agent", mine, host)));
  c.send({{"t", "welcome"}});
  c.seal_with(MessageSeal(session_key("s", theirs, mine, host), kToAgent, kToHarness));
  // Until the agent reports its rank, so that an order for it would find it.
  bool found = false;
  for (int i = 0; i < 250 && !found; ++i)
    if (const auto m = c.receive(20)) found = text_field(*m, "t") == "ranks";
  ASSERT_TRUE(found) << "no sealed ranks message from the agent";
  inject(c.fd(), line_of({{"t", "signal"}, {"id", 1}, {"rank", 0}, {"signal", SIGKILL}}));
  inject(c.fd(), line_of({{"t", "quit"}, {"seq", 1}, {"mac", std::string(64, '0')}}));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(waitpid(rank, nullptr, WNOHANG), 0) << "an injected SIGKILL reached the rank";
  EXPECT_EQ(agent.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "an injected quit ended the agent";
  c.send({{"t", "quit"}});
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(agent.get(), 0);
  int status = 0;
  ASSERT_EQ(waitpid(rank, &status, 0), rank);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;  // the genuine quit's teardown
  bool bye = false;
  for (int i = 0; i < 100 && !bye; ++i)
    if (const auto m = c.receive(20)) bye = text_field(*m, "t") == "bye";
  EXPECT_TRUE(bye) << "the agent's goodbye did not carry its seal";
  EXPECT_EQ(c.sealed_dropped(), 0u);
  EXPECT_FALSE(fs::exists(config.spool_dir));
}

// Before: an agent the harness refused returned at once and left its spool directory on the node.
TEST_F(AgentLink, ARefusedAgentRemovesItsSpool) {
  TempDir dir;
  setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  AgentHub hub("the-secret", dir.path + "/events.jsonl");
  const AgentConfig config{hub.address(), "not-the-secret", "refused-" + std::to_string(getpid()),
                           dir.path + "/spool", 0.5};
  const FaultGate gate;
  auto agent = std::async(std::launch::async, [&] { return run_agent(config, gate); });
  while (agent.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) hub.poll(10);
  unsetenv("NCCLFI_AGENT_HOST");
  EXPECT_EQ(agent.get(), 3);
  EXPECT_EQ(hub.agents(), 0u);
  EXPECT_FALSE(fs::exists(config.spool_dir));
}

// Before: `ncclfi agent` died of SIGTERM (what a launcher sends its tasks) with its rank running and its
// spool left behind. Now it tears its node down, removes the spool and exits 3.
TEST_F(AgentLink, SigtermEndsAnAgentWithItsRanksAndItsSpool) {
  TempDir dir;
  const std::string harness_id = "sigterm-test-" + std::to_string(getpid());
  const pid_t rank = test_support::start_sleeper(
      {"NCCLFI_HARNESS_ID=" + harness_id, std::string(kRankMarkerVar) + "=1", "RANK=0"});
  ASSERT_GT(rank, 0);
  setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  AgentHub hub("s", dir.path + "/events.jsonl");
  const std::string spool = dir.path + "/spool";
  std::vector<std::string> env = {
      "NCCLFI_HARNESS_ID=" + harness_id, std::string(kAgentAddrVar) + "=" + hub.address(),
      std::string(kAgentSecretVar) + "=s", std::string(kAgentSpoolVar) + "=" + spool,
      "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  unsetenv("NCCLFI_AGENT_HOST");
  std::vector<char*> envp;
  for (auto& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  char cli[] = NCCLFI_CLI;
  char command[] = "agent";
  char* argv[] = {cli, command, nullptr};
  const pid_t agent = fork();
  if (agent == 0) {
    execve(cli, argv, envp.data());
    _exit(127);
  }
  ASSERT_EQ(hub.wait_for_agents(1, 10000), 1u);
  for (int i = 0; i < 500 && hub.running_ranks().count(0) == 0; ++i) hub.poll(10);
  ASSERT_TRUE(fs::exists(spool));
  ASSERT_EQ(kill(agent, SIGTERM), 0);
  int status = 0;
  for (int i = 0; i < 1000 && waitpid(agent, &status, WNOHANG) == 0; ++i) hub.poll(10);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  EXPECT_FALSE(fs::exists(spool));
  int rank_status = 0;
  EXPECT_EQ(waitpid(rank, &rank_status, WNOHANG), rank) << "the agent left its rank running";
  kill(rank, SIGKILL);
  waitpid(rank, nullptr, 0);
}

}  // namespace
}  // namespace ncclfi::cli
