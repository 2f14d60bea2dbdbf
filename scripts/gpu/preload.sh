#!/usr/bin/env bash
# scripts/gpu/preload.sh: libncclfi-preload.so on a real 2-GPU host. Run from the repo root with a
# copied build dir:
#   BUILD=build OUT=/tmp/gpu-out scripts/gpu/preload.sh
# PARTS picks what runs (default "perf faults torch"):
#   perf    nothing armed: all_reduce bus bandwidth at 1 GiB and 8-byte latency, plain vs preloaded,
#           alternating rounds side by side (budgets: 0.5% and 2%); the preload prints nothing
#   faults  every api fault kind on a 2-rank ncclfi-workload job, with its effect checked, plus the op trace
#   torch   a PyTorch DDP job (torchrun, 2 ranks) under the preload: op trace; hang on rank 1 caught by
#           rank 0's watchdog ("Watchdog caught collective operation timeout"); async_error tears it down
# Logs, plans, event logs and summary.txt go to $OUT/preload/. Exit 0 when every check passes.
# Knobs: ROUNDS, PORT, RUN_TIMEOUT_S, TORCHRUN (default: torchrun, else python3 -m torch.distributed.run),
# PG_TIMEOUT_S, DDP (default workloads/torch/ddp_train.py).
set -uo pipefail

BUILD=${BUILD:-build}
OUT=${OUT:-$PWD/gpu-out}
LOG=$OUT/preload
WORKLOAD=$BUILD/bin/ncclfi-workload
PRELOAD=$(readlink -f "$BUILD/lib/libncclfi-preload.so")
PARTS=${PARTS:-"perf faults torch"}
ROUNDS=${ROUNDS:-5}
PORT=${PORT:-29800}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-90}
PG_TIMEOUT_S=${PG_TIMEOUT_S:-20}
DDP=${DDP:-workloads/torch/ddp_train.py}
mkdir -p "$LOG"
: >"$LOG/summary.txt"
export NCCL_NVLS_ENABLE=0
# shellcheck source=scripts/gpu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ -e $WORKLOAD && -e $PRELOAD ]] || { echo "preload.sh: need $WORKLOAD and $BUILD/lib/libncclfi-preload.so" >&2; exit 1; }

# count_events NAME EVENT [RANK] [FIELD=VALUE]: lines of that event (optionally of a rank / a field).
count_events() {
  python3 - "$LOG/$1.events.jsonl" "$2" "${3:-}" "${4:-}" <<'PY'
import json, sys
path, event, rank, field = sys.argv[1:5]
n = 0
try:
    for line in open(path):
        e = json.loads(line)
        if e.get("event") != event: continue
        if rank != "" and e.get("rank") != int(rank): continue
        if field:
            k, v = field.split("=", 1)
            if str(e.get(k)) != v: continue
        n += 1
except FileNotFoundError:
    pass
print(n)
PY
}
# plan NAME JSON-FAULTS: writes $LOG/NAME.plan.json
plan() { echo "{\"seed\": 7, \"faults\": $2}" >"$LOG/$1.plan.json"; echo "$LOG/$1.plan.json"; }
PRE=(LD_PRELOAD="$PRELOAD")

# ------------------------------------------------------------------------------------------------ perf
if [[ " $PARTS " == *" perf "* ]]; then
  say "== perf: nothing armed, plain vs preloaded, $ROUNDS alternating rounds, best of each"
  for round in $(seq 1 "$ROUNDS"); do
    launch "plain-1g-$round" -- --op allreduce --bytes 1G --iters 100 --warmup 10
    launch "pre-1g-$round" "${PRE[@]}" -- --op allreduce --bytes 1G --iters 100 --warmup 10
    launch "plain-8-$round" -- --op allreduce --bytes 8 --iters 20000 --warmup 1000
    launch "pre-8-$round" "${PRE[@]}" -- --op allreduce --bytes 8 --iters 20000 --warmup 1000
  done
  best() {  # best PREFIX COL max|min
    for round in $(seq 1 "$ROUNDS"); do col "$1-$round" "$2"; done |
      awk -v m="$3" 'NR==1 || (m=="max" && $1>b) || (m=="min" && $1<b) {b=$1} END {print b+0}'
  }
  bw_plain=$(best plain-1g 9 max); bw_pre=$(best pre-1g 9 max)
  lat_plain=$(best plain-8 7 min); lat_pre=$(best pre-8 7 min)
  say "all_reduce 1GiB busbw GB/s: plain $bw_plain preloaded $bw_pre (rounds: $(for r in $(seq 1 "$ROUNDS"); do echo -n "$(col plain-1g-$r 9)/$(col pre-1g-$r 9) "; done))"
  say "all_reduce 8B time us:      plain $lat_plain preloaded $lat_pre (rounds: $(for r in $(seq 1 "$ROUNDS"); do echo -n "$(col plain-8-$r 7)/$(col pre-8-$r 7) "; done))"
  awk -v a="$bw_plain" -v b="$bw_pre" 'BEGIN {exit !(a > 0 && b >= a * 0.995)}'
  check perf-busbw-1g $? "preloaded/plain = $(awk -v a="$bw_plain" -v b="$bw_pre" 'BEGIN {printf "%.4f", (a>0)?b/a:0}') (>= 0.995)"
  awk -v a="$lat_plain" -v b="$lat_pre" 'BEGIN {exit !(a > 0 && b <= a * 1.02)}'
  check perf-latency-8b $? "preloaded/plain = $(awk -v a="$lat_plain" -v b="$lat_pre" 'BEGIN {printf "%.4f", (a>0)?b/a:0}') (<= 1.02)"
  ! grep -qE "ncclfi\[|ncclfi preload" "$LOG"/pre-*.rank*.log
  check perf-inert-output $? "no line of the preload in the preloaded runs' output"
  for r in $(seq 1 "$ROUNDS"); do [[ $(exit_codes "pre-1g-$r") == "0 0" && $(exit_codes "pre-8-$r") == "0 0" ]] || FAILED=1; done
fi

# ------------------------------------------------------------------------------------- perf-nccltests
# The same comparison on nccl-tests' all_reduce_perf (a real external workload, one process driving both
# GPUs through ncclCommInitAll): its back-to-back timed loop gives steadier small-message latency than a
# per-step-checked workload. Runs when NCCL_TESTS_DIR points at a built nccl-tests.
if [[ " $PARTS " == *" perf "* && -x ${NCCL_TESTS_DIR:-/nonexistent}/build/all_reduce_perf ]]; then
  AR=$NCCL_TESTS_DIR/build/all_reduce_perf
  say "== perf-nccltests: all_reduce_perf, plain vs preloaded, $ROUNDS alternating rounds"
  for round in $(seq 1 "$ROUNDS"); do
    for kind in plain pre; do
      envs=(); [[ $kind == pre ]] && envs=("${PRE[@]}")
      env "${envs[@]}" timeout "$RUN_TIMEOUT_S" "$AR" -b 8 -e 8 -g 2 -n 20000 -w 2000 >"$LOG/nt-$kind-8-$round.log" 2>&1
      env "${envs[@]}" timeout "$RUN_TIMEOUT_S" "$AR" -b 1G -e 1G -g 2 -n 20 -w 5 >"$LOG/nt-$kind-1g-$round.log" 2>&1
    done
  done
  # Out-of-place time (us, column 6) and busbw (GB/s, column 8) of the result row.
  ntcol() { awk -v c="$2" '$1 ~ /^[0-9]+$/ && NF >= 12 {v=$c} END {print v+0}' "$LOG/$1.log"; }
  ntbest() {  # ntbest PREFIX SIZE COL max|min
    for round in $(seq 1 "$ROUNDS"); do ntcol "$1-$2-$round" "$3"; done |
      awk -v m="$4" 'NR==1 || (m=="max" && $1>b) || (m=="min" && $1<b) {b=$1} END {print b+0}'
  }
  lp=$(ntbest nt-plain 8 6 min); lq=$(ntbest nt-pre 8 6 min)
  bp=$(ntbest nt-plain 1g 8 max); bq=$(ntbest nt-pre 1g 8 max)
  say "nccl-tests all_reduce 8B time us: plain $lp preloaded $lq (rounds: $(for r in $(seq 1 "$ROUNDS"); do echo -n "$(ntcol nt-plain-8-$r 6)/$(ntcol nt-pre-8-$r 6) "; done))"
  say "nccl-tests all_reduce 1GiB busbw GB/s: plain $bp preloaded $bq (rounds: $(for r in $(seq 1 "$ROUNDS"); do echo -n "$(ntcol nt-plain-1g-$r 8)/$(ntcol nt-pre-1g-$r 8) "; done))"
  awk -v a="$lp" -v b="$lq" 'BEGIN {exit !(a > 0 && b <= a * 1.02)}'
  check perf-nccltests-latency-8b $? "preloaded/plain = $(awk -v a="$lp" -v b="$lq" 'BEGIN {printf "%.4f", (a>0)?b/a:0}') (<= 1.02)"
  awk -v a="$bp" -v b="$bq" 'BEGIN {exit !(a > 0 && b >= a * 0.995)}'
  check perf-nccltests-busbw-1g $? "preloaded/plain = $(awk -v a="$bp" -v b="$bq" 'BEGIN {printf "%.4f", (a>0)?b/a:0}') (>= 0.995)"
fi

# ---------------------------------------------------------------------------------------------- faults
if [[ " $PARTS " == *" faults "* ]]; then
  say "== faults: 2-rank ncclfi-workload, faults on rank 1's allreduce (watchdog timeout 5 s)"
  W=(--op allreduce --bytes 64M --iters 40 --warmup 2)
  fault_run() {  # fault_run NAME FAULTS-JSON [workload args; default --timeout-s 5]
    local name=$1 faults=$2; shift 2
    [[ $# -gt 0 ]] || set -- --timeout-s 5
    launch "$name" "${PRE[@]}" NCCLFI_PLAN="$(plan "$name" "$faults")" NCCLFI_LOG=1 -- "${W[@]}" "$@"
  }
  # FAULTS (space-separated names) limits which fault runs happen; empty: all of them.
  want() { [[ -z ${FAULTS:-} || " $FAULTS " == *" $1 "* ]]; }
  on1='"target": {"ranks": [1], "ops": ["allreduce"]}'

  launch base "${PRE[@]}" -- "${W[@]}" --timeout-s 5
  check base $([[ $(exit_codes base) == "0 0" ]]; echo $?) "no fault: exit $(exit_codes base), $(secs base) s"

  if want delay; then
    fault_run delay "[{\"id\": \"d\", \"layer\": \"api\", \"kind\": \"delay\", \"params\": {\"ms\": 400}, $on1, \"trigger\": {\"after_calls\": 10, \"count\": 5}}]"
    awk -v a="$(secs base)" -v b="$(secs delay)" 'BEGIN {exit !(b >= a + 1.8)}'
    check delay $([[ $? -eq 0 && $(exit_codes delay) == "0 0" && $(count_events delay inject 1) == 5 ]]; echo $?) \
      "5 x 400 ms on rank 1: $(secs delay) s vs $(secs base) s, exit $(exit_codes delay), injections $(count_events delay inject 1)"
  fi

  if want hang-ms; then
    fault_run hang-ms "[{\"id\": \"h\", \"layer\": \"api\", \"kind\": \"hang\", \"params\": {\"ms\": 3000}, $on1, \"trigger\": {\"after_calls\": 10}}]" --timeout-s 30
    awk -v a="$(secs base)" -v b="$(secs hang-ms)" 'BEGIN {exit !(b >= a + 2.8)}'
    check hang-ms $([[ $? -eq 0 && $(exit_codes hang-ms) == "0 0" ]]; echo $?) "3 s hang then forward: $(secs hang-ms) s, exit $(exit_codes hang-ms)"
  fi

  if want hang; then
    fault_run hang "[{\"id\": \"h\", \"layer\": \"api\", \"kind\": \"hang\", $on1, \"trigger\": {\"after_calls\": 10}}]"
    check hang $([[ $(exit_codes hang) == "3 "* ]]; echo $?) "hang for ever on rank 1: rank 0's watchdog exits 3 (rank 1: its own watchdog's code): exit $(exit_codes hang) after $(secs hang) s"
  fi

  if want skip; then
    fault_run skip "[{\"id\": \"s\", \"layer\": \"api\", \"kind\": \"skip\", $on1, \"trigger\": {\"after_calls\": 10}}]"
    check skip $([[ $(exit_codes skip) == *3* ]]; echo $?) "rank 1 skips one allreduce: a peer hangs, watchdog exit 3: exit $(exit_codes skip) after $(secs skip) s"
  fi

  if want error; then
    fault_run error "[{\"id\": \"e\", \"layer\": \"api\", \"kind\": \"error\", \"params\": {\"code\": \"ncclRemoteError\"}, $on1, \"trigger\": {\"after_calls\": 10}}]"
    check error $([[ $(exit_codes error) == [0-9]*" 2" ]] && grep -q "returned .*(6)" "$LOG/error.rank1.log"; echo $?) \
      "rank 1 gets ncclRemoteError (6) from ncclAllReduce, exits 2: exit $(exit_codes error); $(grep -m1 -o 'returned.*' "$LOG/error.rank1.log")"
  fi

  if want async_error; then
    fault_run async "[{\"id\": \"a\", \"layer\": \"api\", \"kind\": \"async_error\", \"params\": {\"code\": \"ncclRemoteError\"}, $on1, \"trigger\": {\"after_calls\": 10}}]"
    check async_error $([[ $(exit_codes async) == [0-9]*" 5" ]]; echo $?) \
      "ncclCommGetAsyncError reports it, rank 1's watchdog exits 5: exit $(exit_codes async); $(grep -m1 -o 'ncclCommGetAsyncError.*' "$LOG/async.rank1.log")"
  fi

  if want corrupt; then
    for mode in bitflip nan zero; do
      fault_run "corrupt-$mode" "[{\"id\": \"c\", \"layer\": \"api\", \"kind\": \"corrupt\", \"params\": {\"mode\": \"$mode\", \"count\": 3}, $on1, \"trigger\": {\"after_calls\": 10}}]"
      w1=$(count_events "corrupt-$mode" result_mismatch 1 wrong=3); w0=$(count_events "corrupt-$mode" result_mismatch 0)
      check "corrupt-$mode" $([[ $(exit_codes "corrupt-$mode") == "0 0" && $w1 == 1 && $w0 == 0 ]]; echo $?) \
        "3 elements of rank 1's result: result_mismatch with wrong=3 on rank 1: $w1, any on rank 0: $w0, exit $(exit_codes "corrupt-$mode")"
    done
  fi
  if want corrupt-check; then
    fault_run corrupt-check "[{\"id\": \"c\", \"layer\": \"api\", \"kind\": \"corrupt\", \"params\": {\"mode\": \"bitflip\", \"count\": 1}, $on1, \"trigger\": {\"after_calls\": 10}}]" --check
    check corrupt-check $([[ $(exit_codes corrupt-check) == *4* ]]; echo $?) "with --check the job stops with 4: exit $(exit_codes corrupt-check)"
  fi

  if want crash-signal; then
    fault_run crash-signal "[{\"id\": \"k\", \"layer\": \"api\", \"kind\": \"crash\", \"params\": {\"signal\": \"SIGKILL\"}, $on1, \"trigger\": {\"after_calls\": 10}}]"
    check crash-signal $([[ $(exit_codes crash-signal) == [0-9]*" 137" ]]; echo $?) "rank 1 killed by SIGKILL (137): exit $(exit_codes crash-signal)"
  fi
  if want crash-exit; then
    fault_run crash-exit "[{\"id\": \"k\", \"layer\": \"api\", \"kind\": \"crash\", \"params\": {\"exit_code\": 17}, $on1, \"trigger\": {\"after_calls\": 10}}]"
    check crash-exit $([[ $(exit_codes crash-exit) == [0-9]*" 17" ]]; echo $?) "rank 1 exits 17: exit $(exit_codes crash-exit)"
  fi

  if want init_fail; then
    fault_run init-fail "[{\"id\": \"i\", \"layer\": \"api\", \"kind\": \"init_fail\", \"params\": {\"code\": \"ncclSystemError\"}, \"target\": {\"ranks\": [1]}}]"
    check init_fail $([[ $(exit_codes init-fail) == [0-9]*" 6" ]]; echo $?) "rank 1's communicator creation fails, exit 6: exit $(exit_codes init-fail); $(grep -m1 -o 'ncclCommInit.*' "$LOG/init-fail.rank1.log")"
  fi
  if want init_hang; then
    fault_run init-hang "[{\"id\": \"i\", \"layer\": \"api\", \"kind\": \"init_hang\", \"target\": {\"ranks\": [1]}}]"
    check init_hang $([[ $(exit_codes init-hang) == *3* ]]; echo $?) "rank 1's creation never returns: watchdog exit 3: exit $(exit_codes init-hang) after $(secs init-hang) s"
  fi

  if want op-trace; then
    launch trace "${PRE[@]}" NCCLFI_TRACE_OPS=1 -- --op allreduce --bytes 1M --iters 20 --warmup 2
    t0=$(count_events trace op_enqueue 0 op=allreduce); t1=$(count_events trace op_enqueue 1 op=allreduce)
    check op-trace $([[ $t0 -ge 22 && $t1 -ge 22 ]]; echo $?) "op_enqueue events per rank: $t0 / $t1 (>= 22 = warmup + iters)"
  fi
fi

# ----------------------------------------------------------------------------------------------- torch
if [[ " $PARTS " == *" torch "* ]]; then
  say "== torch: ddp_train.py under torchrun, 2 ranks, pg timeout $PG_TIMEOUT_S s"
  if [[ -n ${TORCHRUN:-} ]]; then read -r -a TR <<<"$TORCHRUN"
  elif command -v torchrun >/dev/null; then TR=(torchrun)
  else TR=(python3 -m torch.distributed.run); fi
  # torch_run NAME STEPS [VAR=value...]: runs the job, notes when each watched line first appears.
  torch_run() {
    local name=$1 steps=$2; shift 2
    PORT=$((PORT + 1))
    rm -f "$LOG/$name.events.jsonl"
    env "$@" LD_PRELOAD="$PRELOAD" NCCLFI_EVENTS="$LOG/$name.events.jsonl" \
      timeout -s KILL "$RUN_TIMEOUT_S" "${TR[@]}" --nproc-per-node 2 --master-port "$PORT" "$DDP" \
      --steps "$steps" --pg-timeout-s "$PG_TIMEOUT_S" >"$LOG/$name.log" 2>&1 &
    local pid=$! seen=""
    while kill -0 "$pid" 2>/dev/null; do
      if [[ -z $seen ]] && grep -q "Watchdog caught collective operation timeout" "$LOG/$name.log"; then
        seen=$(date +%s.%N); echo "$seen" >"$LOG/$name.timeout_seen"
      fi
      sleep 0.2
    done
    wait "$pid"; echo $? >"$LOG/$name.exit"
  }
  inject_time() {  # wall-clock seconds of the first injection
    python3 -c "import json,sys; print(min(json.loads(l)['ts_ns'] for l in open(sys.argv[1]) if '\"inject\"' in l)/1e9)" \
      "$LOG/$1.events.jsonl" 2>/dev/null
  }

  torch_run torch-trace 30 NCCLFI_TRACE_OPS=1
  t0=$(count_events torch-trace op_enqueue 0); t1=$(count_events torch-trace op_enqueue 1)
  a0=$(count_events torch-trace op_enqueue 0 op=allreduce)
  check torch-trace $([[ $(cat "$LOG/torch-trace.exit") == 0 && $a0 -ge 30 && $t1 -ge 30 ]]; echo $?) \
    "collectives seen: rank 0 $t0 ops ($a0 allreduce), rank 1 $t1; exit $(cat "$LOG/torch-trace.exit")"

  on1='"target": {"ranks": [1], "ops": ["allreduce"]}'
  torch_run torch-hang 200 NCCLFI_PLAN="$(plan torch-hang "[{\"id\": \"h\", \"layer\": \"api\", \"kind\": \"hang\", $on1, \"trigger\": {\"after_calls\": 20}}]")"
  inj=$(inject_time torch-hang); seen=$(cat "$LOG/torch-hang.timeout_seen" 2>/dev/null)
  lat=$(awk -v a="$inj" -v b="$seen" 'BEGIN {if (a == "" || b == "") print "none"; else printf "%.1f", b - a}')
  grep -m1 "Watchdog caught collective operation timeout" "$LOG/torch-hang.log" | cut -c1-300 >"$LOG/torch-hang.watchdog.txt"
  check torch-hang $([[ $lat != none ]] && grep -qE "Rank 0|rank 0|rank0" "$LOG/torch-hang.watchdog.txt" &&
                     awk -v l="$lat" -v t="$PG_TIMEOUT_S" 'BEGIN {exit !(l <= t + 10)}'; echo $?) \
    "hang on rank 1: rank 0's watchdog timeout $lat s after the injection (pg timeout $PG_TIMEOUT_S s); exit $(cat "$LOG/torch-hang.exit"): $(cat "$LOG/torch-hang.watchdog.txt")"

  torch_run torch-async 200 NCCLFI_PLAN="$(plan torch-async "[{\"id\": \"a\", \"layer\": \"api\", \"kind\": \"async_error\", \"params\": {\"code\": \"ncclRemoteError\"}, $on1, \"trigger\": {\"after_calls\": 20}}]")"
  grep -m3 -iE "ncclRemoteError|remote process|NCCL error|watchdog thread terminated|ProcessGroupNCCL.*abort" "$LOG/torch-async.log" | cut -c1-300 >"$LOG/torch-async.detected.txt"
  check torch-async $([[ $(cat "$LOG/torch-async.exit") != 0 && -s $LOG/torch-async.detected.txt ]]; echo $?) \
    "async_error on rank 1 tears the job down: exit $(cat "$LOG/torch-async.exit"): $(head -1 "$LOG/torch-async.detected.txt")"
fi

say "== $( [[ $FAILED -eq 0 ]] && echo ALL PASSED || echo SOME FAILED )"
exit $FAILED
