#!/usr/bin/env bash
# bench/gpu/workload_bandwidth.sh: ncclfi-workload's bus bandwidth on 2 GPUs of one host, every op at
# 8 B, 128 MiB and 1 GiB. With NCCL_TESTS_DIR (a directory holding nccl-tests' *_perf binaries) the
# figures are compared side by side with nccl-tests' (budget: ours at most 5% below theirs from 128 MiB
# up). Correctness of every op and dtype, hangs, errors, corruption and restarts are judged by the
# product: scenarios/gpu/*.json (`ctest -L gpu`). Run through scripts/gpu-check (BUILD: a built or
# copied build directory; OUT: logs, summary.txt). Exit 0 within budget, 1 otherwise.
# Knobs: PORT, RUN_TIMEOUT_S.
set -uo pipefail

BUILD=${BUILD:-build}
OUT=${OUT:-$PWD/gpu-out}
LOG=$OUT
WORKLOAD=$BUILD/bin/ncclfi-workload
PORT=${PORT:-29900}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-300}
mkdir -p "$LOG"
: >"$LOG/summary.txt"
export NCCL_NVLS_ENABLE=0
# shellcheck source=bench/gpu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ -x $WORKLOAD ]] || { echo "workload_bandwidth.sh: no $WORKLOAD (BUILD=$BUILD)" >&2; exit 1; }

launch bandwidth -- --op all_reduce,all_gather,reduce_scatter,broadcast,reduce,all_to_all,sendrecv \
  --bytes 8,128M,1G --iters 20 --warmup 5 --op-events 0
grep -v '^# rank' "$LOG/bandwidth.rank0.log" | tee -a "$LOG/summary.txt"
[[ $(exit_codes bandwidth) == "0 0" ]]
check bandwidth $? "figures above (busbw GB/s); exit $(exit_codes bandwidth)"

if [[ -n ${NCCL_TESTS_DIR:-} ]]; then
  for t in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
    if [[ -x $NCCL_TESTS_DIR/${t}_perf ]]; then
      "$NCCL_TESTS_DIR/${t}_perf" -b 128M -e 1G -f 8 -g 2 -n 20 -w 5 2>&1 | grep -E '^ +[0-9]' >"$LOG/nccl-tests-$t.txt"
    fi
  done
  python3 "$(dirname "${BASH_SOURCE[0]}")/compare_busbw.py" "$LOG/bandwidth.rank0.log" "$LOG" |
    tee -a "$LOG/summary.txt"
  check busbw-vs-nccl-tests "${PIPESTATUS[0]}" "ours at most 5% below nccl-tests from 128 MiB up"
else
  say "NCCL_TESTS_DIR unset: no nccl-tests comparison"
fi
exit $FAILED
