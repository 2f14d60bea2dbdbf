// The lines NCCL writes under NCCL_DEBUG=INFO (the default subsystems INIT, BOOTSTRAP and ENV) while it
// makes a communicator, and at the first collective, where NCCL 2.28 and later connect the ring: what an
// operator reads first in a rank's log (which node holds which rank, the rings and channels, the
// transport, how long init took). ncclfi-cpu-ring writes them for the job it stands for: the ranks on
// the nodes their host names say (one GPU and one HCA per rank, local rank i on GPU i and mlx5_i), the IB
// transport between nodes and P2P over NVLink inside one. Formats from NCCL's own sources (2.28.9 and
// 2.30.7; the tag where a format changed is named beside it):
//   misc/cudawrap.cc   cudaDriverVersion %d
//   init.cc            NCCL version %s+cuda%d.%d; Using network %s; ... Init START (2.29.2+: "[Rank %d] "
//                      first); comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d;
//                      Trees [c] d0/d1/d2->rank->up...; P2P Chunksize set to %d; %d coll channels, ...;
//                      ... Init COMPLETE; Init timings - ...
//   graph/rings.cc     Channel %02d/%02d : r0 r1 ... (rank 0 only; each rank printed " %*d" as wide as
//                      the largest)
//   graph/trees.cc     the double binary tree over the nodes (ncclGetDtree)
//   transport/net.cc   Channel %02d/%d : %d[%d] -> %d[%d] [receive|send] via NET/%s/%d/GDRDMA
//   transport/p2p.cc   Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/CUMEM/read (the sender only; read:
//                      NVLink between Ampere or later GPUs)
//   transport/generic.cc  Connected all rings, use ring PXN %d GDR %d
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ncclfi_net/ib_completion_lines.h"

namespace ncclfi::cpu_ring {

// What the lines say about one rank's communicator.
struct InitFacts {
  int rank = 0;
  int nranks = 1;
  net::NcclVersion version = net::kNewestKnownNccl;
  std::string network = "IB";  // the net plugin's name (NCCL's IB transport in the labs' persona)
  uint64_t comm = 0;           // the communicator's address, as %p prints it
  uint64_t comm_id = 0;        // the same on every rank of the job
  double total_s = 0;          // measured: from the start of init to its end
  double bootstrap_s = 0;      // measured: the rendezvous of every rank
  int gpu = 0;                 // the rank's GPU on its node (gpu_on_node)
  // Each rank's node, numbered in the order the nodes first appear (rank order), as NCCL groups the
  // ranks by the host hashes they exchange in the bootstrap. Empty: every rank a node of its own.
  std::vector<int> node_of_rank;

  bool same_node(int a, int b) const;
  int node_count() const;
  std::vector<int> ranks_on_node_of(int r) const;  // in rank order
  int local_rank_of(int r) const;                  // r's index on its node: its GPU and its HCA there
};

// The nodes of ranks whose host names are `hostnames` (InitFacts::node_of_rank).
std::vector<int> nodes_from_host_names(const std::vector<std::string>& hostnames);
// What names this rank's node: NCCL_HOSTID where it is set (NCCL's getHostHash takes it over the host's
// name), else the rank itself: without it each rank stands for a node of its own, as every link of the
// ring imitates the network.
std::string node_key_from_environment(int rank);
// The rank's GPU on its node, known before the bootstrap as NCCL knows its cudaDev: the launcher's local
// rank (RendezvousInfo::local_rank) where the node is named (NCCL_HOSTID), else 0 (a node of its own has
// one GPU).
int gpu_on_node(int local_rank);

// The up and down ranks of `rank` in the double binary tree over `nranks` nodes (graph/trees.cc): the
// first tree, then the second (mirrored for an even count, shifted for an odd one). Over nodes of
// several ranks the tree joins the nodes' first ranks, and each node's ranks hang below its first in a
// chain (graph/connect.cc, the TREE pattern: up and down links on the same GPU).
struct TreeLinks {
  int up = -1;
  int down[3] = {-1, -1, -1};
};
void double_binary_tree(int nranks, int rank, TreeLinks& first, TreeLinks& second);
void rank_trees(const InitFacts& facts, TreeLinks& first, TreeLinks& second);

// The messages of ncclCommInitRank, in NCCL's order, without the "host:pid:tid [dev] NCCL INFO " prefix:
// up to "Init START", before the bootstrap (a rank that waits there for a peer has printed these), then
// the rest, once every rank has joined (total_s and bootstrap_s are read here only).
// The version lines, before NCCL opens its network (whose transport prints its own line, as the net
// plugin does here: "NET/IB : Using ..."), then the rest of the start.
std::vector<std::string> nccl_version_lines(const InitFacts& facts);
std::vector<std::string> nccl_init_start_lines(const InitFacts& facts);
std::vector<std::string> nccl_init_done_lines(const InitFacts& facts);
// The messages of the first collective: each ring channel's receive connection from another node, its
// send connection (to another node, or P2P inside this one), then "Connected all rings".
std::vector<std::string> nccl_connect_lines(const InitFacts& facts);

}  // namespace ncclfi::cpu_ring
