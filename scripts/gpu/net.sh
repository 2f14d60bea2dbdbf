#!/usr/bin/env bash
# scripts/gpu/net.sh: the net shim on 2 GPUs of one host with NCCL forced onto the network path
# (nccl-facts.md section 3). Run from the repo root with a copied build dir:
#   BUILD=build OUT=/tmp/gpu-out scripts/gpu/net.sh
# It checks that NCCL uses our plugin (NCCL_DEBUG=INFO), compares bus bandwidth of ncclfi against NCCL's
# built-in Socket transport side by side (alternating rounds, same sizes), and injects drop, corrupt and
# error through NCCLFI_PLAN. Logs, event logs and summary.txt go to $OUT/net/. Exit 0 when every check
# passes, 1 otherwise.
# Knobs: OPS, SIZES, ITERS, ROUNDS, PORT, RUN_TIMEOUT_S, NCCLFI_NET_NSOCKS / NCCLFI_NET_NTHREADS.
set -uo pipefail

BUILD=${BUILD:-build}
OUT=${OUT:-$PWD/gpu-out}
LOG=$OUT/net
WORKLOAD=$BUILD/bin/ncclfi-workload
PLUGIN=$PWD/$BUILD/lib/libnccl-net-ncclfi.so
OPS=${OPS:-"allreduce allgather reducescatter broadcast sendrecv"}
SIZES=${SIZES:-"128M 1G"}
ITERS=${ITERS:-20}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-29700}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-600}
mkdir -p "$LOG"
: >"$LOG/summary.txt"

for f in "$WORKLOAD" "$PLUGIN"; do
  [[ -e $f ]] || { echo "net.sh: $f not found (BUILD=$BUILD)" >&2; exit 1; }
done

# NET forced between the two GPUs of this host.
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0
# shellcheck source=scripts/gpu/lib.sh
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

# 3. Faults through NCCLFI_PLAN.
plan() { echo "{\"seed\": 1, \"faults\": [$1]}" >"$LOG/$2.plan.json"; echo "$LOG/$2.plan.json"; }
FAULT_ARGS=(--op allreduce --bytes 128M --iters 200 --timeout-s 20)

# drop: one receive completion never comes; the job hangs until its own watchdog (exit 3).
p=$(plan '{"id": "drop1", "layer": "net", "kind": "drop", "target": {"ranks": [1], "direction": "recv"},
           "trigger": {"after_calls": 400}}' fault-drop)
launch fault-drop "${SHIM_ENV[@]}" NCCLFI_PLAN="$p" -- "${FAULT_ARGS[@]}" --check
grep -q '"event":"inject"' "$LOG/fault-drop.events.jsonl" 2>/dev/null && [[ $(exit_codes fault-drop) == *3* ]]
check fault-drop $? "exit $(exit_codes fault-drop) after $(secs fault-drop) s (want a 3: watchdog)"

# corrupt: bits flipped in one received chunk; the job's --check reports wrong results (exit 4).
p=$(plan '{"id": "flip", "layer": "net", "kind": "corrupt", "params": {"bits": 8}, "target": {"ranks": [1]},
           "trigger": {"after_calls": 400}}' fault-corrupt)
launch fault-corrupt "${SHIM_ENV[@]}" NCCLFI_PLAN="$p" -- "${FAULT_ARGS[@]}" --check
[[ $(exit_codes fault-corrupt) == *4* ]]
check fault-corrupt $? "exit $(exit_codes fault-corrupt) (want a 4: verification)"

# error: isend returns ncclRemoteError; NCCL reports it through ncclCommGetAsyncError (exit 5).
p=$(plan '{"id": "nic", "layer": "net", "kind": "error", "params": {"code": "ncclRemoteError"},
           "target": {"ranks": [0], "ops": ["isend"]}, "trigger": {"after_calls": 400}}' fault-error)
launch fault-error "${SHIM_ENV[@]}" NCCLFI_PLAN="$p" NCCL_DEBUG=WARN -- "${FAULT_ARGS[@]}" --check
grep -qi "ncclCommGetAsyncError" "$LOG"/fault-error.rank*.log && [[ $(exit_codes fault-error) == *5* ]]
check fault-error $? "exit $(exit_codes fault-error) (want a 5: async error from ncclCommGetAsyncError)"

say ""
say "logs in $LOG"
exit $FAILED
