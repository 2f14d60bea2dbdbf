#!/usr/bin/env bash
# GPU proof of ncclfi-workload and workloads/torch/ddp_train.py on 2 GPUs (run by scripts/gpu-check).
#   BUILD            build directory with bin/ncclfi-workload and lib/libncclfi-preload.so
#   OUT              where the logs go (a tarball of every rank's log and event file, plus this output)
#   WORKLOAD_CHECKS  sub-checks to run (default: all): correct nonblocking bandwidth hang async corrupt
#                    restart ddp ddp_nan ddp_hang
#   NCCL_TESTS_DIR   optional: nccl-tests binaries, to compare bus bandwidth side by side
# Exit 0 when every sub-check passed, 77 when the host has fewer than 2 GPUs, 1 otherwise.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$repo/build}
OUT=${OUT:-$(mktemp -d)}
export NCCL_NVLS_ENABLE=0
W=$BUILD/bin/ncclfi-workload
PRELOAD=$BUILD/lib/libncclfi-preload.so
CHECKS=${WORKLOAD_CHECKS:-correct nonblocking bandwidth hang async corrupt restart ddp ddp_nan ddp_hang}
work=$(mktemp -d /tmp/ncclfi-gpu-workload.XXXXXX)
fails=0
mkdir -p "$OUT"
trap 'tar -czf "$OUT/workload-logs.tar.gz" -C "$work" . 2>/dev/null' EXIT

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${ngpu:-0}" -lt 2 ]; then echo "SKIP fewer than 2 GPUs visible ($ngpu)"; exit 77; fi
if [ ! -x "$W" ]; then echo "FAIL no $W"; exit 1; fi
echo "# host $(hostname), $ngpu GPUs, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
want() { case " $CHECKS " in *" $1 "*) return 0 ;; esac; return 1; }
port() { echo $((20000 + RANDOM % 30000)); }

# start2 NAME [VAR=value...] -- ARGS...: starts rank 0 and 1 of ncclfi-workload in the background.
start2() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local dir=$work/$name p; p=$(port)
  mkdir -p "$dir"
  for r in 0 1; do
    (
      env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$p \
        NCCLFI_EVENTS="$dir/events.jsonl" "${envs[@]}" "$W" "$@" >"$dir/rank$r.log" 2>&1 &
      echo $! >"$dir/pid$r"
      wait $!
      echo $? >"$dir/rc$r"
      date +%s%N >"$dir/end$r"
    ) &
  done
  sleep 0.2
}
# wait2 NAME LIMIT_S: waits for both ranks, killing them past the limit.
wait2() {
  local dir=$work/$1 limit=$2 t=0
  while [ ! -f "$dir/rc0" ] || [ ! -f "$dir/rc1" ]; do
    sleep 0.2; t=$((t + 1))
    if [ $t -gt $((limit * 5)) ]; then
      for r in 0 1; do [ -f "$dir/pid$r" ] && kill -9 "$(cat "$dir/pid$r")" 2>/dev/null; done
      sleep 1; echo "    (killed $1 after ${limit}s)"; break
    fi
  done
  rc0=$(cat "$dir/rc0" 2>/dev/null || echo none); rc1=$(cat "$dir/rc1" 2>/dev/null || echo none)
}
run2() { local name=$1 limit=$2; shift 2; start2 "$name" "$@"; wait2 "$name" "$limit"; }
events() { python3 "$repo/scripts/gpu/events.py" "$@"; }

if want correct; then
  run2 correct 300 -- --op all --dtype all --bytes 8,1M,32M --iters 3 --warmup 1 --check --op-events 0
  grep -v '^#' "$work/correct/rank0.log" | head -250
  if [ "$rc0$rc1" = 00 ] && grep -q '^# rank 0: verified' "$work/correct/rank0.log" &&
     grep -q '^# rank 1: verified' "$work/correct/rank1.log" &&
     [ "$(events count "$work/correct/events.jsonl" result_mismatch)" = 0 ]; then
    ok "correct: every op x dtype x size verified on both ranks ($(grep -c -v '^#' "$work/correct/rank0.log") cases)"
  else
    bad "correct: exits $rc0/$rc1"; tail -n 5 "$work/correct/rank0.log" "$work/correct/rank1.log"
  fi
fi

if want nonblocking; then
  run2 nonblocking 120 -- --nonblocking --op all --dtype float,bfloat16 --bytes 1M --iters 5 --check --op-events 0
  if [ "$rc0$rc1" = 00 ] && grep -q 'non-blocking communicator' "$work/nonblocking/rank0.log"; then
    ok "nonblocking: every op verified on a non-blocking communicator"
  else
    bad "nonblocking: exits $rc0/$rc1"; tail -n 5 "$work/nonblocking/rank0.log" "$work/nonblocking/rank1.log"
  fi
fi

if want bandwidth; then
  run2 bandwidth 300 -- --op all_reduce,all_gather,reduce_scatter,broadcast,reduce,all_to_all,sendrecv \
    --bytes 8,128M,1G --iters 20 --warmup 5 --op-events 0
  grep -v '^# rank' "$work/bandwidth/rank0.log"
  if [ "$rc0$rc1" = 00 ]; then ok "bandwidth: figures above (busbw GB/s)"; else bad "bandwidth: exits $rc0/$rc1"; fi
  if [ -n "${NCCL_TESTS_DIR:-}" ]; then
    for t in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
      if [ -x "$NCCL_TESTS_DIR/${t}_perf" ]; then
        echo "# nccl-tests ${t}_perf -b 128M -e 1G -f 8 -g 2 -n 20 -w 5"
        "$NCCL_TESTS_DIR/${t}_perf" -b 128M -e 1G -f 8 -g 2 -n 20 -w 5 2>&1 | grep -E '^ +[0-9]' | tee "$work/bandwidth/nccl-tests-$t.txt"
      fi
    done
    python3 "$repo/scripts/gpu/events.py" compare-busbw "$work/bandwidth/rank0.log" "$work/bandwidth" ||
      bad "bandwidth: more than 5% below nccl-tests"
  else
    echo "# NCCL_TESTS_DIR unset: no nccl-tests comparison"
  fi
fi

if want hang; then
  if [ -f "$PRELOAD" ]; then
    cat >"$work/hang-plan.json" <<'JSON'
{"seed": 1, "faults": [{"id": "hang-r1", "layer": "api", "kind": "hang",
  "target": {"ranks": [1], "ops": ["allreduce"]}, "trigger": {"after_calls": 50}}]}
JSON
    run2 hang 60 LD_PRELOAD="$PRELOAD" NCCLFI_PLAN="$work/hang-plan.json" -- \
      --op all_reduce --bytes 1M --iters 100000 --warmup 0 --timeout-s 5 --op-events 0
    detail=$(events hang-timing "$work/hang" 5)
    echo "    $detail"
    if [ "$rc0$rc1" = 33 ] && [[ "$detail" == within* ]]; then
      ok "hang: both ranks' watchdogs aborted and exited 3 within timeout + 1 s"
    else
      bad "hang: exits $rc0/$rc1"; tail -n 3 "$work/hang/rank0.log" "$work/hang/rank1.log"
    fi
  else
    echo "    no $PRELOAD: hang check skipped"; bad "hang: preload missing"
  fi
fi

if want async; then
  if [ -f "$PRELOAD" ]; then
    cat >"$work/async-plan.json" <<'JSON'
{"seed": 1, "faults": [{"id": "async-r1", "layer": "api", "kind": "async_error", "params": {"code": 6},
  "target": {"ranks": [1], "ops": ["allreduce"]}, "trigger": {"after_calls": 20}}]}
JSON
    run2 async 60 LD_PRELOAD="$PRELOAD" NCCLFI_PLAN="$work/async-plan.json" -- \
      --op all_reduce --bytes 1M --iters 100000 --warmup 0 --timeout-s 5 --op-events 0
    echo "    exits $rc0/$rc1; async_error events from rank(s): $(events field "$work/async/events.jsonl" async_error rank)"
    if [ "$rc1" = 5 ] && { [ "$rc0" = 3 ] || [ "$rc0" = 5 ]; }; then
      ok "async: rank 1 saw the async error (exit 5), rank 0 stopped too (exit $rc0)"
    else
      bad "async: exits $rc0/$rc1"; tail -n 3 "$work/async/rank0.log" "$work/async/rank1.log"
    fi
  else
    bad "async: preload missing"
  fi
fi

if want corrupt; then
  if [ -f "$PRELOAD" ]; then
    cat >"$work/corrupt-plan.json" <<'JSON'
{"seed": 1, "faults": [{"id": "corrupt-r1", "layer": "api", "kind": "corrupt", "params": {"mode": "nan", "count": 4},
  "target": {"ranks": [1], "ops": ["allreduce"]}, "trigger": {"after_calls": 10}}]}
JSON
    run2 corrupt 60 LD_PRELOAD="$PRELOAD" NCCLFI_PLAN="$work/corrupt-plan.json" -- \
      --op all_reduce --bytes 1M --iters 30 --warmup 0 --timeout-s 10 --op-events 0
    mism=$(events field "$work/corrupt/events.jsonl" result_mismatch wrong)
    verified=$(events field "$work/corrupt/events.jsonl" done verified)
    echo "    without --check: exits $rc0/$rc1, result_mismatch wrong counts: '$mism', verified: $verified"
    run2 corrupt_check 60 LD_PRELOAD="$PRELOAD" NCCLFI_PLAN="$work/corrupt-plan.json" -- \
      --op all_reduce --bytes 1M --iters 30 --warmup 0 --timeout-s 5 --op-events 0 --check
    echo "    with --check: exits $rc0/$rc1"
    if [ "$mism" = 4 ] && [ "$verified" = "True False" ] && [ "$rc1" = 4 ]; then
      ok "corrupt: 4 NaN elements counted exactly, reported silently without --check, exit 4 with --check"
    else
      bad "corrupt"
    fi
  else
    bad "corrupt: preload missing"
  fi
fi

if want restart; then
  ck=$work/restart-ckpt
  args=(--op all_reduce --bytes 16M --iters 6000 --warmup 0 --checkpoint "$ck" --checkpoint-every 100
        --step-delay-ms 1 --timeout-s 5 --op-events 100)
  start2 restart1 -- "${args[@]}"
  sleep 4
  kill -9 "$(cat "$work/restart1/pid1")"
  wait2 restart1 30
  echo "    first attempt: rank 1 killed, exits $rc0/$rc1; checkpoints: $(events count "$work/restart1/events.jsonl" checkpoint)"
  first_rc0=$rc0
  run2 restart2 120 -- "${args[@]}"
  resume=$(events field "$work/restart2/events.jsonl" resume iter)
  verified=$(events field "$work/restart2/events.jsonl" done verified)
  echo "    second attempt: exits $rc0/$rc1, resumed at step(s) $resume, verified $verified"
  tail -2 "$work/restart2/rank0.log"
  if [ "$first_rc0" = 3 ] && [ "$rc0$rc1" = 00 ] && [ -n "$resume" ] && [ "$resume" != "0 0" ] &&
     [ "$verified" = "True True" ]; then
    ok "restart: killed mid-run, resumed from its checkpoint and finished with every result verified"
  else
    bad "restart"
  fi
fi

torch_ok=0
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.device_count() >= 2 else 1)' 2>/dev/null; then torch_ok=1; fi
if want ddp; then
  if [ $torch_ok = 1 ]; then
    mkdir -p "$work/ddp"
    NCCLFI_EVENTS="$work/ddp/events.jsonl" timeout -s KILL 240 python3 -m torch.distributed.run --nproc-per-node 2 \
      --master-port "$(port)" "$repo/workloads/torch/ddp_train.py" --steps 60 --pg-timeout-s 30 \
      --checkpoint-dir "$work/ddp/ckpt" --checkpoint-every 20 >"$work/ddp/torchrun.log" 2>&1
    rc=$?
    grep -E 'step|done' "$work/ddp/torchrun.log" | tail -4
    verified=$(events field "$work/ddp/events.jsonl" done verified)
    if [ $rc = 0 ] && [ "$verified" = "True True" ]; then ok "ddp: trained 60 steps on 2 GPUs, parameters in sync"
    else bad "ddp: torchrun exit $rc, verified '$verified'"; tail -20 "$work/ddp/torchrun.log"; fi
  else
    echo "    PyTorch with 2 GPUs not importable: ddp skipped"; bad "ddp: no torch"
  fi
fi

if want ddp_nan; then
  if [ $torch_ok = 1 ]; then
    mkdir -p "$work/ddp_nan"
    NCCLFI_EVENTS="$work/ddp_nan/events.jsonl" timeout -s KILL 120 python3 -m torch.distributed.run --nproc-per-node 2 \
      --master-port "$(port)" "$repo/workloads/torch/ddp_train.py" --steps 30 --pg-timeout-s 30 --nan-at-step 7 \
      >"$work/ddp_nan/torchrun.log" 2>&1
    rc=$?
    steps=$(events field "$work/ddp_nan/events.jsonl" nan_detected step)
    codes=$(events field "$work/ddp_nan/events.jsonl" exit code)
    echo "    torchrun exit $rc, nan_detected at step(s) '$steps', rank exit codes '$codes'"
    if [ $rc != 0 ] && [ -n "$steps" ] && grep -q 'exitcode  *: 7' "$work/ddp_nan/torchrun.log"; then
      ok "ddp_nan: the NaN loss stopped the job with exit 7 and a nan_detected event"
    else
      bad "ddp_nan"; tail -n 15 "$work/ddp_nan/torchrun.log"
    fi
  else
    bad "ddp_nan: no torch"
  fi
fi

if want ddp_hang; then
  if [ $torch_ok = 1 ] && [ -f "$PRELOAD" ]; then
    mkdir -p "$work/ddp_hang"
    # Rank 1 hangs in its 120th all-reduce. DDP makes about 2.1 all-reduce calls per step here (two
    # gradient buckets, plus the barrier after each checkpoint), so the hang comes near step 56 of 80
    # (measured: the 45th call came at step 21). torchrun restarts both ranks; the new processes count
    # calls from zero and resume from the step-55 checkpoint, so they make about 55 calls and the same
    # plan does not fire again: attempt 1 runs clean, as a harness with faults_on_attempts [0] would.
    cat >"$work/ddp-hang-plan.json" <<'JSON'
{"seed": 1, "faults": [{"id": "ddp-hang-r1", "layer": "api", "kind": "hang",
  "target": {"ranks": [1], "ops": ["allreduce"]}, "trigger": {"after_calls": 120}}]}
JSON
    # PyTorch dlopens its own libnccl (RTLD_LOCAL, through libtorch_cuda's RPATH), where the preload's
    # dlsym(RTLD_NEXT) cannot see it: preload that same libnccl after ours so the real symbols resolve.
    torch_nccl=$(python3 -c 'import glob, os, torch
d = os.path.dirname(torch.__file__)
c = glob.glob(os.path.join(os.path.dirname(d), "nvidia", "nccl", "lib", "libnccl.so*")) + glob.glob(os.path.join(d, "lib", "libnccl.so*"))
print(sorted(c)[0] if c else "")')
    echo "    PyTorch's libnccl: ${torch_nccl:-not found}"
    start=$(date +%s%N)
    NCCLFI_LOG=1 LD_PRELOAD="$PRELOAD${torch_nccl:+:$torch_nccl}" NCCLFI_PLAN="$work/ddp-hang-plan.json" NCCLFI_EVENTS="$work/ddp_hang/events.jsonl" \
    TORCH_NCCL_DUMP_ON_TIMEOUT=0 TORCH_NCCL_TRACE_BUFFER_SIZE=0 TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC=1000 \
      timeout -s KILL 200 python3 -m torch.distributed.run --nproc-per-node 2 --max-restarts 1 \
      --master-port "$(port)" "$repo/workloads/torch/ddp_train.py" --steps 80 --pg-timeout-s 10 \
      --checkpoint-dir "$work/ddp_hang/ckpt" --checkpoint-every 5 >"$work/ddp_hang/torchrun.log" 2>&1
    rc=$?
    echo "    torchrun exit $rc after $(( ($(date +%s%N) - start) / 1000000 )) ms"
    grep -E 'Watchdog caught|failed \(exitcode|will restart|resuming|done:' "$work/ddp_hang/torchrun.log" | cut -c1-260 | head -8
    events ddp-timeline "$work/ddp_hang/events.jsonl"
    verified=$(events field "$work/ddp_hang/events.jsonl" done verified)
    if [ $rc = 0 ] && grep -q 'Watchdog caught collective operation timeout' "$work/ddp_hang/torchrun.log" &&
       [ -n "$(events field "$work/ddp_hang/events.jsonl" resume iter)" ] && [ "$verified" = "True True" ]; then
      ok "ddp_hang: PyTorch's watchdog caught the hang, torchrun restarted, the job resumed and finished"
    else
      bad "ddp_hang: torchrun exit $rc, verified '$verified'"; tail -30 "$work/ddp_hang/torchrun.log" | cut -c1-300
    fi
  else
    echo "    needs PyTorch and $PRELOAD: ddp_hang skipped"; bad "ddp_hang: prerequisites missing"
  fi
fi

[ $fails -eq 0 ] && exit 0 || exit 1
