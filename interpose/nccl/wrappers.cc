// The exported NCCL entry points. Every wrapper does the same steps: the real function resolved once
// (RTLD_NEXT), the fast path (no plan, no trace: forward at once), else the slow path in intercept.cc
// (re-entrancy guard, comm lookup, point check, act or forward). Arguments reach NCCL unchanged.
#include <nccl.h>

#include <string_view>

#include "api_table.h"
#include "bootstrap_connect.h"
#include "env_reads.h"
#include "intercept.h"
#include "ncclfi/shared_gpu.h"
#include "op_call.h"
#include "preload_state.h"
#include "real_symbol.h"

using ncclfi::preload::OpCall;
using ncclfi::preload::OpKind;

// Resolves the real `name` into `fn`, or returns ncclInvalidUsage when this NCCL lacks it.
#define NCCLFI_REAL(name)                                                       \
  static ::ncclfi::preload::RealSymbol<decltype(&name)> ncclfi_real_sym(#name); \
  auto fn = ncclfi_real_sym.get();                                              \
  if (__builtin_expect(fn == nullptr, 0)) return ::ncclfi::preload::missing_symbol(#name)

#define NCCLFI_DEFINE_OP(name, params, args, describe)                                           \
  extern "C" NCCLFI_EXPORT ncclResult_t name params {                                            \
    NCCLFI_REAL(name);                                                                           \
    if (::ncclfi::preload::fast_path()) return fn args;                                          \
    return ::ncclfi::preload::intercept_op(describe, [&]() -> ncclResult_t { return fn args; }); \
  }

#define NCCLFI_DEFINE_PASSTHROUGH(name, params, args) \
  extern "C" NCCLFI_EXPORT ncclResult_t name params { \
    NCCLFI_REAL(name);                                \
    return fn args;                                   \
  }

NCCLFI_OPS(NCCLFI_DEFINE_OP)
NCCLFI_PASSTHROUGH(NCCLFI_DEFINE_PASSTHROUGH)

namespace {
using ncclfi::preload::fast_path;
using ncclfi::preload::InitCall;
using ncclfi::preload::intercept_init;
using ncclfi::preload::intercept_teardown;
}  // namespace

// ---- groups and the async error poll

extern "C" NCCLFI_EXPORT ncclResult_t ncclGroupStart() {
  NCCLFI_REAL(ncclGroupStart);
  if (fast_path()) return fn();
  return ncclfi::preload::intercept_group_start([&]() -> ncclResult_t { return fn(); });
}

extern "C" NCCLFI_EXPORT ncclResult_t ncclGroupEnd() {
  NCCLFI_REAL(ncclGroupEnd);
  if (fast_path()) return fn();
  return ncclfi::preload::intercept_group_end([&]() -> ncclResult_t { return fn(); }, false);
}

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 22, 0)
extern "C" NCCLFI_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  NCCLFI_REAL(ncclGroupSimulateEnd);
  if (fast_path()) return fn(simInfo);
  return ncclfi::preload::intercept_group_end([&]() -> ncclResult_t { return fn(simInfo); }, true);
}
#endif

extern "C" NCCLFI_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  NCCLFI_REAL(ncclCommGetAsyncError);
  if (fast_path()) return fn(comm, asyncError);
  return ncclfi::preload::intercept_get_async_error(comm, asyncError,
                                                    [&]() -> ncclResult_t { return fn(comm, asyncError); });
}

// ---- communicator constructors
// Each writes what NCCL read from the environment so far when it returns (env_reads.h): most of NCCL's
// variables are read while a communicator is made, and a rank a fault kills later never reaches exit.

extern "C" NCCLFI_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                                       int rank) {
  NCCLFI_REAL(ncclCommInitRank);
  ::ncclfi::preload::WriteEnvReadsOnReturn env_reads_written;
  if (fast_path()) return fn(comm, nranks, commId, rank);
  ::ncclfi::preload::note_nccl_bootstrap_root(&commId, sizeof commId);
  InitCall call{"ncclCommInitRank", rank, nranks, nullptr, comm, 1, nullptr};
  return intercept_init(call, [&]() -> ncclResult_t { return fn(comm, nranks, commId, rank); });
}

extern "C" NCCLFI_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                                             ncclUniqueId commId, int rank,
                                                             ncclConfig_t* config) {
  NCCLFI_REAL(ncclCommInitRankConfig);
  ::ncclfi::preload::WriteEnvReadsOnReturn env_reads_written;
  if (fast_path()) return fn(comm, nranks, commId, rank, config);
  ::ncclfi::preload::note_nccl_bootstrap_root(&commId, sizeof commId);
  InitCall call{"ncclCommInitRankConfig", rank, nranks, nullptr, comm, 1, nullptr};
  return intercept_init(call, [&]() -> ncclResult_t { return fn(comm, nranks, commId, rank, config); });
}

extern "C" NCCLFI_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  NCCLFI_REAL(ncclCommInitAll);
  ::ncclfi::preload::WriteEnvReadsOnReturn env_reads_written;
  if (fast_path()) return fn(comm, ndev, devlist);
  InitCall call{"ncclCommInitAll", 0, ndev, nullptr, comm, ndev > 0 ? ndev : 0, devlist};
  return intercept_init(call, [&]() -> ncclResult_t { return fn(comm, ndev, devlist); });
}

extern "C" NCCLFI_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                                    ncclConfig_t* config) {
  NCCLFI_REAL(ncclCommSplit);
  ::ncclfi::preload::WriteEnvReadsOnReturn env_reads_written;
  if (fast_path()) return fn(comm, color, key, newcomm, config);
  InitCall call{"ncclCommSplit", -1, -1, comm, newcomm, 1, nullptr};
  return intercept_init(call, [&]() -> ncclResult_t { return fn(comm, color, key, newcomm, config); });
}

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 23, 0)
extern "C" NCCLFI_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                               int nId, ncclUniqueId* commIds,
                                                               ncclConfig_t* config) {
  NCCLFI_REAL(ncclCommInitRankScalable);
  ::ncclfi::preload::WriteEnvReadsOnReturn env_reads_written;
  if (fast_path()) return fn(newcomm, nranks, myrank, nId, commIds, config);
  for (int i = 0; commIds != nullptr && i < nId; ++i)
    ::ncclfi::preload::note_nccl_bootstrap_root(&commIds[i], sizeof commIds[i]);
  InitCall call{"ncclCommInitRankScalable", myrank, nranks, nullptr, newcomm, 1, nullptr};
  return intercept_init(call,
                        [&]() -> ncclResult_t { return fn(newcomm, nranks, myrank, nId, commIds, config); });
}
#endif

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
extern "C" NCCLFI_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList,
                                                     int excludeRanksCount, ncclComm_t* newcomm,
                                                     ncclConfig_t* config, int shrinkFlags) {
  NCCLFI_REAL(ncclCommShrink);
  ::ncclfi::preload::WriteEnvReadsOnReturn env_reads_written;
  if (fast_path()) return fn(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  InitCall call{"ncclCommShrink", -1, -1, comm, newcomm, 1, nullptr};
  return intercept_init(call, [&]() -> ncclResult_t {
    return fn(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  });
}
#endif

// ---- teardown

// What NCCL read since the communicator was made (2.28 connects lazily, at the first collective, and
// reads NCCL_SHM_DISABLE, NCCL_IB_* there) is written on the way in too: ncclfi-workload gives a wedged
// ncclCommAbort 0.5 s and then _Exits, which on a GPU lost those reads, never returning.
#define NCCLFI_DEFINE_TEARDOWN(name, params, args)                                 \
  extern "C" NCCLFI_EXPORT ncclResult_t name params {                              \
    NCCLFI_REAL(name);                                                             \
    ::ncclfi::preload::write_env_reads();                                          \
    ::ncclfi::preload::WriteEnvReadsOnReturn env_reads_written;                    \
    if (fast_path()) return fn args;                                               \
    return intercept_teardown(comm, std::string_view(#name) != "ncclCommFinalize", \
                              std::string_view(#name) == "ncclCommAbort",          \
                              [&]() -> ncclResult_t { return fn args; });          \
  }
NCCLFI_TEARDOWN_BASE(NCCLFI_DEFINE_TEARDOWN)

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 7)
NCCLFI_DEFINE_PASSTHROUGH(ncclCommRevoke, (ncclComm_t comm, int revokeFlags), (comm, revokeFlags))
#endif

// ---- shared-GPU mode

// Before the program's main (and so before CUDA or an interpreter reads the environment): a rank that
// a launcher such as torchrun started in ncclfi's shared-GPU mode becomes a host of its own on its GPU,
// and a process of a generation the launcher restarted goes to that generation's MPS daemon
// (ncclfi/shared_gpu.h). Does nothing unless the harness set NCCLFI_SHARED_GPUS or NCCLFI_MPS_PIPE_BASE.
__attribute__((constructor)) static void ncclfi_apply_shared_gpu_env() {
  ncclfi::apply_shared_gpu_env_from_environment();
  ncclfi::apply_mps_generation_from_environment();
}
