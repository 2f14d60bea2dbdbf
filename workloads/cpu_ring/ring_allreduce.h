// Ring all-reduce over an NCCL net plugin on host memory: reduce-scatter then all-gather, each rank
// sending to the next over one sendComm and receiving from the previous over one recvComm, the way
// NCCL's ring uses the net transport (isend tag = own rank, irecv tag = the previous rank).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ncclfi_net/plugin_loader.h"

namespace ncclfi::cpu_ring {

// Deterministic input: element i of rank r at iteration seq. The expected result is the wrapping
// uint32 sum over ranks, so every element of every result is checkable bit for bit.
uint32_t input_value(int rank, uint64_t index, uint64_t seq);
uint32_t expected_value(int world_size, uint64_t index, uint64_t seq);

// A plugin call failed: which call, and the code it returned.
struct PluginError {
  std::string where;
  ncclResult_t code;
};

// Where this rank's all-reduce stands, for its watchdog to tell (a flight recorder's record of the
// collective in progress): the ring step it is on and which of the step's transfers are still open. In a
// ring every rank waits once one link stops; the rank stuck at the earliest step, on a peer that is past
// it, is where the ring stopped.
struct RingProgress {
  std::atomic<int> step{-1};  // 0-based step of the all-reduce in progress; -1: none
  std::atomic<int> steps{0};
  std::atomic<bool> send_open{false}, recv_open{false};
  // Over the run, how long its steps waited on one side once the other was done: on its sends after its
  // receives were in (the next rank or its own port would not take the data), and on its receives after
  // its sends were out (the previous rank's data was late). A ring runs at its slowest link's pace on
  // every rank, but only the rank whose sends are held back waits on them.
  std::atomic<int64_t> send_tail_ns{0}, recv_tail_ns{0};
};

// One rank's side of the ring: the plugin, its context and the two connections.
struct RingLinks {
  net::LoadedNetPlugin* plugin = nullptr;
  int rank = 0;
  int world_size = 1;
  void* send_comm = nullptr;
  void* recv_comm = nullptr;
  void* send_mh = nullptr;
  void* recv_data_mh = nullptr;
  void* recv_tmp_mh = nullptr;
  RingProgress* progress = nullptr;  // kept up to date when set (the watchdog's)
};

// Runs one all-reduce of `data` in place (`tmp` is scratch of the same size). `progress` is bumped on
// every completed transfer (the watchdog reads it). Returns false and fills *error on a plugin error.
// Instantiated for uint32_t (wrapping sums, checked bit for bit) and float (the training mode's
// gradients).
template <typename T>
bool ring_allreduce(const RingLinks& links, std::vector<T>& data, std::vector<T>& tmp, PluginError* error);

// One message one way over the ring's links (the link test): to the next rank, or from the previous one.
bool send_to_next(const RingLinks& links, const void* data, size_t bytes, PluginError* error);
bool recv_from_prev(const RingLinks& links, void* data, size_t bytes, void* recv_mh, PluginError* error);

// Parses "1M", "64K", "4096", "1G" (binary units). Throws std::invalid_argument.
uint64_t parse_bytes(const std::string& text);

}  // namespace ncclfi::cpu_ring
