#include "recovery.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace ncclfi::workload {
namespace {

// Values of nccl.h 2.27+ (these headers may be older than the NCCL the process loads).
constexpr int kShrinkDefault = 0x00;
constexpr int kShrinkAbort = 0x01;

using RevokeFn = ncclResult_t (*)(ncclComm_t, int);
using ShrinkFn = ncclResult_t (*)(ncclComm_t, int*, int, ncclComm_t*, ncclConfig_t*, int);

RevokeFn revoke_fn() {
  static const auto fn = reinterpret_cast<RevokeFn>(dlsym(RTLD_DEFAULT, "ncclCommRevoke"));
  return fn;
}
ShrinkFn shrink_fn() {
  static const auto fn = reinterpret_cast<ShrinkFn>(dlsym(RTLD_DEFAULT, "ncclCommShrink"));
  return fn;
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
  if (revoke_fn() != nullptr) {
    const ncclResult_t r = revoke_fn()(m.comm, 0);
    out.revoked = r == ncclSuccess || r == ncclInProgress;
    if (r == ncclInProgress) settle(m.comm, r, limit);
  }
  Rendezvous::Survivors survivors;
  try {
    survivors = rendezvous.agree_on_survivors(
        next_step, std::chrono::milliseconds(static_cast<int64_t>(args.recover_wait_s * 1000)));
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
  int new_rank = 0;
  ncclCommUserRank(shrunk, &new_rank);
  m.comm = shrunk;
  m.rank = new_rank;
  m.members = members;
  out.ms = static_cast<double>(now_ns() - started) / 1e6;
  return out;
}

}  // namespace ncclfi::workload
