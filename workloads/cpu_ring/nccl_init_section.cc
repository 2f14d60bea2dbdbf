#include "nccl_init_section.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace ncclfi::cpu_ring {
namespace {

// Two ring channels, as NCCL builds them for one NIC per node; every rank in order on both.
constexpr int kRingChannels = 2;
// The GPU's PCI bus id (%lx) and NCCL's P2P chunk size over the network (NCCL_P2P_NET_CHUNKSIZE, 128 KiB).
constexpr uint64_t kBusId = 0x18000;
constexpr int kP2pNetChunkSize = 1 << 17;
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
  return format("%s comm %s rank %d nranks %d cudaDev 0 nvmlDev 0 busId %" PRIx64 " commId 0x%" PRIx64,
                kInitFunction, pointer(f.comm).c_str(), f.rank, f.nranks, kBusId, f.comm_id);
}

}  // namespace

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
  lines.push_back(format("comm %s rank %d nRanks %d nNodes %d localRanks 1 localRank 0 MNNVL 0", comm.c_str(),
                         f.rank, f.nranks, f.nranks));
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
  double_binary_tree(f.nranks, f.rank, trees[0], trees[1]);
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
  for (int c = 0; c < kRingChannels; ++c)
    lines.push_back(
        format("Channel %02d/0 : %d[0] -> %d[0] [receive] via NET/%s/0/GDRDMA", c, prev, f.rank, net));
  for (int c = 0; c < kRingChannels; ++c)
    lines.push_back(
        format("Channel %02d/0 : %d[0] -> %d[0] [send] via NET/%s/0/GDRDMA", c, f.rank, next, net));
  lines.push_back("Connected all rings, use ring PXN 0 GDR 1");
  return lines;
}

}  // namespace ncclfi::cpu_ring
