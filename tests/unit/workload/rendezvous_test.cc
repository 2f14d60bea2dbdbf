// Workload rendezvous: reading torchrun / Open MPI / Slurm variables, an allgather among 4 forked
// processes on a free loopback port, and a timeout when a rank never shows up.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "ncclfi/workload_contract.h"
#include "rendezvous.h"
#include "test_support.h"

namespace ncclfi {
namespace {

using std::chrono::milliseconds;

constexpr const char* kVars[] = {
    "RANK",         "WORLD_SIZE",           "LOCAL_RANK",           "MASTER_ADDR",
    "MASTER_PORT",  "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "SLURM_PROCID", "SLURM_NTASKS",         "SLURM_LOCALID",        "SLURM_LAUNCH_NODE_IPADDR"};

// In a child with a clean launcher environment plus `vars`: 0 if check(info) holds, 1 if not,
// 2 if rendezvous_from_env threw and the message contains `error` (3 otherwise).
int from_env(std::vector<std::pair<const char*, const char*>> vars,
             const std::function<bool(const RendezvousInfo&)>& check, const std::string& error = "") {
  return test::run_in_child([&] {
    for (const char* v : kVars) ::unsetenv(v);
    for (const auto& [k, v] : vars) ::setenv(k, v, 1);
    try {
      return check(rendezvous_from_env()) ? 0 : 1;
    } catch (const std::runtime_error& e) {
      return (!error.empty() && std::string(e.what()).find(error) != std::string::npos) ? 2 : 3;
    }
  });
}

TEST(RendezvousEnv, TorchrunVariables) {
  EXPECT_EQ(from_env({{"RANK", "2"},
                      {"WORLD_SIZE", "4"},
                      {"LOCAL_RANK", "1"},
                      {"MASTER_ADDR", "10.0.0.5"},
                      {"MASTER_PORT", "1234"},
                      {"OMPI_COMM_WORLD_RANK", "0"}},
                     [](const RendezvousInfo& i) {
                       return i.launcher == "torchrun-env" && i.rank == 2 && i.world_size == 4 &&
                              i.local_rank == 1 && i.master_addr == "10.0.0.5" && i.master_port == 1234;
                     }),
            0);
}

TEST(RendezvousEnv, OpenMpiAndSlurmAndNothing) {
  EXPECT_EQ(from_env({{"OMPI_COMM_WORLD_RANK", "1"},
                      {"OMPI_COMM_WORLD_SIZE", "2"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                      {"SLURM_PROCID", "0"}},
                     [](const RendezvousInfo& i) {
                       return i.launcher == "openmpi" && i.rank == 1 && i.world_size == 2 &&
                              i.local_rank == 1 && i.master_port == 29500 && i.master_addr == "127.0.0.1";
                     }),
            0);
  EXPECT_EQ(from_env({{"SLURM_PROCID", "3"},
                      {"SLURM_NTASKS", "8"},
                      {"SLURM_LOCALID", "3"},
                      {"SLURM_LAUNCH_NODE_IPADDR", "10.1.1.1"}},
                     [](const RendezvousInfo& i) {
                       return i.launcher == "slurm" && i.rank == 3 && i.world_size == 8 &&
                              i.local_rank == 3 && i.master_addr == "10.1.1.1";
                     }),
            0);
  EXPECT_EQ(from_env({{"SLURM_PROCID", "0"},
                      {"SLURM_NTASKS", "2"},
                      {"SLURM_LAUNCH_NODE_IPADDR", "10.1.1.1"},
                      {"MASTER_ADDR", "10.2.2.2"}},
                     [](const RendezvousInfo& i) { return i.master_addr == "10.2.2.2"; }),
            0);
  EXPECT_EQ(
      from_env(
          {}, [](const RendezvousInfo& i) { return i.launcher.empty() && i.rank == 0 && i.world_size == 1; }),
      0);
}

TEST(RendezvousEnv, ErrorsNameTheVariable) {
  auto any = [](const RendezvousInfo&) { return true; };
  EXPECT_EQ(from_env({{"RANK", "1"}}, any, "RANK is set but WORLD_SIZE is not"), 2);
  EXPECT_EQ(from_env({{"RANK", "one"}, {"WORLD_SIZE", "2"}}, any, "RANK=one: expected an integer"), 2);
  EXPECT_EQ(from_env({{"RANK", "0"}, {"WORLD_SIZE", "2x"}}, any, "WORLD_SIZE=2x: expected an integer"), 2);
  EXPECT_EQ(from_env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "http"}}, any,
                     "MASTER_PORT=http: expected an integer"),
            2);
  EXPECT_EQ(from_env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}, any,
                     "MASTER_PORT is not a port"),
            2);
  EXPECT_EQ(from_env({{"RANK", "4"}, {"WORLD_SIZE", "4"}}, any, "rank 4 is outside a world of 4"), 2);
  EXPECT_EQ(from_env({{"RANK", "-1"}, {"WORLD_SIZE", "4"}}, any, "rank -1 is outside a world of 4"), 2);
  EXPECT_EQ(from_env({{"RANK", "0"}, {"WORLD_SIZE", "0"}}, any, "the world size is missing or below 1"), 2);
  EXPECT_EQ(from_env({{"OMPI_COMM_WORLD_RANK", "0"}}, any, "the world size is missing or below 1"), 2);
}

// A port that was free a moment ago (bind to 0, read it back, close).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

RendezvousInfo info_for(int rank, int world_size, int port) {
  RendezvousInfo info;
  info.rank = rank;
  info.world_size = world_size;
  info.master_addr = "127.0.0.1";
  info.master_port = port;
  return info;
}

TEST(Rendezvous, AllgatherAndBarrierAmongFourProcesses) {
  const int port = free_port();
  constexpr int kWorld = 4;
  std::vector<pid_t> ranks;
  for (int r = kWorld - 1; r >= 0; --r) {  // rank 0 last: the others must retry until it listens
    ranks.push_back(test::spawn([=] {
      Rendezvous rv(info_for(r, kWorld, port), milliseconds(10000));
      std::string mine = "rank-" + std::to_string(r) + std::string(static_cast<size_t>(r) * 1000, 'x');
      auto all = rv.allgather(mine);
      if (all.size() != kWorld) return 1;
      for (int i = 0; i < kWorld; ++i) {
        if (all[static_cast<size_t>(i)] !=
            "rank-" + std::to_string(i) + std::string(static_cast<size_t>(i) * 1000, 'x')) {
          return 2;
        }
      }
      rv.barrier();
      auto again = rv.allgather(std::to_string(r * r));
      if (again[3] != "9" || again[2] != "4") return 3;
      return rv.rank() == r && rv.world_size() == kWorld ? 0 : 4;
    }));
    if (r == kWorld - 1) ::usleep(100000);
  }
  for (pid_t pid : ranks) EXPECT_EQ(test::wait_exit(pid), 0);
}

TEST(Rendezvous, AWorldOfOneNeedsNoNetwork) {
  Rendezvous rv(info_for(0, 1, 1), milliseconds(100));
  EXPECT_EQ(rv.allgather("solo"), std::vector<std::string>{"solo"});
  EXPECT_NO_THROW(rv.barrier());
}

// A rank whose connects to rank 0 fail asks its retry policy after each one: what failed, where and how
// often; the policy's answer is how long to wait, and giving up ends the rendezvous with that said.
TEST(Rendezvous, ARetryPolicySeesEachFailedConnectAndMayGiveUp) {
  const int port = free_port();  // nobody listens there
  std::vector<Rendezvous::ConnectFailure> seen;
  const auto give_up_after_three =
      [&](const Rendezvous::ConnectFailure& f) -> std::optional<std::chrono::milliseconds> {
    seen.push_back(f);
    if (f.attempts >= 3) return std::nullopt;
    return milliseconds(10);
  };
  try {
    Rendezvous rv(info_for(1, 2, port), milliseconds(5000), give_up_after_three);
    FAIL() << "connected to a port nobody listens on";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("could not connect to rank 0 at 127.0.0.1:" + std::to_string(port) +
                                         " (Connection refused, 3 attempts)"),
              std::string::npos)
        << e.what();
  }
  ASSERT_EQ(seen.size(), 3u);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].attempts, static_cast<int>(i) + 1);
    EXPECT_EQ(seen[i].err, ECONNREFUSED);
    EXPECT_EQ(seen[i].to, "127.0.0.1<" + std::to_string(port) + ">");
  }
}

TEST(Rendezvous, Rank0TimesOutWhenARankNeverShowsUp) {
  const int port = free_port();
  pid_t rank1 = test::spawn([=] {
    Rendezvous rv(info_for(1, 3, port), milliseconds(3000));
    return 0;
  });
  auto start = std::chrono::steady_clock::now();
  std::string error;
  try {
    Rendezvous rv(info_for(0, 3, port), milliseconds(700));  // rank 2 never comes
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_NE(error.find("timed out"), std::string::npos) << error;
  EXPECT_GE(took, milliseconds(600));
  EXPECT_LT(took, milliseconds(3000));
  EXPECT_EQ(test::wait_exit(rank1), 0);
}

TEST(Rendezvous, APeerTimesOutWhenRank0NeverShowsUp) {
  const int port = free_port();
  auto start = std::chrono::steady_clock::now();
  std::string error;
  try {
    Rendezvous rv(info_for(1, 2, port), milliseconds(500));
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_NE(error.find("timed out"), std::string::npos) << error;
  EXPECT_LT(took, milliseconds(2500));
}

TEST(Rendezvous, AllgatherFailsWhenAPeerDies) {
  const int port = free_port();
  pid_t rank1 = test::spawn([=] {
    Rendezvous rv(info_for(1, 2, port), milliseconds(3000));
    return 0;  // leaves before the allgather: its socket closes
  });
  std::string error;
  auto start = std::chrono::steady_clock::now();
  try {
    Rendezvous rv(info_for(0, 2, port), milliseconds(3000));
    rv.allgather("x");
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("rendezvous"), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3000));
  EXPECT_EQ(test::wait_exit(rank1), 0);
}

// --recover shrink: the survivors of a SIGKILLed rank agree on who is dead and where to resume.
// Rank 2 joins, then dies by SIGKILL (its socket closes); ranks 0, 1 and 3 each report the first step
// they had not completed (10 + rank) and must all learn dead = {2} and the smallest step, 10.
TEST(Rendezvous, SurvivorsAgreeThatAKilledRankIsDead) {
  const int port = free_port();
  constexpr int kWorld = 4;
  std::vector<pid_t> survivors;
  pid_t victim = -1;
  for (int r = kWorld - 1; r >= 0; --r) {
    const pid_t pid = test::spawn([=] {
      Rendezvous rv(info_for(r, kWorld, port), milliseconds(10000));
      if (r == 2) ::raise(SIGKILL);
      ::usleep(200000);  // let the victim die first, as a peer's failure precedes the recovery
      const auto start = std::chrono::steady_clock::now();
      // Flags are ANDed (rank 3 lacks bit 1); rank 0's payload reaches everyone.
      const Rendezvous::Survivors agreed = rv.agree_on_survivors(
          10 + static_cast<uint64_t>(r), milliseconds(5000), r == 3 ? 1 : 3, r == 0 ? "id-from-0" : "");
      if (agreed.all_flags != 1 || agreed.payload != "id-from-0") return 4;
      // A closed socket is known at once: nobody waits out the 5 s for the dead rank.
      if (std::chrono::steady_clock::now() - start > milliseconds(3000)) return 3;
      if (agreed.dead != std::vector<int>{2}) return 1;
      return agreed.resume_step == 10 ? 0 : 2;
    });
    (r == 2 ? victim : survivors.emplace_back()) = pid;
  }
  for (pid_t pid : survivors) EXPECT_EQ(test::wait_exit(pid), 0);
  test::wait_exit(victim);
}

// A rank that is alive but never reports (hung, or too slow) is counted dead after the wait.
TEST(Rendezvous, ASilentRankIsCountedDeadAfterTheWait) {
  const int port = free_port();
  std::vector<pid_t> survivors;
  pid_t silent = -1;
  for (int r = 2; r >= 0; --r) {
    const pid_t pid = test::spawn([=] {
      Rendezvous rv(info_for(r, 3, port), milliseconds(10000));
      if (r == 1) {
        ::usleep(2000000);
        return 0;
      }
      const Rendezvous::Survivors agreed = rv.agree_on_survivors(7, milliseconds(500));
      return agreed.dead == std::vector<int>{1} && agreed.resume_step == 7 ? 0 : 1;
    });
    (r == 1 ? silent : survivors.emplace_back()) = pid;
  }
  for (pid_t pid : survivors) EXPECT_EQ(test::wait_exit(pid), 0);
  EXPECT_EQ(test::wait_exit(silent), 0);
}

// Rank 0 hosts the rendezvous: without it the survivors cannot agree, and say why.
TEST(Rendezvous, SurvivorsFailClearlyWhenRank0IsDead) {
  const int port = free_port();
  std::vector<pid_t> peers;
  pid_t root = -1;
  for (int r = 2; r >= 0; --r) {
    const pid_t pid = test::spawn([=] {
      Rendezvous rv(info_for(r, 3, port), milliseconds(10000));
      if (r == 0) ::raise(SIGKILL);
      ::usleep(200000);
      try {
        rv.agree_on_survivors(1, milliseconds(1000));
      } catch (const std::runtime_error& e) {
        return std::string(e.what()).find("rank 0 hosts the rendezvous") != std::string::npos ? 0 : 2;
      }
      return 1;
    });
    (r == 0 ? root : peers.emplace_back()) = pid;
  }
  for (pid_t pid : peers) EXPECT_EQ(test::wait_exit(pid), 0);
  test::wait_exit(root);
}

}  // namespace
}  // namespace ncclfi
