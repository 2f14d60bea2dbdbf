#!/usr/bin/env bash
# bench/gpu/preload_overhead.sh: libncclfi-preload.so's performance budget on a real 2-GPU host, nothing
# armed: all_reduce bus bandwidth at 1 GiB and 8-byte latency, plain vs preloaded, alternating rounds side
# by side (budgets: 0.5% and 2%), and the preload prints nothing. The same comparison on nccl-tests'
# all_reduce_perf when NCCL_TESTS_DIR points at a built nccl-tests. What each api fault does is judged by
# the product: scenarios/gpu/gpu-api-*.json and ddp-*.json (`ctest -L gpu`).
# Run through scripts/gpu-check (BUILD: a built or copied build directory; OUT: logs, summary.txt).
# Exit 0 within budget, 1 otherwise. Knobs: ROUNDS, PORT, RUN_TIMEOUT_S.
set -uo pipefail

BUILD=${BUILD:-build}
OUT=${OUT:-$PWD/gpu-out}
LOG=$OUT
WORKLOAD=$BUILD/bin/ncclfi-workload
PRELOAD=$(cd "$BUILD/lib" 2>/dev/null && pwd)/libncclfi-preload.so
ROUNDS=${ROUNDS:-5}
PORT=${PORT:-29800}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-90}
mkdir -p "$LOG"
: >"$LOG/summary.txt"
export NCCL_NVLS_ENABLE=0
# shellcheck source=bench/gpu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ -e $WORKLOAD && -e $PRELOAD ]] || { echo "preload_overhead.sh: need $WORKLOAD and $BUILD/lib/libncclfi-preload.so" >&2; exit 1; }

PRE=(LD_PRELOAD="$PRELOAD")

# ------------------------------------------------------------------------------------------------ perf
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

# ------------------------------------------------------------------------------------- perf-nccltests
# The same comparison on nccl-tests' all_reduce_perf (a real external workload, one process driving both
# GPUs through ncclCommInitAll): its back-to-back timed loop gives steadier small-message latency than a
# per-step-checked workload. Runs when NCCL_TESTS_DIR points at a built nccl-tests.
if [[ -x ${NCCL_TESTS_DIR:-/nonexistent}/build/all_reduce_perf ]]; then
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

say "== $( [[ $FAILED -eq 0 ]] && echo ALL PASSED || echo SOME FAILED )"
exit $FAILED
