// Process-wide and per-thread state of the preload: whether it is active at all, the fault points,
// the injector, the communicator registry, the re-entrancy guard and the group depth.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <nccl.h>

#include "comm_registry.h"
#include "ncclfi/injector.h"
#include "ncclfi/point.h"
#include "op_call.h"

#define NCCLFI_EXPORT __attribute__((visibility("default")))

namespace ncclfi::preload {

// kFast: no plan and no op trace: every wrapper forwards at once (one load and a branch).
enum class Mode : uint8_t { kUninitialised = 0, kFast = 1, kActive = 2 };
extern std::atomic<Mode> g_mode;

// Reads the plan (through the Injector) on the first NCCL call of the process. Never throws.
Mode initialise();

// True when the wrapper must only forward. The first call initialises.
inline bool fast_path() {
  Mode m = g_mode.load(std::memory_order_acquire);
  if (__builtin_expect(m == Mode::kFast, 1)) return true;
  if (m == Mode::kUninitialised) return initialise() == Mode::kFast;
  return false;
}

Injector& injector();
CommRegistry& comms();
bool trace_ops();
bool time_ops();  // NCCLFI_TIME_OPS: op_time events (op_timing.h)

// The fault points of the API layer.
FaultPoint& op_point(OpKind kind);
FaultPoint& group_end_point();
FaultPoint& comm_init_point();
FaultPoint& comm_abort_point();
FaultPoint& bootstrap_root_point();        // connect() to NCCL's bootstrap root (bootstrap_connect.h)
FaultPoint& bootstrap_rendezvous_point();  // connect() to MASTER_ADDR:MASTER_PORT

// The thread-local re-entrancy guard. NCCL calls its own public names through the PLT (ncclBcast ->
// ncclBroadcast, ncclCommInitAll -> ncclGetUniqueId, ...); those nested calls must reach NCCL
// untouched and uncounted. `nested()` is true when this thread is already inside a wrapper.
class ReentryScope {
 public:
  ReentryScope();
  ~ReentryScope();
  ReentryScope(const ReentryScope&) = delete;
  ReentryScope& operator=(const ReentryScope&) = delete;
  bool nested() const { return nested_; }

 private:
  bool nested_;
};

// Per-thread group state (ncclGroupStart/End nest per thread). Ops inside a group only record work;
// NCCL launches it at the outermost ncclGroupEnd, so corruptions of ops inside a group wait here.
struct GroupState {
  int depth = 0;
  ncclComm_t first_comm = nullptr;  // the first comm used in the group: the rank a group-end fault sees
  // Corruptions to enqueue after the outermost end, with the comm of their op.
  std::vector<std::pair<CommInfo*, std::function<void()>>> deferred;
};
GroupState& group_state();

// The rank of the process from the environment (NCCLFI_RANK, RANK, ...), for calls with no comm.
int env_rank();

}  // namespace ncclfi::preload
