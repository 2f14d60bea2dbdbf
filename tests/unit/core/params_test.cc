// Params and rank resolution from the environment. Every case runs in a child process so the test
// process's environment and Params::get()'s cache stay untouched.
#include <cstdlib>

#include <gtest/gtest.h>

#include "ncclfi/params.h"
#include "test_support.h"

namespace ncclfi {
namespace {

constexpr const char* kRankVars[] = {"NCCLFI_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID",
                                     "PMI_RANK"};
constexpr const char* kSizeVars[] = {"NCCLFI_WORLD_SIZE", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE",
                                     "SLURM_NTASKS", "PMI_SIZE"};
constexpr const char* kOtherVars[] = {
    "NCCLFI_PLAN",           "NCCLFI_EVENTS",     "NCCLFI_RUN_DIR",
    "NCCLFI_ATTEMPT",        "NCCLFI_LOG",        "NCCLFI_TRACE_OPS",
    "NCCLFI_NET_INNER",      "NCCLFI_NET_NSOCKS", "NCCLFI_NET_NTHREADS",
    "NCCLFI_NET_SPEED_MBPS", "NCCLFI_NET_INLINE", "NCCLFI_NET_MIN_CHUNK",
    "NCCLFI_NET_PROGRESS",   "LOCAL_RANK",        "OMPI_COMM_WORLD_LOCAL_RANK",
    "SLURM_LOCALID",         "NCCLFI_NODE_RANKS"};

void clear_env() {
  for (const char* v : kRankVars) ::unsetenv(v);
  for (const char* v : kSizeVars) ::unsetenv(v);
  for (const char* v : kOtherVars) ::unsetenv(v);
}

// Runs `check` in a child with a clean environment plus `vars`; the child exits 0 when check() holds.
int with_env(std::vector<std::pair<const char*, const char*>> vars, const std::function<bool()>& check) {
  return test::run_in_child([&] {
    clear_env();
    for (const auto& [k, v] : vars) ::setenv(k, v, 1);
    return check() ? 0 : 1;
  });
}

TEST(Params, RankPrecedence) {
  // Each variable wins over every one after it in the list.
  for (size_t winner = 0; winner < std::size(kRankVars); ++winner) {
    std::vector<std::pair<const char*, const char*>> vars;
    static const char* kValues[] = {"10", "11", "12", "13", "14"};
    for (size_t i = winner; i < std::size(kRankVars); ++i) vars.emplace_back(kRankVars[i], kValues[i]);
    int expected = 10 + static_cast<int>(winner);
    EXPECT_EQ(with_env(vars, [&] { return resolve_rank_from_env() == expected; }), 0) << kRankVars[winner];
  }
  EXPECT_EQ(with_env({}, [] { return resolve_rank_from_env() == -1; }), 0);
}

TEST(Params, BadRankValuesAreIgnored) {
  EXPECT_EQ(with_env({{"NCCLFI_RANK", "x1"}, {"RANK", "3"}}, [] { return resolve_rank_from_env() == 3; }), 0);
  EXPECT_EQ(with_env({{"NCCLFI_RANK", "-2"}, {"RANK", "4"}}, [] { return resolve_rank_from_env() == 4; }), 0);
  EXPECT_EQ(with_env({{"NCCLFI_RANK", ""}, {"OMPI_COMM_WORLD_RANK", "5"}},
                     [] { return resolve_rank_from_env() == 5; }),
            0);
  EXPECT_EQ(with_env({{"RANK", "3abc"}, {"SLURM_PROCID", "6"}}, [] { return resolve_rank_from_env() == 6; }),
            0);
  EXPECT_EQ(with_env({{"RANK", "99999999999999999999"}, {"PMI_RANK", "7"}},
                     [] { return resolve_rank_from_env() == 7; }),
            0);
  EXPECT_EQ(with_env({{"RANK", "4294967296"}}, [] { return resolve_rank_from_env() == -1; }), 0);
  EXPECT_EQ(with_env({{"RANK", "0"}}, [] { return resolve_rank_from_env() == 0; }), 0);
}

TEST(Params, LocalRankAndTheRanksOfTheNode) {
  EXPECT_EQ(
      with_env({},
               [] { return Params::from_env().local_rank == -1 && Params::from_env().node_ranks.empty(); }),
      0);
  EXPECT_EQ(with_env({{"LOCAL_RANK", "1"}, {"SLURM_LOCALID", "3"}},
                     [] { return Params::from_env().local_rank == 1; }),
            0);
  EXPECT_EQ(with_env({{"SLURM_LOCALID", "3"}}, [] { return Params::from_env().local_rank == 3; }), 0);
  EXPECT_EQ(with_env({{"NCCLFI_NODE_RANKS", "2,3"}},
                     [] {
                       return Params::from_env().node_ranks == std::vector<int>{2, 3};
                     }),
            0);
  EXPECT_EQ(with_env({{"NCCLFI_NODE_RANKS", "5"}},
                     [] { return Params::from_env().node_ranks == std::vector<int>{5}; }),
            0);
  // A malformed list names no node at all, rather than part of one.
  for (const char* bad : {"2,x", "2,,3", "-1,2", ",", "2,"}) {
    EXPECT_EQ(with_env({{"NCCLFI_NODE_RANKS", bad}}, [] { return Params::from_env().node_ranks.empty(); }), 0)
        << bad;
  }
}

TEST(Params, WorldSizePrecedence) {
  EXPECT_EQ(with_env({{"WORLD_SIZE", "8"}, {"SLURM_NTASKS", "16"}},
                     [] { return resolve_world_size_from_env() == 8; }),
            0);
  EXPECT_EQ(with_env({{"NCCLFI_WORLD_SIZE", "2"}, {"WORLD_SIZE", "8"}},
                     [] { return resolve_world_size_from_env() == 2; }),
            0);
  EXPECT_EQ(with_env({{"PMI_SIZE", "3"}}, [] { return resolve_world_size_from_env() == 3; }), 0);
  EXPECT_EQ(with_env({}, [] { return resolve_world_size_from_env() == -1; }), 0);
}

TEST(Params, DefaultsWithAnEmptyEnvironment) {
  EXPECT_EQ(with_env({},
                     [] {
                       Params p = Params::from_env();
                       Params d;
                       return p.plan_path.empty() && p.events_path.empty() && p.run_dir.empty() &&
                              p.rank == -1 && p.world_size == -1 && p.attempt == 0 && !p.log &&
                              !p.trace_ops && p.net_nsocks == d.net_nsocks &&
                              p.net_nthreads == d.net_nthreads && p.net_speed_mbps == d.net_speed_mbps &&
                              p.net_inline_bytes == d.net_inline_bytes && p.net_min_chunk == d.net_min_chunk;
                     }),
            0);
}

TEST(Params, EveryVariableIsRead) {
  EXPECT_EQ(with_env({{"NCCLFI_PLAN", "/runs/r1/plan.json"},
                      {"NCCLFI_EVENTS", "/runs/r1/events.jsonl"},
                      {"NCCLFI_RANK", "1"},
                      {"NCCLFI_WORLD_SIZE", "2"},
                      {"NCCLFI_ATTEMPT", "3"},
                      {"NCCLFI_LOG", "1"},
                      {"NCCLFI_TRACE_OPS", "yes"},
                      {"NCCLFI_NET_INNER", "ib"},
                      {"NCCLFI_NET_NSOCKS", "8"},
                      {"NCCLFI_NET_NTHREADS", "4"},
                      {"NCCLFI_NET_SPEED_MBPS", "25000"},
                      {"NCCLFI_NET_INLINE", "256"},
                      {"NCCLFI_NET_MIN_CHUNK", "131072"},
                      {"NCCLFI_NET_PROGRESS", "helpers"}},
                     [] {
                       Params p = Params::from_env();
                       return p.plan_path == "/runs/r1/plan.json" &&
                              p.events_path == "/runs/r1/events.jsonl" && p.run_dir == "/runs/r1" &&
                              p.rank == 1 && p.world_size == 2 && p.attempt == 3 && p.log && p.trace_ops &&
                              p.net_inner == "ib" && p.net_nsocks == 8 && p.net_nthreads == 4 &&
                              p.net_speed_mbps == 25000 && p.net_inline_bytes == 256 &&
                              p.net_min_chunk == 131072 && p.net_progress == "helpers";
                     }),
            0);
}

TEST(Params, RunDirAndFlagsAndClamping) {
  EXPECT_EQ(with_env({{"NCCLFI_PLAN", "plan.json"}, {"NCCLFI_LOG", "0"}, {"NCCLFI_TRACE_OPS", "false"}},
                     [] {
                       Params p = Params::from_env();
                       return p.run_dir == "." && !p.log && !p.trace_ops;
                     }),
            0);
  EXPECT_EQ(with_env({{"NCCLFI_PLAN", "/a/plan.json"}, {"NCCLFI_RUN_DIR", "/b"}},
                     [] { return Params::from_env().run_dir == "/b"; }),
            0);
  EXPECT_EQ(
      with_env({{"NCCLFI_NET_NSOCKS", "1000"}, {"NCCLFI_NET_MIN_CHUNK", "1"}, {"NCCLFI_NET_SPEED_MBPS", "x"}},
               [] {
                 Params p = Params::from_env();
                 return p.net_nsocks == 64 && p.net_min_chunk == 4096 && p.net_speed_mbps == 100000;
               }),
      0);
}

TEST(Params, GetReadsOnce) {
  EXPECT_EQ(with_env({{"NCCLFI_RANK", "2"}},
                     [] {
                       const Params& first = Params::get();
                       ::setenv("NCCLFI_RANK", "5", 1);
                       const Params& second = Params::get();
                       return &first == &second && second.rank == 2 && Params::from_env().rank == 5;
                     }),
            0);
}

}  // namespace
}  // namespace ncclfi
