#!/usr/bin/env bash
# bench/gpu/net_bandwidth.sh: the net shim's performance budget on 2 GPUs of one host, NCCL forced onto
# the network path (P2P and SHM off). Checks that NCCL uses the ncclfi network (NCCL_DEBUG=INFO), then
# compares bus bandwidth of ncclfi against NCCL's built-in Socket transport side by side (alternating
# rounds, same sizes; budget: ncclfi >= Socket). Faults through the shim are judged by the product:
# scenarios/gpu/gpu-net-*.json (`ctest -L gpu`). Run through scripts/gpu-check (BUILD: a built or
# copied build directory; OUT: logs, summary.txt). Exit 0 within budget, 1 otherwise.
# Knobs: OPS, SIZES, ITERS, ROUNDS, PORT, RUN_TIMEOUT_S, NCCLFI_NET_NSOCKS / NCCLFI_NET_NTHREADS.
set -uo pipefail

BUILD=${BUILD:-build}
OUT=${OUT:-$PWD/gpu-out}
LOG=$OUT
WORKLOAD=$BUILD/bin/ncclfi-workload
PLUGIN=$(cd "$BUILD/lib" 2>/dev/null && pwd)/libnccl-net-ncclfi.so
OPS=${OPS:-"allreduce allgather reducescatter broadcast sendrecv"}
SIZES=${SIZES:-"128M 1G"}
ITERS=${ITERS:-20}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-29700}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-600}
mkdir -p "$LOG"
: >"$LOG/summary.txt"

for f in "$WORKLOAD" "$PLUGIN"; do
  [[ -e $f ]] || { echo "net_bandwidth.sh: $f not found (BUILD=$BUILD)" >&2; exit 1; }
done

# NET forced between the two GPUs of this host.
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0
# shellcheck source=bench/gpu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
busbw() { col "$1" 9; }

SHIM_ENV=(NCCL_NET_PLUGIN="$PLUGIN" NCCL_NET=ncclfi)
SOCKET_ENV=(NCCL_NET_PLUGIN=none NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo)

# 1. NCCL uses our plugin.
launch plugin-in-use "${SHIM_ENV[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET -- \
  --op allreduce --bytes 8M --iters 5 --check
grep -hi "ncclfi" "$LOG/plugin-in-use.rank0.log" | head -20 >"$LOG/plugin-in-use.txt"
grep -qiE "Using network ncclfi|NET/ncclfi" "$LOG/plugin-in-use.rank0.log"
check plugin-in-use $? "NCCL log names the ncclfi network (see plugin-in-use.txt); exit $(exit_codes plugin-in-use)"

# 2. Correctness and bus bandwidth, ncclfi vs Socket, alternating rounds; best of ROUNDS each.
say ""
say "$(printf '%-14s %6s %14s %14s %8s' op size socket_busbw ncclfi_busbw ratio)"
for op in $OPS; do
  for size in $SIZES; do
    best_sock=0; best_shim=0
    for round in $(seq 1 "$ROUNDS"); do
      launch "bw-socket-$op-$size-r$round" "${SOCKET_ENV[@]}" -- --op "$op" --bytes "$size" --iters "$ITERS" --check
      launch "bw-ncclfi-$op-$size-r$round" "${SHIM_ENV[@]}" -- --op "$op" --bytes "$size" --iters "$ITERS" --check
      for kind in socket ncclfi; do
        name="bw-$kind-$op-$size-r$round"
        [[ $(exit_codes "$name") == "0 0" ]]
        check "$name" $? "exit $(exit_codes "$name") (0 0 = verified)"
      done
      s=$(busbw "bw-socket-$op-$size-r$round"); n=$(busbw "bw-ncclfi-$op-$size-r$round")
      best_sock=$(calc "($s > $best_sock) ? $s : $best_sock")
      best_shim=$(calc "($n > $best_shim) ? $n : $best_shim")
    done
    ratio=$(calc "($best_sock > 0) ? $best_shim / $best_sock : 0")
    say "$(printf '%-14s %6s %14.2f %14.2f %8.3f' "$op" "$size" "$best_sock" "$best_shim" "$ratio")"
    [[ $(calc "($ratio >= 1.0) ? 1 : 0") -eq 1 ]]
    check "busbw-$op-$size" $? "ncclfi $best_shim GB/s vs Socket $best_sock GB/s (ratio $ratio, goal >= 1)"
  done
done
say ""
say "logs in $LOG"
exit $FAILED
