// The lines NCCL writes under NCCL_DEBUG=INFO (the default subsystems INIT, BOOTSTRAP and ENV) while it
// makes a communicator, and at the first collective, where NCCL 2.28 and later connect the ring: what an
// operator reads first in a rank's log (which node holds which rank, the rings and channels, the
// transport, how long init took). ncclfi-cpu-ring writes them for the job it stands for: one rank per
// node, each node one GPU and one HCA, the IB transport. Formats from NCCL's own sources (2.28.9 and
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
};

// The up and down ranks of `rank` in the double binary tree over `nranks` nodes (graph/trees.cc): the
// first tree, then the second (mirrored for an even count, shifted for an odd one).
struct TreeLinks {
  int up = -1;
  int down[3] = {-1, -1, -1};
};
void double_binary_tree(int nranks, int rank, TreeLinks& first, TreeLinks& second);

// The messages of ncclCommInitRank, in NCCL's order, without the "host:pid:tid [dev] NCCL INFO " prefix:
// up to "Init START", before the bootstrap (a rank that waits there for a peer has printed these), then
// the rest, once every rank has joined (total_s and bootstrap_s are read here only).
// The version lines, before NCCL opens its network (whose transport prints its own line, as the net
// plugin does here: "NET/IB : Using ..."), then the rest of the start.
std::vector<std::string> nccl_version_lines(const InitFacts& facts);
std::vector<std::string> nccl_init_start_lines(const InitFacts& facts);
std::vector<std::string> nccl_init_done_lines(const InitFacts& facts);
// The messages of the first collective: each ring channel's receive and send connection, then
// "Connected all rings".
std::vector<std::string> nccl_connect_lines(const InitFacts& facts);

}  // namespace ncclfi::cpu_ring
