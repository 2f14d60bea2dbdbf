#!/usr/bin/env bash
# The net shim under CPU contention. ncclfi-bench-net (the shim's pass-through against a plain TCP
# stream, side by side in each round) runs pinned to two CPUs, first with both idle, then with a busy
# loop pinned to one of the two: a host where another process keeps one of the transport's cores busy.
# Prints the bench's figures for each, prefixed idle_ and busy_. Goal: busy_net_shim_vs_tcp >= 0.9.
#   bench/net/contention.sh [CPU_A CPU_B, default the last two CPUs] [MiB per round] [rounds]
#   BUILD_DIR (default build); PLUGIN (default: the build's libnccl-net-ncclfi.so); NCCLFI_NET_PROGRESS etc. pass through to the shim.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR="${BUILD_DIR:-build}"
bench="$BUILD_DIR/bin/ncclfi-bench-net"
[[ -x "$bench" ]] || { echo "contention: no ncclfi-bench-net in $BUILD_DIR/bin" >&2; exit 2; }
last=$(($(nproc) - 1))
(( last >= 1 )) || { echo "contention: needs at least 2 CPUs" >&2; exit 2; }
cpu_a="${1:-$((last - 1))}"
cpu_b="${2:-$last}"
mib="${3:-256}"
rounds="${4:-7}"
echo "cpus=$cpu_a,$cpu_b busy_cpu=$cpu_a mib=$mib rounds=$rounds"
taskset -c "$cpu_a,$cpu_b" "$bench" "${PLUGIN:-}" "$mib" "$rounds" | sed 's/^/idle_/'
taskset -c "$cpu_a" sh -c 'while :; do :; done' &
spinner=$!
trap 'kill $spinner 2>/dev/null || true' EXIT
taskset -c "$cpu_a,$cpu_b" "$bench" "${PLUGIN:-}" "$mib" "$rounds" | sed 's/^/busy_/'
