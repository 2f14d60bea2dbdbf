"""In-place recovery for ddp_train.py --recover shrink: a peer dies, the survivors carry on without it.

What a job that survives a dead peer without a restart has to do, with PyTorch's own API where it has one:

1. Notice the failure without hanging: the step's work is watched (a CUDA event polled beside the process
   group's own error state) instead of a blocking .item(), so a collective that never completes because
   its peer is gone ends in a failure, not a hang. A rank whose own links saw nothing (its collective just
   waits) learns it from the store, where the first survivor to notice says so. TORCH_NCCL_ASYNC_ERROR_HANDLING
   is 0 in this mode: the script, not PyTorch's watchdog, decides what a failure ends.
2. Agree on the survivors: each rank that is still alive says so in the job's store (rank 0 hosts it and
   must survive); after --recover-wait-s rank 0 writes the member list and everyone reads that one list.
3. Shrink the process group with torch.distributed.shrink_group (NCCL's ncclCommShrink, SHRINK_ABORT: the
   parent's work in flight is aborted). NCCL refuses to shrink a communicator whose network proxy holds a
   peer's error (the usual case after a dead peer on the network path), and a shrink is collective: one
   survivor refused leaves the others waiting in it. So every survivor says in the store whether its group
   reports an error, and only when none does do they shrink; else the parents are aborted and a new
   process group of the survivors is made on the same store. The `recovered` event says which method ran
   and why.
4. Restore the state from before the failed step and run it again in the smaller world. The survivors may
   have failed a step apart (agree_on_members says why): they resume at the furthest step, with the state of
   a rank that reached it.
"""

import datetime
import faulthandler
import json
import sys
import time

import ncclfi_events  # noqa: F401 - the event log object is passed in

SHRINK_METHOD = "shrink"
REINIT_METHOD = "reinit"


class PeerFailure(Exception):
    """A step's collective failed or did not complete in time."""


def recovery_key(generation, name):
    return "ncclfi/recover/%d/%s" % (generation, name)


class StepWatch:
    """Waits for a step's GPU work while watching the process group and the peers' word for a failure."""

    STORE_POLL_S = 0.1  # a store check is a round trip to rank 0: not every millisecond

    def __init__(self, torch, dist, device, timeout_s, store):
        self.torch, self.dist, self.device, self.timeout_s, self.store = torch, dist, device, timeout_s, store
        self.generation = 0  # recoveries so far: the store keys of the next one

    def peer_recovering(self):
        try:
            return self.store.check([recovery_key(self.generation, "started")])
        except Exception:  # noqa: BLE001 - the store's host is gone: the recovery will say so
            return False

    def group_error(self):
        """The default process group's error state as PyTorch's watchdog set it, or None."""
        try:
            error = self.dist.distributed_c10d._get_default_group()._get_backend(self.device).get_error()
            return None if int(error) == 0 else str(error)
        except Exception:  # noqa: BLE001 - an older PyTorch without get_error: the timeout still holds
            return None

    def wait(self, step):
        done = self.torch.cuda.Event()
        done.record()
        now = time.monotonic()
        deadline, next_store_check = now + self.timeout_s, now + self.STORE_POLL_S
        while not done.query():
            error = self.group_error()
            if error is not None:
                raise PeerFailure("step %d: the process group reports %s" % (step, error))
            now = time.monotonic()
            if now > deadline:
                raise PeerFailure("step %d did not complete in %.0f s" % (step, self.timeout_s))
            if now > next_store_check:
                next_store_check = now + self.STORE_POLL_S
                if self.peer_recovering():
                    raise PeerFailure("step %d: a peer is recovering from a failure" % step)
            time.sleep(0.001)


class Snapshot:
    """The model and optimizer state at the start of a step, to run a failed step again."""

    def __init__(self, torch, model, optimizer):
        self.torch, self.model, self.optimizer = torch, model, optimizer
        self.step, self.model_state, self.optimizer_state = 0, None, None

    def take(self, step):
        clone = lambda v: v.detach().clone() if self.torch.is_tensor(v) else v  # noqa: E731
        self.step = step
        self.model_state = {k: clone(v) for k, v in self.model.state_dict().items()}
        self.optimizer_state = self.torch.utils._pytree.tree_map(clone, self.optimizer.state_dict())

    def restore(self):
        self.model.load_state_dict(self.model_state)
        self.optimizer.load_state_dict(self.optimizer_state)
        return self.step


def agree_on_members(store, rank, world, generation, wait_s, timeout_s, group_error, step):
    """The ranks still alive, as rank 0 saw them after wait_s, whether any of them reports a group error
    (which rules out a shrink), and the step to resume at; every survivor gets the same answer. The
    others wait for it as long as rank 0 may take to notice the failure (a step's timeout) and then to
    wait for them.

    The survivors need not have failed in the same step: a ring all-reduce can complete on some ranks and
    not on others, so some are a step ahead (measured on one H200: ranks 0 and 3 at step 39, rank 1 at
    38). A rank whose step completed holds the full result of it, so they resume at the furthest step,
    from the state of a rank that reached it (`source`)."""
    store.set(recovery_key(generation, "started"), "1")  # peers whose collectives just wait learn it here
    store.set(recovery_key(generation, "alive/%d" % rank), json.dumps({"error": group_error or "", "step": step}))
    decision = recovery_key(generation, "members")
    if rank == 0:
        time.sleep(wait_s)
        members, errors, steps = [], [], {}
        for r in range(world):
            key = recovery_key(generation, "alive/%d" % r)
            if store.check([key]):
                members.append(r)
                said = json.loads(store.get(key).decode())
                steps[r] = int(said["step"])
                if said["error"]:
                    errors.append("rank %d: %s" % (r, said["error"]))
        resume = max(steps.values())
        source = min(r for r in members if steps[r] == resume)
        store.set(decision, json.dumps({"members": members, "errors": errors, "resume_step": resume,
                                        "source": source, "behind": [r for r in members if steps[r] < resume]}))
    else:
        store.wait([decision], datetime.timedelta(seconds=timeout_s + 2 * wait_s + 30))
    return json.loads(store.get(decision).decode())


def align_state(torch, dist, snapshot, source_comm_rank):
    """Every survivor takes the model and optimizer state of the one that got furthest, over the new group
    (the same tensors in the same order on every rank: parameters, buffers, then the optimizer's
    per-parameter state)."""
    tensors = [t for t in snapshot.model.state_dict().values() if torch.is_tensor(t)]
    for state in snapshot.optimizer.state.values():
        tensors.extend(v for _, v in sorted(state.items()) if torch.is_tensor(v) and v.dim() > 0)
    with torch.no_grad():
        for tensor in tensors:
            dist.broadcast(tensor, src=source_comm_rank)
    torch.cuda.synchronize()


def nccl_version(torch):
    try:
        return ".".join(str(p) for p in torch.cuda.nccl.version())
    except Exception:  # noqa: BLE001
        return ""


def say(rank, text):
    """One line per stage of a recovery on stderr, so that a recovery that stalls shows where."""
    print("ddp_train.py: rank %d: recovery: %s" % (rank, text), file=sys.stderr, flush=True)


def rebuild_group(torch, dist, device, store, members, errors, rank, generation, timeout_s):
    """The survivors' process group: shrink_group where no survivor's group reports an error, else a new
    group on the same store. Returns (method, why the shrink was not used)."""
    excluded = [r for r in range(dist.get_world_size()) if r not in members]
    refusal = "a survivor's group reports an error, which NCCL's shrink refuses (%s)" % "; ".join(errors)
    if not errors:
        say(rank, "shrinking the group to ranks %s" % members)
        try:
            dist.shrink_group(excluded, shrink_flags=dist.distributed_c10d.SHRINK_ABORT)
            return SHRINK_METHOD, ""
        except Exception as error:  # noqa: BLE001 - any refusal falls back to a new group
            refusal = str(error).splitlines()[0] if str(error) else type(error).__name__
            say(rank, "shrink refused: %s" % refusal)
    say(rank, "aborting the parent group")
    try:
        dist.distributed_c10d._get_default_group().abort()
    except Exception:  # noqa: BLE001 - already aborted by the refused shrink
        pass
    say(rank, "destroying the parent group")
    dist.destroy_process_group()
    say(rank, "making a new group of ranks %s" % members)
    dist.init_process_group("nccl", store=dist.PrefixStore(recovery_key(generation, "pg/"), store),
                            rank=members.index(rank), world_size=len(members), device_id=device,
                            timeout=datetime.timedelta(seconds=timeout_s))
    return REINIT_METHOD, refusal


def recover(torch, dist, log, device, rank, failure, snapshot, store, generation, wait_s, timeout_s,
            group_error):
    """Steps 2-4 above, on `store`, the job's first store (held by the caller: rank 0's server outlives
    every group). Returns (resume_step, members); raises when no recovery is possible here."""
    world = dist.get_world_size()
    log.event("recovering", error=str(failure), next_step=snapshot.step, world_size=world)
    started = time.monotonic()
    # A recovery that stalls in a library call prints every thread's Python stack once it has taken
    # longer than any stage may (the agreement's own wait, then a group's timeout).
    faulthandler.dump_traceback_later(timeout_s + 2 * wait_s + 30, exit=False)
    try:
        agreed = agree_on_members(store, rank, world, generation, wait_s, timeout_s, group_error, snapshot.step)
        members, errors = agreed["members"], agreed["errors"]
        say(rank, "agreed: members %s, resume at step %d%s" % (
            members, agreed["resume_step"], (", errors: " + "; ".join(errors)) if errors else ""))
        if rank not in members or 0 not in members or len(members) == world:
            raise RuntimeError("the survivors could not agree: members %s of %d" % (members, world))
        method, parent_error = rebuild_group(torch, dist, device, store, members, errors, rank, generation,
                                             timeout_s)
        snapshot.restore()
        if agreed["behind"]:
            say(rank, "taking the state of step %d from rank %d (ranks %s were a step behind)" % (
                agreed["resume_step"], agreed["source"], agreed["behind"]))
            align_state(torch, dist, snapshot, members.index(agreed["source"]))
        resume_step = agreed["resume_step"]
    finally:
        faulthandler.cancel_dump_traceback_later()
    log.event("recovered", resume_step=resume_step, survivors=len(members),
              excluded=[r for r in range(world) if r not in members], members=members,
              comm_rank=dist.get_rank(), method=method, parent_error=parent_error,
              nccl_version=nccl_version(torch), recovery_ms=round((time.monotonic() - started) * 1000))
    return resume_step, members
