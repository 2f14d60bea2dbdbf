// Targets: rank selection (list, all, seeded random), the per-call match on peer, direction,
// min_bytes and comm, and the mapping from a fault to the points it attaches to.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "ncclfi/fault_kinds.h"
#include "ncclfi/point.h"

namespace ncclfi {
namespace {

Target random_target(int count, uint64_t seed) {
  Target t;
  t.rank_select = Target::RankSelect::kRandom;
  t.random_count = count;
  t.random_seed = seed;
  return t;
}

TEST(TargetRanks, AllSelectsEveryRank) {
  Target t;
  EXPECT_EQ(t.resolve_ranks(4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(t.resolve_ranks(0).empty());
  EXPECT_TRUE(t.matches_rank(3, 4));
  EXPECT_TRUE(t.matches_rank(-1, -1));  // an unknown rank is inside "all"
}

TEST(TargetRanks, ListSelectsExactlyItsRanks) {
  Target t;
  t.rank_select = Target::RankSelect::kList;
  t.ranks = {1, 3};
  EXPECT_EQ(t.resolve_ranks(8), (std::vector<int>{1, 3}));
  EXPECT_TRUE(t.matches_rank(1, 8));
  EXPECT_TRUE(t.matches_rank(3, 8));
  EXPECT_FALSE(t.matches_rank(0, 8));
  EXPECT_FALSE(t.matches_rank(2, 8));
  EXPECT_FALSE(t.matches_rank(-1, 8));
}

TEST(TargetRanks, RandomIsDeterministicPerSeed) {
  for (uint64_t seed : {0ULL, 1ULL, 42ULL, 0xdeadbeefULL}) {
    auto a = random_target(3, seed).resolve_ranks(16);
    auto b = random_target(3, seed).resolve_ranks(16);
    EXPECT_EQ(a, b);
    ASSERT_EQ(a.size(), 3u);
    EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
    EXPECT_EQ(std::set<int>(a.begin(), a.end()).size(), 3u);  // distinct
    for (int r : a) {
      EXPECT_GE(r, 0);
      EXPECT_LT(r, 16);
      EXPECT_TRUE(random_target(3, seed).matches_rank(r, 16));
    }
  }
}

TEST(TargetRanks, RandomDependsOnTheSeedAndCoversRanks) {
  std::set<std::vector<int>> distinct;
  std::set<int> seen;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    auto picked = random_target(2, seed).resolve_ranks(8);
    distinct.insert(picked);
    seen.insert(picked.begin(), picked.end());
  }
  EXPECT_GT(distinct.size(), 10u);  // 28 possible pairs
  EXPECT_EQ(seen.size(), 8u);       // every rank gets picked by some seed
}

TEST(TargetRanks, RandomMoreThanTheWorldSelectsEveryone) {
  EXPECT_EQ(random_target(10, 5).resolve_ranks(4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(random_target(2, 5).resolve_ranks(0).empty());
  EXPECT_TRUE(random_target(2, 5).resolve_ranks(-1).empty());
  EXPECT_FALSE(random_target(2, 5).matches_rank(0, -1));  // world unknown: nothing selected
}

TEST(TargetMatch, RankPeerDirectionMinBytesComm) {
  Target t;
  t.rank_select = Target::RankSelect::kList;
  t.ranks = {1};
  t.peer = 2;
  t.direction = Direction::kRecv;
  t.min_bytes = 1024;
  t.comm = 0;
  CallSite hit{.rank = 1,
               .world_size = 4,
               .comm = 0,
               .op = "irecv",
               .peer = 2,
               .direction = Direction::kRecv,
               .bytes = 1024};
  EXPECT_TRUE(target_matches(t, hit));
  CallSite other_rank = hit;
  other_rank.rank = 0;
  EXPECT_FALSE(target_matches(t, other_rank));
  CallSite other_peer = hit;
  other_peer.peer = 3;
  EXPECT_FALSE(target_matches(t, other_peer));
  CallSite sending = hit;
  sending.direction = Direction::kSend;
  EXPECT_FALSE(target_matches(t, sending));
  CallSite small = hit;
  small.bytes = 1023;
  EXPECT_FALSE(target_matches(t, small));
  CallSite bigger = hit;
  bigger.bytes = 1 << 20;
  EXPECT_TRUE(target_matches(t, bigger));
  CallSite other_comm = hit;
  other_comm.comm = 1;
  EXPECT_FALSE(target_matches(t, other_comm));
}

// verbs: a call on another HCA or port, or on a QP whose port the wrapper never learned, is not hit.
TEST(TargetMatch, DeviceAndPortNarrowToOneHcaPort) {
  Target t;
  t.device = "mlx5_0";
  t.port = 2;
  CallSite hit{.rank = 0, .op = "poll_cq", .device = "mlx5_0", .port = 2};
  EXPECT_TRUE(target_matches(t, hit));
  CallSite port1 = hit;
  port1.port = 1;
  EXPECT_FALSE(target_matches(t, port1));
  CallSite unknown_port = hit;
  unknown_port.port = -1;
  EXPECT_FALSE(target_matches(t, unknown_port));
  CallSite other_hca = hit;
  other_hca.device = "mlx5_1";
  EXPECT_FALSE(target_matches(t, other_hca));
  CallSite no_hca = hit;
  no_hca.device = nullptr;
  EXPECT_FALSE(target_matches(t, no_hca));
  Target any_port;
  any_port.device = "mlx5_0";
  EXPECT_TRUE(target_matches(any_port, port1));
  EXPECT_TRUE(target_matches(Target{}, unknown_port)) << "without device or port, every call as before";
}

TEST(TargetMatch, UnsetFieldsMatchAnything) {
  Target t;
  CallSite site{.rank = 5,
                .world_size = 8,
                .comm = 3,
                .op = "send",
                .peer = 1,
                .direction = Direction::kSend,
                .bytes = 0};
  EXPECT_TRUE(target_matches(t, site));
  EXPECT_TRUE(target_matches(t, CallSite{}));
  Target any_dir;
  any_dir.direction = Direction::kAny;
  site.direction = Direction::kRecv;
  EXPECT_TRUE(target_matches(any_dir, site));
}

TEST(TargetMatch, RandomRanksMatchThroughTheFallback) {
  Target t = random_target(1, 77);
  int chosen = t.resolve_ranks(4).at(0);
  for (int r = 0; r < 4; ++r) {
    CallSite site{.rank = r, .world_size = 4};
    EXPECT_EQ(target_matches(t, site), r == chosen) << r;
  }
}

Fault fault_of(Layer layer, const std::string& kind, std::vector<std::string> ops = {}) {
  Fault f;
  f.id = "f";
  f.layer = layer;
  f.kind = kind;
  f.target.ops = std::move(ops);
  return f;
}

TEST(PointsForFault, DefaultsComeFromTheKind) {
  EXPECT_EQ(points_for_fault(fault_of(Layer::kNet, "corrupt")), (std::vector<std::string>{"net/irecv"}));
  EXPECT_EQ(points_for_fault(fault_of(Layer::kNet, "drop")),
            (std::vector<std::string>{"net/isend", "net/irecv"}));
  EXPECT_EQ(points_for_fault(fault_of(Layer::kNet, "error")),
            (std::vector<std::string>{"net/isend", "net/irecv", "net/test"}));
  EXPECT_EQ(points_for_fault(fault_of(Layer::kNet, "connect_fail")),
            (std::vector<std::string>{"net/connect", "net/accept"}));
  EXPECT_EQ(points_for_fault(fault_of(Layer::kApi, "init_fail")),
            (std::vector<std::string>{"nccl/comm/init"}));
  EXPECT_EQ(points_for_fault(fault_of(Layer::kProc, "stop")), (std::vector<std::string>{"proc/stop"}));
  EXPECT_EQ(points_for_fault(fault_of(Layer::kProc, "kill")), (std::vector<std::string>{"proc/kill"}));
  auto hang = points_for_fault(fault_of(Layer::kApi, "hang"));
  EXPECT_NE(std::find(hang.begin(), hang.end(), "nccl/group/end"), hang.end());
  auto skip = points_for_fault(fault_of(Layer::kApi, "skip"));
  EXPECT_EQ(std::find(skip.begin(), skip.end(), "nccl/group/end"), skip.end());
  EXPECT_TRUE(points_for_fault(fault_of(Layer::kApi, "no-such-kind")).empty());
}

TEST(PointsForFault, OpsNarrowToTheKindsPoints) {
  EXPECT_EQ(points_for_fault(fault_of(Layer::kApi, "error", {"allreduce", "send"})),
            (std::vector<std::string>{"nccl/coll/allreduce", "nccl/p2p/send"}));
  EXPECT_EQ(points_for_fault(fault_of(Layer::kApi, "hang", {"group_end"})),
            (std::vector<std::string>{"nccl/group/end"}));
  // corrupt cannot hit a send: only the recv survives.
  EXPECT_EQ(points_for_fault(fault_of(Layer::kApi, "corrupt", {"send", "recv"})),
            (std::vector<std::string>{"nccl/p2p/recv"}));
  EXPECT_TRUE(points_for_fault(fault_of(Layer::kNet, "corrupt", {"isend"})).empty());
  EXPECT_TRUE(points_for_fault(fault_of(Layer::kNet, "drop", {"bogus"})).empty());
}

TEST(PointsForFault, OpNames) {
  EXPECT_EQ(point_for_op(Layer::kApi, "send"), "nccl/p2p/send");
  EXPECT_EQ(point_for_op(Layer::kApi, "recv"), "nccl/p2p/recv");
  EXPECT_EQ(point_for_op(Layer::kApi, "group_end"), "nccl/group/end");
  EXPECT_EQ(point_for_op(Layer::kApi, "init"), "nccl/comm/init");
  EXPECT_EQ(point_for_op(Layer::kApi, "reducescatter"), "nccl/coll/reducescatter");
  EXPECT_EQ(point_for_op(Layer::kNet, "test"), "net/test");
  EXPECT_EQ(point_for_op(Layer::kProc, "kill"), "proc/kill");
  EXPECT_FALSE(point_for_op(Layer::kNet, "allreduce").has_value());
  EXPECT_FALSE(point_for_op(Layer::kApi, "isend").has_value());
  EXPECT_FALSE(point_for_op(Layer::kProc, "stop2").has_value());
}

TEST(PointsForFault, EveryKindsPointIsACompiledInPoint) {
  auto names = all_point_names();
  for (const FaultKindSpec* kind : fault_kinds()) {
    const FaultKindSpec& spec = *kind;
    EXPECT_FALSE(spec.points.empty()) << spec.kind;
    for (auto point : spec.points) {
      EXPECT_NE(std::find(names.begin(), names.end(), point), names.end()) << spec.kind << " " << point;
    }
  }
}

}  // namespace
}  // namespace ncclfi
