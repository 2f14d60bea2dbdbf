// Communicator tracking: for every communicator the process creates, its rank, size, CUDA device and
// creation index, so faults target ranks correctly even when one process drives several GPUs
// (ncclCommInitAll, or one thread per GPU). Also holds the per-communicator state of faults: the op
// sequence counter, an injected async error, and corruptions waiting for a non-blocking comm.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include <nccl.h>

namespace ncclfi::preload {

struct CommInfo {
  ncclComm_t comm = nullptr;
  int index = -1;  // creation order within the process, from 0
  std::atomic<int> rank{-1};
  std::atomic<int> nranks{-1};
  std::atomic<int> device{-1};
  std::atomic<uint64_t> ops{0};                // op sequence counter (the last seq handed out)
  std::atomic<int> async_error{0};             // an injected ncclResult_t reported by GetAsyncError, 0 = none
  std::mutex pending_mu;                       // guards pending
  std::vector<std::function<void()>> pending;  // run once the non-blocking comm reports ncclSuccess

  uint64_t next_seq() { return ops.fetch_add(1, std::memory_order_relaxed) + 1; }
  bool complete() const {
    return rank.load(std::memory_order_relaxed) >= 0 && nranks.load(std::memory_order_relaxed) > 0 &&
           device.load(std::memory_order_relaxed) >= 0;
  }
};

// Queries NCCL for what a CommInfo does not know yet (rank, count, device), through the real
// functions. Fields NCCL cannot tell yet (a non-blocking comm still initialising) stay unknown.
using CommQuery = void (*)(CommInfo& info);

class CommRegistry {
 public:
  explicit CommRegistry(CommQuery query) : query_(query) {}

  // Records a new communicator with what the caller knows (-1 = unknown; the rest is queried).
  // A comm address seen again after its destruction gets a fresh entry and index.
  //
  // `may_query`: whether NCCL may be asked now. NCCL's queries (ncclCommUserRank, ...) refuse a
  // non-blocking communicator while an operation is in flight, and WARN each time ("Attempt to use
  // communicator before the previous operation returned ncclSuccess"); asked at each poll of a job
  // waiting on ncclCommGetAsyncError, that was hundreds of thousands of lines per rank on an H200. Where
  // an operation may be in flight (a non-blocking init, the poll itself, a teardown) the caller passes
  // false and completes the entry once NCCL has said the comm is settled (complete()).
  CommInfo* add(ncclComm_t comm, int rank, int nranks, int device, bool may_query = true);
  // The entry of `comm`, completing unknown fields by query (when `may_query`); nullptr for a NULL comm.
  // A comm the preload never saw created (made before the preload was initialised) is adopted with a
  // new index.
  CommInfo* lookup(ncclComm_t comm, bool may_query = true);
  // Asks NCCL for what `info` still lacks: call only when the comm has nothing in flight.
  void complete(CommInfo& info) {
    if (!info.complete()) query_(info);
  }
  // Forgets `comm` (after Destroy/Abort). Entries are never freed: work queued on a stream may still
  // refer to one.
  void remove(ncclComm_t comm);
  // The index the next communicator will get.
  int next_index() const { return next_index_.load(std::memory_order_relaxed); }

 private:
  CommQuery query_;
  std::atomic<int> next_index_{0};
  mutable std::shared_mutex mu_;
  std::unordered_map<ncclComm_t, CommInfo*> by_comm_;
};

}  // namespace ncclfi::preload
