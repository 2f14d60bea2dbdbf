// ncclfi-workload --recover shrink: after a peer's failure, the surviving ranks revoke the communicator
// (where this NCCL has ncclCommRevoke), agree on the dead ranks through the rendezvous, and shrink the
// communicator to themselves (ncclCommShrink). Both calls are looked up at run time, so the binary still
// loads against an NCCL without them.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ncclfi/event_log.h"
#include "rendezvous.h"
#include "workload_args.h"

namespace ncclfi::workload {

// Which of the recovery calls the NCCL in this process has.
struct RecoveryApi {
  bool shrink = false;
  bool revoke = false;
};
RecoveryApi recovery_api();

// The communicator the rank is in now, and who its members are (by their rank in the job, which the
// rendezvous and the events keep using after a shrink).
struct Membership {
  ncclComm_t comm = nullptr;
  int rank = 0;              // in comm
  std::vector<int> members;  // job rank of each comm rank
  int job_rank() const { return members[static_cast<size_t>(rank)]; }
  int size() const { return static_cast<int>(members.size()); }
};

struct RecoveryResult {
  std::string error;  // empty: recovered
  // "shrink" (ncclCommShrink), or "reinit": a fresh communicator of the survivors from a new unique id,
  // when some survivor's parent communicator still reports the peer's error after the revoke. NCCL
  // 2.28's ncclCommShrink checks the parent's state first (ncclCommEnsureReady), and an error its proxy
  // thread recorded (a network peer gone) stays there, so the shrink would be refused.
  std::string method;
  std::string parent_error;   // this rank's parent state when it was not clean ("" when it was)
  uint64_t resume_step = 0;   // the first step the shrunk communicator runs
  std::vector<int> excluded;  // job ranks left out
  bool revoked = false;       // ncclCommRevoke was called (else NCCL_SHRINK_ABORT did the stopping)
  double ms = 0;              // from the failure noticed to the shrunk communicator ready
};

// Revokes, agrees, shrinks (or re-creates among the survivors) and waits for the new communicator; on
// success `m` describes it and the old communicator is gone. `next_step`: the first step this rank had not
// completed. Writes no events.
RecoveryResult shrink_to_survivors(Membership& m, Rendezvous& rendezvous, uint64_t next_step,
                                   const WorkloadArgs& args);

}  // namespace ncclfi::workload
