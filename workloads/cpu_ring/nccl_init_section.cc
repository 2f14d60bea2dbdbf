#include "nccl_init_section.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace ncclfi::cpu_ring {
namespace {

// Two ring channels, as NCCL builds them for one NIC per node; every rank in order on both.
constexpr int kRingChannels = 2;
// NCCL's P2P chunk size over the network (NCCL_P2P_NET_CHUNKSIZE, 128 KiB).
constexpr int kP2pNetChunkSize = 1 << 17;

// The PCI bus id (%lx) of GPU i of a node: the slots of an HGX board, as the labs' node files show them.
uint64_t gpu_bus_id(int gpu) {
  static constexpr uint64_t kBus[] = {0x18000, 0x2a000, 0x3a000, 0x5d000, 0x9a000, 0xab000, 0xba000, 0xdb000};
  return kBus[static_cast<size_t>(gpu) % 8];
}
// What PyTorch calls (ProcessGroupNCCL), which the job stands for.
constexpr const char* kInitFunction = "ncclCommInitRankConfig";
// The CUDA the NCCL build stands with: the toolkit ncclfi is built against and PyTorch's wheels bundle.
constexpr int kCudaMajor = 13, kCudaMinor = 0;

__attribute__((format(printf, 1, 2))) std::string format(const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  return text;
}

// ncclGetBtree: the binary tree over nranks whose root is rank 0.
void binary_tree(int nranks, int rank, int& up, int& down0, int& down1) {
  int bit = 1;
  for (; bit < nranks; bit <<= 1)
    if (bit & rank) break;
  if (rank == 0) {
    up = -1;
    down0 = -1;
    down1 = nranks > 1 ? bit >> 1 : -1;
    return;
  }
  up = (rank ^ bit) | (bit << 1);
  if (up >= nranks) up = rank ^ bit;
  int lowbit = bit >> 1;
  down0 = lowbit == 0 ? -1 : rank - lowbit;
  down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (down1 >= nranks) {
    down1 = lowbit == 0 ? -1 : rank + lowbit;
    lowbit >>= 1;
  }
}

// connect.cc's setTreeDown: children in order, -1 left out, the rest -1.
TreeLinks links_of(int up, int down0, int down1) {
  TreeLinks t;
  t.up = up;
  int n = 0;
  for (const int d : {down0, down1})
    if (d != -1) t.down[n++] = d;
  return t;
}

std::string pointer(uint64_t p) {
  return format("0x%" PRIx64, p);
}

// What Init START and Init COMPLETE say of the communicator.
std::string communicator(const InitFacts& f) {
  const int gpu = f.gpu;
  return format("%s comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %" PRIx64 " commId 0x%" PRIx64,
                kInitFunction, pointer(f.comm).c_str(), f.rank, f.nranks, gpu, gpu, gpu_bus_id(gpu),
                f.comm_id);
}

}  // namespace

bool InitFacts::same_node(int a, int b) const {
  if (node_of_rank.empty()) return a == b;
  return node_of_rank.at(static_cast<size_t>(a)) == node_of_rank.at(static_cast<size_t>(b));
}

int InitFacts::node_count() const {
  if (node_of_rank.empty()) return nranks;
  return 1 + *std::max_element(node_of_rank.begin(), node_of_rank.end());
}

std::vector<int> InitFacts::ranks_on_node_of(int r) const {
  std::vector<int> ranks;
  for (int other = 0; other < nranks; ++other) {
    if (same_node(other, r)) ranks.push_back(other);
  }
  return ranks;
}

int InitFacts::local_rank_of(int r) const {
  const auto ranks = ranks_on_node_of(r);
  return static_cast<int>(std::find(ranks.begin(), ranks.end(), r) - ranks.begin());
}

std::vector<int> nodes_from_host_names(const std::vector<std::string>& hostnames) {
  std::vector<std::string> seen;
  std::vector<int> nodes;
  for (const std::string& name : hostnames) {
    auto it = std::find(seen.begin(), seen.end(), name);
    if (it == seen.end()) it = seen.insert(seen.end(), name);
    nodes.push_back(static_cast<int>(it - seen.begin()));
  }
  return nodes;
}

std::string node_key_from_environment(int rank) {
  if (const char* id = std::getenv("NCCL_HOSTID"); id != nullptr && *id != '\0')
    return std::string("host ") + id;
  return "rank " + std::to_string(rank);
}

int gpu_on_node(int local_rank) {
  const char* id = std::getenv("NCCL_HOSTID");
  if (id == nullptr || *id == '\0') return 0;
  return local_rank >= 0 && local_rank < 64 ? local_rank : 0;
}

void rank_trees(const InitFacts& f, TreeLinks& first, TreeLinks& second) {
  const std::vector<int> chain = f.ranks_on_node_of(f.rank);
  const int index = f.local_rank_of(f.rank);
  const int node = f.node_of_rank.empty() ? f.rank : f.node_of_rank.at(static_cast<size_t>(f.rank));
  // The first rank of each node (nodes in order): the tree's vertices.
  std::vector<int> heads;
  for (int r = 0; r < f.nranks; ++r) {
    if (f.ranks_on_node_of(r).front() == r) heads.push_back(r);
  }
  TreeLinks node_trees[2];
  double_binary_tree(f.node_count(), node, node_trees[0], node_trees[1]);
  for (int t = 0; t < 2; ++t) {
    TreeLinks& out = t == 0 ? first : second;
    out = TreeLinks{};
    if (index > 0) {  // inside the chain
      out.up = chain[static_cast<size_t>(index - 1)];
      if (static_cast<size_t>(index + 1) < chain.size()) out.down[0] = chain[static_cast<size_t>(index + 1)];
      continue;
    }
    const TreeLinks& n = node_trees[t];
    out.up = n.up == -1 ? -1 : heads.at(static_cast<size_t>(n.up));
    int slot = 0;
    if (chain.size() > 1) out.down[slot++] = chain[1];
    for (const int child : n.down) {
      if (child != -1 && slot < 3) out.down[slot++] = heads.at(static_cast<size_t>(child));
    }
  }
}

void double_binary_tree(int nranks, int rank, TreeLinks& first, TreeLinks& second) {
  int u, d0, d1;
  binary_tree(nranks, rank, u, d0, d1);
  first = links_of(u, d0, d1);
  const auto map = [](int r, auto f) { return r == -1 ? -1 : f(r); };
  if (nranks % 2 == 1) {  // shift
    binary_tree(nranks, (rank - 1 + nranks) % nranks, u, d0, d1);
    const auto shift = [nranks](int r) { return (r + 1) % nranks; };
    second = links_of(map(u, shift), map(d0, shift), map(d1, shift));
  } else {  // mirror
    binary_tree(nranks, nranks - 1 - rank, u, d0, d1);
    const auto mirror = [nranks](int r) { return nranks - 1 - r; };
    second = links_of(map(u, mirror), map(d0, mirror), map(d1, mirror));
  }
}

std::vector<std::string> nccl_version_lines(const InitFacts& f) {
  return {format("cudaDriverVersion %d", kCudaMajor * 1000 + kCudaMinor * 10),
          format("NCCL version %d.%d.%d+cuda%d.%d", f.version.major, f.version.minor, f.version.patch,
                 kCudaMajor, kCudaMinor)};
}

std::vector<std::string> nccl_init_start_lines(const InitFacts& f) {
  std::vector<std::string> lines;
  lines.push_back("Using network " + f.network);
  const std::string rank_tag = f.version.before(2, 29, 2) ? "" : format("[Rank %d] ", f.rank);
  lines.push_back(rank_tag + communicator(f) + " - Init START");
  return lines;
}

std::vector<std::string> nccl_init_done_lines(const InitFacts& f) {
  std::vector<std::string> lines;
  const std::string comm = pointer(f.comm);
  lines.push_back(format("comm %s rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0",
                         comm.c_str(), f.rank, f.nranks, f.node_count(),
                         static_cast<int>(f.ranks_on_node_of(f.rank).size()), f.local_rank_of(f.rank)));
  if (f.rank == 0) {
    const int width = std::snprintf(nullptr, 0, "%d", f.nranks - 1);
    for (int c = 0; c < kRingChannels; ++c) {
      std::string line = format("Channel %02d/%02d :", c, kRingChannels);
      for (int r = 0; r < f.nranks; ++r) line += format(" %*d", width, r);
      // dumpLine's buffer is 128 bytes: a longer ring ends in "..." at the 125th character.
      if (line.size() >= 128) line = line.substr(0, 124) + "...";
      lines.push_back(line);
    }
  }
  TreeLinks trees[2];
  rank_trees(f, trees[0], trees[1]);
  std::string tree_line = "Trees";
  for (int c = 0; c < kRingChannels; ++c) {
    const TreeLinks& t = trees[c % 2];
    tree_line += format(" [%d] %d/%d/%d->%d->%d", c, t.down[0], t.down[1], t.down[2], f.rank, t.up);
  }
  lines.push_back(tree_line);
  lines.push_back(format("P2P Chunksize set to %d", kP2pNetChunkSize));
  lines.push_back(
      format("%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels "
             "per peer",
             kRingChannels, kRingChannels, 0, kRingChannels, kRingChannels));
  lines.push_back(communicator(f) + " - Init COMPLETE");
  lines.push_back(
      format("Init timings - %s: rank %d nranks %d total %.2f (kernels %.2f, alloc %.2f, bootstrap %.2f, "
             "allgathers %.2f, topo %.2f, graphs %.2f, connections %.2f, rest %.2f)",
             kInitFunction, f.rank, f.nranks, f.total_s, 0.0, 0.0, f.bootstrap_s, 0.0, 0.0, 0.0, 0.0,
             f.total_s - f.bootstrap_s));
  return lines;
}

std::vector<std::string> nccl_connect_lines(const InitFacts& f) {
  std::vector<std::string> lines;
  if (f.nranks < 2) return lines;
  const int prev = (f.rank - 1 + f.nranks) % f.nranks, next = (f.rank + 1) % f.nranks;
  const char* net = f.network.c_str();
  // [%d] is each rank's GPU on its node; the NET device is the index in the plugin's device list, where
  // each rank's plugin lists its own HCA only ("NET/IB : Using [0]mlx5_1:1/IB"): 0.
  const int me = f.local_rank_of(f.rank), from = f.local_rank_of(prev), to = f.local_rank_of(next);
  if (!f.same_node(prev, f.rank)) {  // a P2P receive prints nothing: p2p.cc writes the send side only
    for (int c = 0; c < kRingChannels; ++c)
      lines.push_back(format("Channel %02d/0 : %d[%d] -> %d[%d] [receive] via NET/%s/0/GDRDMA", c, prev, from,
                             f.rank, me, net));
  }
  for (int c = 0; c < kRingChannels; ++c) {
    if (f.same_node(f.rank, next)) {
      lines.push_back(
          format("Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read", c, f.rank, me, next, to));
    } else {
      lines.push_back(format("Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/%s/0/GDRDMA", c, f.rank, me,
                             next, to, net));
    }
  }
  lines.push_back("Connected all rings, use ring PXN 0 GDR 1");
  return lines;
}

}  // namespace ncclfi::cpu_ring
