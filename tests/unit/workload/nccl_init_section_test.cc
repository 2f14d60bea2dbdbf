// The INFO lines ncclfi-cpu-ring writes for its communicator (workloads/cpu_ring/nccl_init_section.h),
// against NCCL's sources: the formats of init.cc, graph/rings.cc, transport/net.cc and
// transport/generic.cc, and the double binary tree of graph/trees.cc.
#include "nccl_init_section.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include <gtest/gtest.h>

namespace ncclfi::cpu_ring {
namespace {

InitFacts facts(int rank, int nranks, net::NcclVersion version = {2, 28, 9}) {
  InitFacts f;
  f.rank = rank;
  f.nranks = nranks;
  f.version = version;
  f.comm = 0x55d0c0a0b0c0ULL;
  f.comm_id = 0x2f4f6a1c3b5d7e9fULL;
  f.total_s = 1.25;
  f.bootstrap_s = 1.0;
  return f;
}

// The whole of ncclCommInitRank's section.
std::vector<std::string> nccl_init_lines(const InitFacts& f) {
  auto lines = nccl_version_lines(f);
  const auto start = nccl_init_start_lines(f);
  lines.insert(lines.end(), start.begin(), start.end());
  const auto done = nccl_init_done_lines(f);
  lines.insert(lines.end(), done.begin(), done.end());
  return lines;
}

bool has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(NcclInitSection, Rank0OfFourAsNccl2_28_9PrintsIt) {
  EXPECT_EQ(nccl_init_start_lines(facts(0, 4)).back().substr(0, 40),
            "ncclCommInitRankConfig comm 0x55d0c0a0b0");
  const auto lines = nccl_init_lines(facts(0, 4));
  const std::vector<std::string> expected = {
      "cudaDriverVersion 13000",
      "NCCL version 2.28.9+cuda13.0",
      "Using network IB",
      "ncclCommInitRankConfig comm 0x55d0c0a0b0c0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId "
      "0x2f4f6a1c3b5d7e9f - Init START",
      "comm 0x55d0c0a0b0c0 rank 0 nRanks 4 nNodes 4 localRanks 1 localRank 0 MNNVL 0",
      "Channel 00/02 : 0 1 2 3",
      "Channel 01/02 : 0 1 2 3",
      "Trees [0] 2/-1/-1->0->-1 [1] -1/-1/-1->0->1",
      "P2P Chunksize set to 131072",
      "2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer",
      "ncclCommInitRankConfig comm 0x55d0c0a0b0c0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId "
      "0x2f4f6a1c3b5d7e9f - Init COMPLETE",
      "Init timings - ncclCommInitRankConfig: rank 0 nranks 4 total 1.25 (kernels 0.00, alloc 0.00, "
      "bootstrap "
      "1.00, allgathers 0.00, topo 0.00, graphs 0.00, connections 0.00, rest 0.25)"};
  EXPECT_EQ(lines, expected);
}

TEST(NcclInitSection, OnlyRank0PrintsTheRingsAndNewerReleasesTagInitStart) {
  const auto lines = nccl_init_lines(facts(2, 4, {2, 30, 7}));
  for (const auto& l : lines) EXPECT_EQ(l.rfind("Channel", 0), std::string::npos) << l;
  EXPECT_TRUE(has(lines, "NCCL version 2.30.7+cuda13.0"));
  // From 2.29.2 Init START begins with the rank (init.cc); Init COMPLETE does not.
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind("[Rank 2] ncclCommInitRankConfig comm ", 0) == 0 &&
           l.find("- Init START") != std::string::npos;
  }));
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind("ncclCommInitRankConfig comm ", 0) == 0 && l.find("- Init COMPLETE") != std::string::npos;
  }));
  // The ring's numbers are as wide as the largest rank (dumpLine's " %*d").
  const auto wide = nccl_init_lines(facts(0, 12));
  EXPECT_TRUE(has(wide, "Channel 00/02 :  0  1  2  3  4  5  6  7  8  9 10 11")) << wide.at(5);
  // A ring longer than dumpLine's 128-byte buffer is cut with "...".
  const std::string ring64 = nccl_init_lines(facts(0, 64)).at(5);
  EXPECT_EQ(ring64.size(), 127U) << ring64;
  EXPECT_EQ(ring64.substr(0, 28), "Channel 00/02 :  0  1  2  3 ");
  EXPECT_EQ(ring64.substr(124), "...");
}

TEST(NcclInitSection, ConnectionsAreTheRingNeighboursThenConnectedAllRings) {
  EXPECT_EQ(nccl_connect_lines(facts(0, 4)),
            (std::vector<std::string>{"Channel 00/0 : 3[0] -> 0[0] [receive] via NET/IB/0/GDRDMA",
                                      "Channel 01/0 : 3[0] -> 0[0] [receive] via NET/IB/0/GDRDMA",
                                      "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
                                      "Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
                                      "Connected all rings, use ring PXN 0 GDR 1"}));
  EXPECT_TRUE(nccl_connect_lines(facts(0, 1)).empty());
}

InitFacts two_nodes_of_two(int rank) {
  InitFacts f = facts(rank, 4);
  f.gpu = rank % 2;
  f.node_of_rank = nodes_from_host_names({"gpu-node05", "gpu-node05", "gpu-node12", "gpu-node12"});
  return f;
}

TEST(NcclInitSection, NodesOfTwoRanksAsNcclPrintsThem) {
  EXPECT_EQ(nodes_from_host_names({"a", "b", "a", "c"}), (std::vector<int>{0, 1, 0, 2}));
  const auto rank1 = nccl_init_lines(two_nodes_of_two(1));
  EXPECT_TRUE(has(rank1, "comm 0x55d0c0a0b0c0 rank 1 nRanks 4 nNodes 2 localRanks 2 localRank 1 MNNVL 0"));
  // Local rank 1 is the node's second GPU.
  EXPECT_TRUE(
      has(rank1,
          "ncclCommInitRankConfig comm 0x55d0c0a0b0c0 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 2a000 commId "
          "0x2f4f6a1c3b5d7e9f - Init COMPLETE"));
  // The trees join the nodes' first ranks; each node's second rank hangs below its first (a 2x2 job's
  // trees, as NCCL prints a 2x8 job's: "Trees [0] 1/8/-1->0->-1 [1] 1/-1/-1->0->8").
  EXPECT_TRUE(has(nccl_init_lines(two_nodes_of_two(0)), "Trees [0] 1/2/-1->0->-1 [1] 1/-1/-1->0->2"));
  EXPECT_TRUE(has(rank1, "Trees [0] -1/-1/-1->1->0 [1] -1/-1/-1->1->0"));
  EXPECT_TRUE(has(nccl_init_lines(two_nodes_of_two(2)), "Trees [0] 3/-1/-1->2->0 [1] 3/0/-1->2->-1"));
  // The ring is the same: only rank 0 prints it.
  EXPECT_TRUE(has(nccl_init_lines(two_nodes_of_two(0)), "Channel 00/02 : 0 1 2 3"));
}

TEST(NcclInitSection, InsideANodeTheRingGoesP2pAndBetweenNodesOverEachRanksOwnHca) {
  // Rank 0 receives from the other node (rank 3, its GPU 1) on its HCA and sends to GPU 1 beside it;
  // the P2P receive prints nothing (p2p.cc writes the sender's line only).
  EXPECT_EQ(nccl_connect_lines(two_nodes_of_two(0)),
            (std::vector<std::string>{"Channel 00/0 : 3[1] -> 0[0] [receive] via NET/IB/0/GDRDMA",
                                      "Channel 01/0 : 3[1] -> 0[0] [receive] via NET/IB/0/GDRDMA",
                                      "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
                                      "Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
                                      "Connected all rings, use ring PXN 0 GDR 1"}));
  EXPECT_EQ(nccl_connect_lines(two_nodes_of_two(1)),
            (std::vector<std::string>{"Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/0/GDRDMA",
                                      "Channel 01/0 : 1[1] -> 2[0] [send] via NET/IB/0/GDRDMA",
                                      "Connected all rings, use ring PXN 0 GDR 1"}));
}

TEST(NcclInitSection, ANodeIsNcclHostidElseTheRankAlone) {
  ::unsetenv("NCCL_HOSTID");
  EXPECT_NE(node_key_from_environment(0), node_key_from_environment(1));
  EXPECT_EQ(gpu_on_node(1), 0);  // no named node: a node of its own, one GPU
  ::setenv("NCCL_HOSTID", "gpu-node05", 1);
  EXPECT_EQ(node_key_from_environment(0), node_key_from_environment(1));
  EXPECT_EQ(gpu_on_node(1), 1);
  EXPECT_EQ(gpu_on_node(64), 0);
  ::unsetenv("NCCL_HOSTID");
}

// Each tree of the pair is one tree over all ranks: one root, every other rank's parent lists it as a
// child, and no rank is its own parent. Checked for even (mirrored) and odd (shifted) counts.
TEST(NcclInitSection, BothTreesAreTreesOverEveryRank) {
  for (int n : {2, 3, 4, 5, 7, 8, 16}) {
    std::vector<TreeLinks> t0(static_cast<size_t>(n)), t1(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r)
      double_binary_tree(n, r, t0[static_cast<size_t>(r)], t1[static_cast<size_t>(r)]);
    for (const auto* trees : {&t0, &t1}) {
      int roots = 0;
      for (int r = 0; r < n; ++r) {
        const TreeLinks& t = (*trees)[static_cast<size_t>(r)];
        if (t.up == -1) {
          ++roots;
          continue;
        }
        ASSERT_NE(t.up, r);
        const TreeLinks& parent = (*trees)[static_cast<size_t>(t.up)];
        EXPECT_TRUE(std::count(std::begin(parent.down), std::end(parent.down), r) == 1)
            << "n " << n << ": rank " << r << " is not a child of its parent " << t.up;
      }
      EXPECT_EQ(roots, 1) << "n " << n;
    }
  }
  // graph/trees.cc's illustration cut to 8 ranks: 4's children are 2 and 6, and its parent, 8 being out of
  // bounds, is 0.
  TreeLinks a, b;
  double_binary_tree(8, 4, a, b);
  EXPECT_EQ(a.down[0], 2);
  EXPECT_EQ(a.down[1], 6);
  EXPECT_EQ(a.up, 0);
  // An odd count: the second tree is the first shifted by one rank (ncclGetDtree). Worked from trees.cc by
  // hand for rank 0 of 3: in the second tree its parent is 1 and its one child 2.
  double_binary_tree(3, 0, a, b);
  EXPECT_EQ(b.up, 1);
  EXPECT_EQ(b.down[0], 2);
  EXPECT_EQ(b.down[1], -1);
}

}  // namespace
}  // namespace ncclfi::cpu_ring
