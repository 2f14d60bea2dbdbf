#!/usr/bin/env python3
"""A small PyTorch DDP training job for ncclfi (the ncclfi workload contract): the job that PyTorch's own safety
nets protect. Run it under torchrun, one process per GPU:

    torchrun --nproc-per-node 2 --max-restarts 1 workloads/torch/ddp_train.py \\
        --steps 200 --pg-timeout-s 30 --checkpoint-dir /tmp/ckpt --checkpoint-every 20

- Data is synthetic and deterministic (a fixed random "teacher" network; each rank's batch depends only
  on the seed, the step and the rank), so a run restarted from a checkpoint sees the same batches.
- The process-group timeout is --pg-timeout-s; every TORCH_NCCL_* variable is PyTorch's to read from the
  environment (the scenario sets them; the start event records them).
- Rank 0 saves a checkpoint every K steps (atomically); after a torchrun restart every rank resumes from it.
- A NaN or inf loss stops the job with exit code 7 and a nan_detected event.
- Events go to $NCCLFI_EVENTS through ncclfi_events.py (beside this file), the helper any training script
  can use: it is an ordinary user job. An `op` event closes every step (op "train_step", seq = step), so
  the last one says where a rank stopped.

- --recover shrink: on a peer's failure the survivors shrink the process group and carry on without it
  (ddp_recovery.py says how); `recovering`, `recovered` and `resumed` events mark the way.

Needs only PyTorch (2.x). Exit codes: 0 ok, 6 bootstrap failure, 7 NaN/inf loss, 8 --recover failed or
refused (in-place recovery is not possible here), 64 usage.
"""

import argparse
import datetime
import math
import json
import os
import sys
import time

import ddp_recovery
import ncclfi_events

EXIT_OK = 0
EXIT_BOOTSTRAP = 6
EXIT_NAN_LOSS = 7
EXIT_NO_RECOVERY = 8  # --recover: in-place recovery impossible here (ncclfi/workload_contract.h)
EXIT_USAGE = 64


class UsageExitParser(argparse.ArgumentParser):
    """argparse exits 2 on bad arguments; the workload contract says 64."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print("%s: error: %s" % (self.prog, message), file=sys.stderr)
        sys.exit(EXIT_USAGE)


def parse_args(argv):
    parser = UsageExitParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100, help="training steps in all")
    parser.add_argument("--pg-timeout-s", type=float, default=600.0, help="init_process_group timeout")
    parser.add_argument("--checkpoint-dir", default="", help="save and resume here (empty: no checkpoints)")
    parser.add_argument("--checkpoint-every", type=int, default=20, help="steps between checkpoints")
    parser.add_argument("--batch", type=int, default=64, help="samples per rank per step")
    parser.add_argument("--hidden", type=int, default=512, help="hidden width of the model")
    parser.add_argument("--lr", type=float, default=0.05, help="SGD learning rate")
    parser.add_argument("--seed", type=int, default=1234, help="seed of the data and the model")
    parser.add_argument("--step-sleep-ms", type=float, default=0.0, help="host sleep per step (slows the job)")
    parser.add_argument("--nan-at-step", type=int, default=-1, help="test hook: make the loss NaN at this step")
    parser.add_argument("--recover", choices=["shrink"], default=None,
                        help="shrink the process group to the survivors on a peer's failure, where this "
                             "PyTorch has a shrink API (else refused with exit 8)")
    parser.add_argument("--recover-wait-s", type=float, default=10.0,
                        help="--recover: how long the survivors wait for each other before agreeing")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch < 1 or args.hidden < 1 or args.checkpoint_every < 1:
        parser.error("--steps, --batch, --hidden and --checkpoint-every must be at least 1")
    if args.pg_timeout_s <= 0:
        parser.error("--pg-timeout-s must be positive")
    if args.recover and args.checkpoint_dir:
        parser.error("--recover shrink carries on in place; it does not combine with --checkpoint-dir")
    if args.recover_wait_s <= 0:
        parser.error("--recover-wait-s must be positive")
    return args


def env_int(name, default=None):
    value = os.environ.get(name)
    if value is None:
        return default
    return int(value)


def batch_for(torch, step, rank, args, teacher, device):
    gen = torch.Generator(device="cpu")
    gen.manual_seed(args.seed * 1_000_003 + step * 1_009 + rank)
    x = torch.randn(args.batch, 64, generator=gen)
    with torch.no_grad():
        y = teacher(x)
    return x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def build_model(torch, args):
    torch.manual_seed(args.seed)
    return torch.nn.Sequential(
        torch.nn.Linear(64, args.hidden), torch.nn.Tanh(),
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.Tanh(),
        torch.nn.Linear(args.hidden, 8))


def build_teacher(torch, args):
    gen = torch.Generator(device="cpu")
    gen.manual_seed(args.seed + 17)
    teacher = torch.nn.Linear(64, 8)
    with torch.no_grad():
        teacher.weight.copy_(torch.randn(8, 64, generator=gen) / 8.0)
        teacher.bias.copy_(torch.randn(8, generator=gen))
    return teacher


def save_checkpoint(torch, path, step, model, optimizer, losses):
    tmp = path + ".tmp.%d" % os.getpid()
    torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "losses": losses}, tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv):
    args = parse_args(argv)
    rank = env_int("RANK", 0)
    world_size = env_int("WORLD_SIZE", 1)
    local_rank = env_int("LOCAL_RANK", 0)
    attempt = env_int("NCCLFI_ATTEMPT", 0)  # the harness's relaunch number
    restart_count = env_int("TORCHELASTIC_RESTART_COUNT", 0)  # torchrun's own restarts
    log = ncclfi_events.EventLog(rank=rank)
    # restart_count: torchrun's own restarts of the worker group (the harness counts them from it).
    log.start(world_size=world_size, local_rank=local_rank, args=" ".join(argv))

    try:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
    except ImportError as error:
        print("ddp_train.py: PyTorch is not importable: %s" % error, file=sys.stderr)
        log.exit(EXIT_BOOTSTRAP, "no torch")
        return EXIT_BOOTSTRAP
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        print("ddp_train.py: no CUDA device; this job needs one GPU per rank", file=sys.stderr)
        log.exit(EXIT_BOOTSTRAP, "no CUDA device")
        return EXIT_BOOTSTRAP

    if args.recover == "shrink" and not hasattr(dist, "shrink_group"):
        # ProcessGroupNCCL must rebuild its communicator around the survivors; without torch's own shrink
        # API a script cannot do that under DDP, so the option is refused rather than faked.
        message = ("--recover shrink needs torch.distributed.shrink_group, which PyTorch %s lacks"
                   % torch.__version__)
        print("ddp_train.py: %s" % message, file=sys.stderr)
        log.exit(EXIT_NO_RECOVERY, message)
        return EXIT_NO_RECOVERY
    if args.recover == "shrink":
        # The script decides what a failed collective ends (ddp_recovery.py), not PyTorch's watchdog.
        os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0")
        # On a failed collective PyTorch's watchdog signals a debug dump (the flight recorder) and then
        # waits for it for TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC (a minute), even with the recorder off;
        # destroy_process_group waits for the watchdog, and the survivors' new group for that rank
        # (measured on one H200 under PyTorch 2.11: 60 s). A job that carries on in place does not wait.
        os.environ.setdefault("TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC", "0")

    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    try:
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=args.pg_timeout_s),
                                rank=rank, world_size=world_size, device_id=device)
    except Exception as error:  # noqa: BLE001 - any bootstrap failure ends the same way
        print("ddp_train.py: init_process_group failed: %s" % error, file=sys.stderr)
        log.exit(EXIT_BOOTSTRAP, str(error))
        return EXIT_BOOTSTRAP

    model = build_model(torch, args).to(device)
    teacher = build_teacher(torch, args)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    start_step = 0
    losses = []
    ckpt_path = os.path.join(args.checkpoint_dir, "ddp_train.pt") if args.checkpoint_dir else ""
    if ckpt_path and os.path.exists(ckpt_path):
        state = torch.load(ckpt_path, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_step = int(state["step"])
        losses = list(state["losses"])
        log.event("resume", iter=start_step, path=ckpt_path, attempt=attempt, restart_count=restart_count)
        if rank == 0:
            print("ddp_train.py: resuming at step %d of %d (torchrun restart %d)" % (start_step, args.steps, restart_count),
                  flush=True)
    ddp = DistributedDataParallel(model, device_ids=[device.index])
    loss_fn = torch.nn.MSELoss()
    started = time.monotonic()
    store = dist.distributed_c10d._get_default_store() if args.recover else None  # kept across recoveries
    watch = ddp_recovery.StepWatch(torch, dist, device, args.pg_timeout_s, store) if args.recover else None
    snapshot = ddp_recovery.Snapshot(torch, model, optimizer) if args.recover else None
    data_rank = rank  # the batch a rank trains on: its rank in the current world
    recovered_at = None  # the step the survivors resumed at, until its first step completes
    recoveries = 0  # each recovery agrees in the store under its own number

    step = start_step
    while step < args.steps:
        t0 = time.monotonic_ns()
        if args.recover:
            snapshot.take(step)
        try:
            x, y = batch_for(torch, step, data_rank, args, teacher, device)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(ddp(x), y)
            if step == args.nan_at_step:
                loss = loss * float("nan")
            loss.backward()
            optimizer.step()
            if watch:
                watch.wait(step)
            value = loss.item()  # waits for this step's work, the gradient all-reduce included
        except Exception as failure:  # noqa: BLE001 - without --recover every failure ends the job as before
            if not args.recover:
                raise
            print("ddp_train.py: rank %d: step %d failed (%s): shrinking to the survivors" % (rank, step, failure),
                  file=sys.stderr, flush=True)
            try:
                step, _ = ddp_recovery.recover(torch, dist, log, device, rank, failure, snapshot, store,
                                               generation=recoveries, wait_s=args.recover_wait_s,
                                               timeout_s=args.pg_timeout_s, group_error=watch.group_error())
            except Exception as error:  # noqa: BLE001 - whatever stops the recovery ends the job, exit 8
                print("ddp_train.py: rank %d: no in-place recovery: %s" % (rank, error), file=sys.stderr, flush=True)
                log.exit(EXIT_NO_RECOVERY, "no in-place recovery: %s" % error)
                os._exit(EXIT_NO_RECOVERY)
            data_rank = dist.get_rank()
            ddp = DistributedDataParallel(model, device_ids=[device.index])  # on the survivors' group
            recovered_at = step
            recoveries += 1
            watch.generation = recoveries
            continue
        if recovered_at is not None:
            log.event("resumed", step=step, world_size=dist.get_world_size(), comm_rank=dist.get_rank())
            recovered_at = None
        if not math.isfinite(value):
            print("ddp_train.py: rank %d: loss is %r at step %d: stopping" % (rank, value, step),
                  file=sys.stderr, flush=True)
            log.event("nan_detected", step=step, value=repr(value))
            log.exit(EXIT_NAN_LOSS, "loss %r at step %d" % (value, step))
            os._exit(EXIT_NAN_LOSS)  # peers then stop at their next collective, as in a real job
        losses.append(value)
        log.step_done(step, (time.monotonic_ns() - t0) / 1e9, loss=value)
        if rank == 0 and (step % 10 == 0 or step + 1 == args.steps):
            print("step %5d  loss %.6f" % (step, value), flush=True)
        if ckpt_path and (step + 1) % args.checkpoint_every == 0 and step + 1 < args.steps:
            if rank == 0:
                os.makedirs(args.checkpoint_dir, exist_ok=True)
                save_checkpoint(torch, ckpt_path, step + 1, model, optimizer, losses)
                log.event("checkpoint", iter=step + 1, path=ckpt_path)
            dist.barrier()  # nobody runs ahead of a checkpoint that may still be written
        if args.step_sleep_ms > 0:
            time.sleep(args.step_sleep_ms / 1000.0)
        step += 1

    # Every rank must hold the same parameters after DDP: compare a checksum across ranks.
    with torch.no_grad():
        checksum = torch.stack([p.double().sum() for p in model.parameters()]).sum().reshape(1)
        low, high = checksum.clone(), checksum.clone()
        dist.all_reduce(low, op=dist.ReduceOp.MIN)
        dist.all_reduce(high, op=dist.ReduceOp.MAX)
    in_sync = bool((low == high).item())
    final = losses[-1] if losses else float("nan")
    learned = len(losses) > 1 and math.isfinite(final) and final < losses[0]
    verified = in_sync and math.isfinite(final)
    log.event("done", iters=args.steps, resumed_from=start_step, seconds=time.monotonic() - started,
              verified=verified, final_loss=final, params_in_sync=in_sync, loss_decreased=learned)
    if rank == 0:
        print("ddp_train.py: done: %d steps (resumed from %d), final loss %.6f, parameters %s" %
              (args.steps, start_step, final, "identical on every rank" if in_sync else "DIFFER"), flush=True)
    if ckpt_path and rank == 0:
        save_checkpoint(torch, ckpt_path, args.steps, model, optimizer, losses)
    dist.destroy_process_group()
    log.exit(EXIT_OK)
    if recoveries:
        # After an in-place recovery the aborted parent group's threads keep the interpreter from finishing
        # (PyTorch 2.11 on one H200: every survivor stopped at exit with no Python frame left). Every
        # result is written by now, so the process leaves without the interpreter's own teardown.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_OK)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
