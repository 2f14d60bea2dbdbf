#include "recovery.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace ncclfi::workload {
namespace {

// Values of nccl.h 2.27+ (these headers may be older than the NCCL the process loads).
constexpr int kShrinkDefault = 0x00;
constexpr int kShrinkAbort = 0x01;

using RevokeFn = ncclResult_t (*)(ncclComm_t, int);
using ShrinkFn = ncclResult_t (*)(ncclComm_t, int*, int, ncclComm_t*, ncclConfig_t*, int);

// Whether libnccl itself exports `name`: an interposer (ncclfi's preload) may define it for any NCCL and
// forward to a function the library lacks, so the library is asked, not the process.
bool nccl_has(const char* name) {
  void* nccl = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
  if (nccl == nullptr) return dlsym(RTLD_DEFAULT, name) != nullptr;
  const bool has = dlsym(nccl, name) != nullptr;
  dlclose(nccl);
  return has;
}

// Called through the process's first definition (RTLD_DEFAULT), so an interposer sees the calls.
template <typename Fn>
Fn nccl_fn(const char* name) {
  return nccl_has(name) ? reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name)) : nullptr;
}
RevokeFn revoke_fn() {
  static const auto fn = nccl_fn<RevokeFn>("ncclCommRevoke");
  return fn;
}
ShrinkFn shrink_fn() {
  static const auto fn = nccl_fn<ShrinkFn>("ncclCommShrink");
  return fn;
}

int64_t now_ns();
ncclResult_t settle(ncclComm_t comm, ncclResult_t result, int64_t limit);

// Bit 0 of a survivor's flags at the agreement: its parent communicator is clean enough to shrink.
constexpr uint64_t kParentClean = 1;

// The survivors' new communicator from a unique id rank 0 drew (the agreement's payload).
ncclResult_t reinit(const std::string& id_blob, int nranks, int rank, ncclComm_t& out, int64_t limit) {
  if (id_blob.size() != sizeof(ncclUniqueId)) return ncclInternalError;
  ncclUniqueId id{};
  std::memcpy(&id, id_blob.data(), sizeof(id));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t r = ncclCommInitRankConfig(&out, nranks, id, rank, &config);
  if (out == nullptr) return r == ncclSuccess ? ncclInternalError : r;
  return settle(out, r, limit);
}

int64_t now_ns() {
  return Clock::mono_ns();
}

// Polls a non-blocking communicator until its state is no longer ncclInProgress, or `limit` passes
// (then ncclInProgress comes back).
ncclResult_t settle(ncclComm_t comm, ncclResult_t result, int64_t limit) {
  while (result == ncclInProgress && now_ns() < limit) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    ncclResult_t state = ncclSuccess;
    const ncclResult_t query = ncclCommGetAsyncError(comm, &state);
    result = query != ncclSuccess ? query : state;
  }
  return result;
}

// ncclCommAbort can wait on a wedged peer: bounded, and left running in the background past `wait_s`.
void abort_bounded(ncclComm_t comm, double wait_s) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([comm, done] {
    ncclCommAbort(comm);
    done->store(true);
  }).detach();
  const int64_t limit = now_ns() + static_cast<int64_t>(wait_s * 1e9);
  while (!done->load() && now_ns() < limit) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

std::string nccl_error(const char* call, ncclResult_t r) {
  return std::string(call) + ": " + ncclGetErrorString(r) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

}  // namespace

RecoveryApi recovery_api() {
  return {shrink_fn() != nullptr, revoke_fn() != nullptr};
}

RecoveryResult shrink_to_survivors(Membership& m, Rendezvous& rendezvous, uint64_t next_step,
                                   const WorkloadArgs& args) {
  RecoveryResult out;
  const int64_t started = now_ns();
  const int64_t limit = started + static_cast<int64_t>(args.rdzv_timeout_s * 1e9);
  if (shrink_fn() == nullptr) {
    out.error = "this NCCL has no ncclCommShrink (NCCL 2.27 or newer needed)";
    return out;
  }
  // Revoke first where NCCL has it: it ends the in-flight kernels and quiesces the communicator so the
  // shrink can run in its default mode. Its settled state may well be the peer's error: that is
  // expected here and does not stop the recovery.
  ncclResult_t state = ncclSuccess;
  if (revoke_fn() != nullptr) {
    const ncclResult_t r = revoke_fn()(m.comm, 0);
    out.revoked = r == ncclSuccess || r == ncclInProgress;
    state = r == ncclInProgress ? settle(m.comm, r, limit) : r;
  } else {
    ncclResult_t async = ncclSuccess;
    const ncclResult_t query = ncclCommGetAsyncError(m.comm, &async);
    state = query != ncclSuccess ? query : async;
  }
  if (state != ncclSuccess) out.parent_error = ncclGetErrorString(state);
  // Rank 0 draws the id a re-created communicator would need, so one agreement settles either way.
  std::string id_blob;
  if (m.job_rank() == 0) {
    ncclUniqueId id{};
    if (ncclGetUniqueId(&id) == ncclSuccess) id_blob.assign(reinterpret_cast<const char*>(&id), sizeof(id));
  }
  Rendezvous::Survivors survivors;
  try {
    survivors = rendezvous.agree_on_survivors(
        next_step, std::chrono::milliseconds(static_cast<int64_t>(args.recover_wait_s * 1000)),
        out.parent_error.empty() ? kParentClean : 0, id_blob);
  } catch (const std::exception& error) {
    out.error = std::string("cannot agree on the survivors: ") + error.what();
    return out;
  }
  out.resume_step = survivors.resume_step;
  out.excluded = survivors.dead;
  if (std::find(survivors.dead.begin(), survivors.dead.end(), m.job_rank()) != survivors.dead.end()) {
    out.error = "rank 0 counted this rank dead (it reported after --recover-wait-s)";
    return out;
  }
  // The exclude list is in the current communicator's ranks; every survivor passes the same one.
  std::vector<int> exclude;
  std::vector<int> members;
  for (size_t r = 0; r < m.members.size(); ++r) {
    const bool dead =
        std::find(survivors.dead.begin(), survivors.dead.end(), m.members[r]) != survivors.dead.end();
    if (dead) {
      exclude.push_back(static_cast<int>(r));
    } else {
      members.push_back(m.members[r]);
    }
  }
  if (exclude.empty()) {
    out.error = "every rank reported back: no rank is dead, so there is nothing to shrink away";
    return out;
  }
  int new_rank = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] == m.job_rank()) new_rank = static_cast<int>(i);
  }
  if ((survivors.all_flags & kParentClean) == 0) {
    // Every survivor takes the same path: some parent would refuse the shrink, so none tries it.
    out.method = "reinit";
    abort_bounded(m.comm, args.abort_wait_s);
    ncclComm_t fresh = nullptr;
    const ncclResult_t r =
        reinit(survivors.payload, static_cast<int>(members.size()), new_rank, fresh, limit);
    if (r != ncclSuccess) {
      out.error = nccl_error("ncclCommInitRankConfig (the survivors' new communicator)", r);
      m.comm = fresh;
      return out;
    }
    m.comm = fresh;
    m.rank = new_rank;
    m.members = members;
    out.ms = static_cast<double>(now_ns() - started) / 1e6;
    return out;
  }
  out.method = "shrink";
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t child = nullptr;
  const int flags = out.revoked ? kShrinkDefault : kShrinkAbort;
  ncclResult_t r =
      shrink_fn()(m.comm, exclude.data(), static_cast<int>(exclude.size()), &child, &config, flags);
  if (r != ncclSuccess && r != ncclInProgress) {
    out.error = nccl_error("ncclCommShrink", r);
    return out;
  }
  // Non-blocking: the new communicator's handle appears when NCCL's init job is done; then its state.
  while (__atomic_load_n(&child, __ATOMIC_ACQUIRE) == nullptr && now_ns() < limit) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ncclComm_t shrunk = __atomic_load_n(&child, __ATOMIC_ACQUIRE);
  if (shrunk == nullptr) {
    out.error = "ncclCommShrink did not finish within --rdzv-timeout-s";
    return out;
  }
  r = settle(shrunk, ncclInProgress, limit);
  if (r != ncclSuccess) {
    out.error = nccl_error("ncclCommShrink (the new communicator)", r);
    return out;
  }
  abort_bounded(m.comm, args.abort_wait_s);
  ncclCommUserRank(shrunk, &new_rank);
  m.comm = shrunk;
  m.rank = new_rank;
  m.members = members;
  out.ms = static_cast<double>(now_ns() - started) / 1e6;
  return out;
}

}  // namespace ncclfi::workload
