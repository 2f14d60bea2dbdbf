// The agents' handshake and wire: MACs bound to role, challenge and host; bounded lines; a live hub
// refuses an agent that does not know the secret and welcomes one that does.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <signal.h>
#include <sys/wait.h>

#include <future>

#include "agent_hub.h"
#include "agent_node.h"
#include "agent_protocol.h"
#include "ncclfi/params.h"
#include "proc_faults.h"

namespace ncclfi::cli {
namespace {

TEST(AgentProtocol, MacsDependOnSecretRoleChallengeAndHost) {
  const auto mac = agent_mac("secret", "agent", "c1", "node2");
  EXPECT_EQ(mac.size(), 64u);  // SHA-256 in hex
  EXPECT_TRUE(macs_equal(mac, agent_mac("secret", "agent", "c1", "node2")));
  EXPECT_FALSE(macs_equal(mac, agent_mac("Secret", "agent", "c1", "node2")));
  EXPECT_FALSE(macs_equal(mac, agent_mac("secret", "harness", "c1", "node2")));  // no reflection
  EXPECT_FALSE(macs_equal(mac, agent_mac("secret", "agent", "c2", "node2")));
  EXPECT_FALSE(macs_equal(mac, agent_mac("secret", "agent", "c1", "node3")));
  EXPECT_NE(random_hex(), random_hex());
}

TEST(AgentProtocol, ALineOverTheLimitClosesTheChannel) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  LineChannel reader(fds[0]);
  std::thread writer([fd = fds[1]] {
    const std::string huge(kMaxAgentLineBytes + 10, 'x');
    (void)!write(fd, huge.data(), huge.size());
    close(fd);
  });
  bool open = true;
  for (int i = 0; i < 200 && open; ++i) open = reader.pump(50);
  writer.join();
  EXPECT_FALSE(open);
  EXPECT_FALSE(reader.next().has_value());
}

// An agent's side of the handshake, by hand: hello, check the hub's MAC, answer with `secret`.
std::string handshake(const std::string& addr, const std::string& hub_secret, const std::string& secret) {
  LineChannel c(connect_to(addr, 2000));
  if (!c.open()) return "no connection";
  c.send({{"t", "hello"}, {"host", "nodeX"}, {"challenge", "abc"}});
  const auto ch = c.receive(3000);
  if (!ch || ch->value("t", "") != "challenge") return "no challenge";
  if (!macs_equal(ch->value("mac", ""), agent_mac(hub_secret, "harness", "abc", "nodeX")))
    return "bad hub mac";
  c.send({{"t", "auth"}, {"mac", agent_mac(secret, "agent", ch->value("challenge", ""), "nodeX")}});
  const auto answer = c.receive(3000);
  return answer ? answer->value("t", "") : "closed";
}

TEST(AgentHub, RefusesAWrongSecretAndWelcomesTheRightOne) {
  const auto dir = std::filesystem::temp_directory_path() / ("ncclfi-hub-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  AgentHub hub("the-secret", (dir / "events.jsonl").string());
  std::string wrong, right;
  std::thread rogue([&] { wrong = handshake(hub.address(), "the-secret", "not-the-secret"); });
  while (hub.refused() == 0 && wrong.empty()) hub.poll(10);
  rogue.join();
  EXPECT_EQ(wrong, "refused");
  EXPECT_EQ(hub.refused(), 1);
  EXPECT_EQ(hub.agents(), 0u);
  std::thread good([&] { right = handshake(hub.address(), "the-secret", "the-secret"); });
  EXPECT_EQ(hub.wait_for_agents(1, 10000), 1u);
  good.join();
  EXPECT_EQ(right, "welcome");
  std::ifstream events(dir / "events.jsonl");
  std::stringstream text_stream;
  text_stream << events.rdbuf();  // (an istreambuf_iterator trips GCC 12's -Wnull-dereference)
  const std::string text = text_stream.str();
  EXPECT_NE(text.find("agent_refused"), std::string::npos);
  unsetenv("NCCLFI_AGENT_HOST");
  std::filesystem::remove_all(dir);
}

// A stand-in rank an agent finds: `sleep 60` with the job's harness id, the rank marker (`world` ranks)
// and RANK. Returns its pid (-1 when fork failed).
pid_t start_stand_in_rank(const std::string& harness_id, int rank, int world) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const std::string id = "NCCLFI_HARNESS_ID=" + harness_id;
  const std::string marker = std::string(kRankMarkerVar) + "=" + std::to_string(world);
  const std::string rank_var = "RANK=" + std::to_string(rank);
  char* env[] = {const_cast<char*>(id.c_str()), const_cast<char*>(marker.c_str()),
                 const_cast<char*>(rank_var.c_str()), nullptr};
  char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("60"), nullptr};
  execve("/bin/sleep", argv, env);
  _exit(127);
}

// A real agent against a real hub: it finds a "rank" of its job (a process with the job's harness id,
// the rank marker and a rank variable), signals it for a proc fault, and when the harness goes away tears
// it down and ends with status 3.
TEST(AgentNode, CarriesOutSignalsAndTearsDownWhenTheHarnessIsLost) {
  const auto dir = std::filesystem::temp_directory_path() / ("ncclfi-agent-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string harness_id = "agent-test-" + std::to_string(getpid());
  const pid_t rank = start_stand_in_rank(harness_id, 0, 1);
  ASSERT_GE(rank, 0);
  setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  auto hub = std::make_unique<AgentHub>("s", (dir / "events.jsonl").string());
  AgentConfig config{hub->address(), "s", harness_id, (dir / "spool").string(), 0.5};
  const FaultGate gate;
  auto agent = std::async(std::launch::async, [&] { return run_agent(config, gate); });
  ASSERT_EQ(hub->wait_for_agents(1, 10000), 1u);
  for (int i = 0; i < 500 && hub->running_ranks().count(0) == 0; ++i) hub->poll(10);
  EXPECT_EQ(hub->running_ranks(), std::set<int>{0});
  EventTime sent;
  EXPECT_EQ(hub->signal_rank(0, SIGCONT, &sent), 1);  // a proc fault's signal reaches the rank
  EXPECT_EQ(hub->signal_rank(1, SIGCONT, &sent), 0);  // no such rank on that node
  hub.reset();                                        // the harness is gone
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(agent.get(), 3);
  int status = 0;
  ASSERT_EQ(waitpid(rank, &status, 0), rank);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  unsetenv("NCCLFI_AGENT_HOST");
  std::filesystem::remove_all(dir);
}

// An agent whose gate refuses (its host is outside the drill's allow-list): the rank is not signalled,
// the hub hears "refused", and the refusal reaches the run's events with the agent's host and why.
TEST(AgentNode, ARefusedSignalLeavesTheRankAloneAndIsRecorded) {
  const auto dir = std::filesystem::temp_directory_path() / ("ncclfi-refuse-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string harness_id = "refuse-test-" + std::to_string(getpid());
  const pid_t rank = start_stand_in_rank(harness_id, 2, 3);
  ASSERT_GE(rank, 0);
  setenv("NCCLFI_AGENT_HOST", "127.0.0.1", 1);
  auto hub = std::make_unique<AgentHub>("s", (dir / "events.jsonl").string());
  AgentConfig config{hub->address(), "s", harness_id, (dir / "spool").string(), 0.5};
  FaultGate gate;
  gate.refusal = [](const std::string& action, const std::string&, int) {
    return action == "signal" ? std::string("not in the allowed hosts (node1, node2)") : std::string();
  };
  auto agent = std::async(std::launch::async, [&] { return run_agent(config, gate); });
  ASSERT_EQ(hub->wait_for_agents(1, 10000), 1u);
  for (int i = 0; i < 500 && hub->running_ranks().count(2) == 0; ++i) hub->poll(10);
  EventTime sent;
  EXPECT_EQ(hub->signal_rank(2, SIGKILL, &sent), kSignalRefused);
  EXPECT_EQ(hub->signal_rank(5, SIGKILL, &sent), 0);  // no such rank here: nothing to refuse
  EXPECT_EQ(waitpid(rank, nullptr, WNOHANG), 0) << "the refused kill reached the rank";
  hub->quit(5000);
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(agent.get(), 0);
  int status = 0;
  ASSERT_EQ(waitpid(rank, &status, 0), rank);  // the quit's teardown: SIGTERM, not the refused SIGKILL
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  std::ifstream events(dir / "events.jsonl");
  std::string line;
  int refused = 0;
  while (std::getline(events, line)) {
    const auto e = nlohmann::json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("event", "") != "injection_refused") continue;
    ++refused;
    EXPECT_EQ(e.value("rank", -1), 2);
    EXPECT_EQ(e.value("layer", ""), "proc");
    EXPECT_EQ(e.value("why", ""), "not in the allowed hosts (node1, node2)");
    EXPECT_EQ(e.value("host", ""), host_name());
  }
  EXPECT_EQ(refused, 1);
  unsetenv("NCCLFI_AGENT_HOST");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ncclfi::cli
