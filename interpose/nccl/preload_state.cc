#include "preload_state.h"

#include <array>
#include <cstdio>
#include <exception>
#include <mutex>

#include "ncclfi/fault_points.h"
#include "real_symbol.h"

namespace ncclfi::preload {

std::atomic<Mode> g_mode{Mode::kUninitialised};

namespace {

FaultPoint g_op_points[kOpKindCount] = {FaultPoint(points::kAllreduce),     FaultPoint(points::kAllgather),
                                        FaultPoint(points::kReduceScatter), FaultPoint(points::kReduce),
                                        FaultPoint(points::kBroadcast),     FaultPoint(points::kAlltoall),
                                        FaultPoint(points::kGather),        FaultPoint(points::kScatter),
                                        FaultPoint(points::kSend),          FaultPoint(points::kRecv)};
FaultPoint g_group_end_point(points::kGroupEnd);
FaultPoint g_comm_init_point(points::kCommInit);
// ncclCommAbort: a hang here is the watchdog thread stuck in teardown, which only the heartbeat monitor sees.
FaultPoint g_comm_abort_point(points::kCommAbort);
FaultPoint g_bootstrap_root_point(points::kBootstrapRoot);
FaultPoint g_bootstrap_rendezvous_point(points::kBootstrapRendezvous);

Injector* g_injector = nullptr;
bool g_trace_ops = false;
bool g_time_ops = false;

// Real query functions: the registry asks NCCL directly, never through our own wrappers.
using QueryFn = ncclResult_t (*)(const ncclComm_t, int*);
RealSymbol<QueryFn> g_user_rank("ncclCommUserRank");
RealSymbol<QueryFn> g_count("ncclCommCount");
RealSymbol<QueryFn> g_cu_device("ncclCommCuDevice");

void query_comm(CommInfo& info) {
  // A nested NCCL call from inside these (ncclCommGetAsyncError) must pass straight through.
  ReentryScope scope;
  int value = -1;
  if (info.rank.load() < 0) {
    if (auto fn = g_user_rank.get(); fn != nullptr && fn(info.comm, &value) == ncclSuccess) info.rank = value;
  }
  if (info.nranks.load() <= 0) {
    if (auto fn = g_count.get(); fn != nullptr && fn(info.comm, &value) == ncclSuccess) info.nranks = value;
  }
  if (info.device.load() < 0) {
    if (auto fn = g_cu_device.get(); fn != nullptr && fn(info.comm, &value) == ncclSuccess)
      info.device = value;
  }
}

__attribute__((tls_model("initial-exec"))) thread_local int t_wrapper_depth = 0;
thread_local GroupState t_group;

}  // namespace

Mode initialise() {
  static std::once_flag once;
  std::call_once(once, [] {
    Mode mode = Mode::kFast;
    try {
      // No plan and no trace: do not even build the injector (it would open the event log).
      const Params& params = Params::get();
      if (params.plan_path.empty() && !params.trace_ops && !params.time_ops) {
        g_mode.store(Mode::kFast, std::memory_order_release);
        return;
      }
      Injector& inj = Injector::instance(Layer::kApi, "preload");
      std::array<FaultPoint*, kOpKindCount + 5> points{};
      for (int i = 0; i < kOpKindCount; ++i) points[static_cast<size_t>(i)] = &g_op_points[i];
      points[kOpKindCount] = &g_group_end_point;
      points[kOpKindCount + 1] = &g_comm_init_point;
      points[kOpKindCount + 2] = &g_comm_abort_point;
      points[kOpKindCount + 3] = &g_bootstrap_root_point;
      points[kOpKindCount + 4] = &g_bootstrap_rendezvous_point;
      inj.install(points);
      g_injector = &inj;
      g_trace_ops = inj.params().trace_ops && inj.events().enabled();
      g_time_ops = inj.params().time_ops && inj.events().enabled();
      if (!inj.inert() || g_trace_ops || g_time_ops) mode = Mode::kActive;
      if (mode == Mode::kActive)
        inj.log("preload active: " + std::to_string(inj.faults().size()) + " api faults");
    } catch (const std::exception& e) {
      // A broken injector must never break the job: stay inert.
      if (!Params::get().quiet) std::fprintf(stderr, "ncclfi preload: disabled: %s\n", e.what());
      mode = Mode::kFast;
    }
    g_mode.store(mode, std::memory_order_release);
  });
  return g_mode.load(std::memory_order_acquire);
}

Injector& injector() {
  return *g_injector;
}
CommRegistry& comms() {
  // Leaked on purpose: NCCL's threads may still poll ncclCommGetAsyncError during static destruction.
  static auto* registry = new CommRegistry(&query_comm);
  return *registry;
}
bool trace_ops() {
  return g_trace_ops;
}
bool time_ops() {
  return g_time_ops;
}

FaultPoint& op_point(OpKind kind) {
  return g_op_points[static_cast<int>(kind)];
}
FaultPoint& group_end_point() {
  return g_group_end_point;
}
FaultPoint& bootstrap_root_point() {
  return g_bootstrap_root_point;
}
FaultPoint& bootstrap_rendezvous_point() {
  return g_bootstrap_rendezvous_point;
}
FaultPoint& comm_init_point() {
  return g_comm_init_point;
}
FaultPoint& comm_abort_point() {
  return g_comm_abort_point;
}

ReentryScope::ReentryScope() : nested_(t_wrapper_depth > 0) {
  ++t_wrapper_depth;
}
ReentryScope::~ReentryScope() {
  --t_wrapper_depth;
}

GroupState& group_state() {
  return t_group;
}

int env_rank() {
  return g_injector != nullptr ? g_injector->params().rank : -1;
}

}  // namespace ncclfi::preload
