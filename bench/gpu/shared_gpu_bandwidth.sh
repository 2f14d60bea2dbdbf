#!/usr/bin/env bash
# bench/gpu/shared_gpu_bandwidth.sh: shared-GPU mode's figures, through the product itself
# (`ncclfi run --gpu-sharing always`: two ranks on one GPU, each a host of its own over the network
# path). Side by side in one run, alternating: NCCL's Socket transport time-sliced (--mps never), Socket
# with ncclfi's own MPS daemon, and the ncclfi shim with MPS; an 8 B all_reduce (time, us) and a 1 GiB
# one (bus bandwidth, GB/s), best of ROUNDS. Figures only (no budget): the mode is for fault drills on
# a small host, not for bandwidth. Run through scripts/gpu-check (BUILD, OUT). Exit 1 if a run failed.
set -uo pipefail

BUILD=${BUILD:-build}
OUT=${OUT:-$PWD/gpu-out}
LOG=$OUT
ROUNDS=${ROUNDS:-2}
NCCLFI=$BUILD/bin/ncclfi
mkdir -p "$LOG"
: >"$LOG/summary.txt"
# shellcheck source=bench/gpu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ -x $NCCLFI ]] || { echo "shared_gpu_bandwidth.sh: $NCCLFI not found (BUILD=$BUILD)" >&2; exit 1; }

# scenario NAME BYTES ITERS LAYERS_JSON ENV_JSON: a 2-rank all_reduce that must run clean.
scenario() {
  cat >"$LOG/$1.json" <<JSON
{"name": "$1", "summary": "shared-GPU bandwidth", "requires": {"gpus": 2},
 "workload": {"builtin": "nccl-workload", "ranks": 2, "args": ["--op", "allreduce", "--bytes", "$2", "--iters", "$3", "--check"]},
 "layers": $4, "env": $5, "deadline_s": 180, "baseline": false, "expect": {"outcome": "clean"}}
JSON
}
# measure NAME MPS COLUMN: runs the scenario; FIGURE = the column of rank 0's last result line.
FIGURE=0
measure() {
  "$NCCLFI" run "$LOG/$1.json" --out "$LOG/runs" --gpu-sharing always --mps "$2" -q >"$LOG/$1-mps-$2.out" 2>&1
  local rc=$?
  check "$1-mps-$2" $rc "ncclfi run exit $rc (0: clean, verified)"
  FIGURE=$(awk -v c="$3" '!/^#/ && NF >= 10 && $9 ~ /^[0-9.]+$/ {v=$c} END {print v+0}' \
    "$LOG/runs/$1/latest/attempt-0/rank-0.log")
}

SOCKET='{"NCCL_NET": "Socket", "NCCL_NVLS_ENABLE": "0"}'
SHIM='{"NCCL_NVLS_ENABLE": "0"}'
scenario socket-8 8 200 '[]' "$SOCKET"
scenario socket-1g 1G 10 '[]' "$SOCKET"
scenario shim-8 8 200 '["net"]' "$SHIM"
scenario shim-1g 1G 10 '["net"]' "$SHIM"

declare -A best_us best_bw
for cfg in "socket never" "socket auto" "shim auto"; do
  best_us[$cfg]=1e12; best_bw[$cfg]=0
done
for round in $(seq 1 "$ROUNDS"); do
  for cfg in "socket never" "socket auto" "shim auto"; do
    read -r net mps <<<"$cfg"
    measure "$net-8" "$mps" 7
    us=$FIGURE
    measure "$net-1g" "$mps" 9
    bw=$FIGURE
    best_us[$cfg]=$(calc "($us > 0 && $us < ${best_us[$cfg]}) ? $us : ${best_us[$cfg]}")
    best_bw[$cfg]=$(calc "($bw > ${best_bw[$cfg]}) ? $bw : ${best_bw[$cfg]}")
  done
done
say ""
say "$(printf '%-22s %14s %16s' 'two ranks, one GPU' '8 B time (us)' '1 GiB busbw GB/s')"
for cfg in "socket never" "socket auto" "shim auto"; do
  read -r net mps <<<"$cfg"
  label="$net, MPS $([ "$mps" = auto ] && echo on || echo off)"
  say "$(printf '%-22s %14.1f %16.2f' "$label" "${best_us[$cfg]}" "${best_bw[$cfg]}")"
done
grep -h '"mps"' "$LOG"/runs/*/latest/verdict.json 2>/dev/null | sort | uniq -c | tee -a "$LOG/summary.txt"
say "logs in $LOG"
exit $FAILED
