#!/usr/bin/env bash
# tests/gpu/net_wrap_gdr.sh OUT_DIR: wrap mode on NCCL's GPUDirect path, on one GPU, through the product.
# Two ranks share the GPU (`ncclfi run --gpu-sharing always --mps never`: a host per rank, NCCL_HOSTID, so
# NCCL takes the network path); the net shim wraps libnccl-net-ncclfi-test-gdr.so (tests/gpu/fixtures/, a
# test fixture that advertises NCCL_PTR_CUDA and stages device bytes over loopback TCP: no RDMA NIC is
# used), and NCCL_NET_GDR_LEVEL=SYS lets NCCL register its device buffers with it (the fixture is a NIC
# without a PCI path, which NCCL attaches to the CPU).
# STATUS: does not pass yet. On an H200 (NCCL 2.28.3) NCCL takes the GDRDMA path but the healthy run hangs at
# its first all_reduce, with or without the shim: the fixture does not yet stand in for a GPUDirect NIC well
# enough for NCCL's kernels. Not a ctest; gpu.net_device_corrupt proves the shim's device corrupt instead.
#   1. healthy: a verified all_reduce; NCCL's channel lines go "via NET/ncclfi/0/GDRDMA".
#   2. corrupt: the shim flips 8 bits of a chunk rank 1 receives in device memory; the workload's check
#      (--check) reports the wrong result (verdict: detected by verification); the inject event says
#      "memory": "device".
# Writes OUT_DIR/summary.txt (PASS/FAIL lines), healthy.log, corrupt.log (verdict summaries and both ranks'
# output) and events.jsonl (both runs' events, each line tagged with its run): four files.
# BUILD: the build directory with bin/ and lib/ (default: build). Exit 0 all passed, 1 a check failed,
# 77 SKIPPED (no GPU).
set -uo pipefail
OUT=${1:?usage: tests/gpu/net_wrap_gdr.sh OUT_DIR}
BUILD=${BUILD:-build}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BUILD=$(cd "$BUILD" && pwd) || exit 1
summary=$OUT/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [[ ${ngpu:-0} -lt 1 ]]; then
  say "SKIPPED: no GPU visible (nvidia-smi -L)"
  exit 77
fi
NCCLFI=$BUILD/bin/ncclfi
FIXTURE=$BUILD/lib/libnccl-net-ncclfi-test-gdr.so
for f in "$NCCLFI" "$BUILD/bin/ncclfi-workload" "$BUILD/lib/libnccl-net-ncclfi.so" "$FIXTURE"; do
  [[ -e $f ]] || { say "FAIL: $f not built"; exit 1; }
done

work=$(mktemp -d /tmp/ncclfi-net-wrap-gdr.XXXXXX)
FAILED=0
check() {  # check NAME STATUS DETAIL
  if [[ $2 -eq 0 ]]; then say "PASS $1: $3"; else say "FAIL $1: $3"; FAILED=1; fi
}

# Wrap mode over the fixture (the scenarios' net_wrap). The scenarios' environment: GDR allowed at any
# distance and for sends, the Simple protocol (the send side keeps LL buffers in host memory even with GDR),
# NCCL's INFO lines for INIT and NET.
ENV_JSON='{"NCCL_NET_GDR_LEVEL": "SYS", "NCCL_NET_GDR_READ": "1", "NCCL_PROTO": "Simple",
 "NCCL_NVLS_ENABLE": "0", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}'
cat >"$work/net-wrap-gdr-healthy.json" <<JSON
{"name": "net-wrap-gdr-healthy", "summary": "wrap mode over a GPUDirect fixture: healthy, verified",
 "requires": {"gpus": 2}, "layers": ["net"],
 "workload": {"builtin": "nccl-workload", "ranks": 2,
              "args": ["--op", "allreduce", "--bytes", "32M", "--iters", "20", "--check", "--dtype", "float"]},
 "net_wrap": "$FIXTURE", "env": $ENV_JSON, "deadline_s": 240, "baseline": false, "expect": {"outcome": "clean"}}
JSON
cat >"$work/net-wrap-gdr-corrupt.json" <<JSON
{"name": "net-wrap-gdr-corrupt", "summary": "wrap mode over a GPUDirect fixture: 8 bits flip in a device receive",
 "requires": {"gpus": 2},
 "workload": {"builtin": "nccl-workload", "ranks": 2,
              "args": ["--op", "allreduce", "--bytes", "32M", "--iters", "200", "--check", "--dtype", "float",
                       "--timeout-s", "20"]},
 "net_wrap": "$FIXTURE", "env": $ENV_JSON,
 "faults": [{"id": "flip", "layer": "net", "kind": "corrupt", "params": {"bits": 8},
             "target": {"ranks": [1], "ops": ["irecv"]}, "trigger": {"after_calls": 100}}],
 "deadline_s": 240, "expect": {"outcome": "detected", "detected_by": ["verification"]}}
JSON

# run NAME: ncclfi on the scenario; its output, verdict summary and both ranks' logs into OUT/NAME.log.
run() {
  local name=$1 rc
  "$NCCLFI" run "$work/net-wrap-gdr-$name.json" --out "$work/runs" --gpu-sharing always --mps never \
    >"$work/$name.out" 2>&1
  rc=$?
  local dir=$work/runs/net-wrap-gdr-$name/latest
  {
    echo "### ncclfi run (exit $rc)"
    cat "$work/$name.out"
    echo "### verdict.json (all but the history)"
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); v.pop("history",None); print(json.dumps(v, indent=1)[:30000])' \
      "$dir/verdict.json" 2>&1
    for r in 0 1; do
      echo "### rank $r"
      cat "$dir/attempt-0/rank-$r.log" 2>&1
    done
  } >"$OUT/$name.log"
  sed "s/^{/{\"run\": \"$name\", /" "$dir/events.jsonl" >>"$OUT/events.jsonl" 2>/dev/null
  return $rc
}

: >"$OUT/events.jsonl"
run healthy
rc=$?
check healthy-verdict $rc "ncclfi run exit $rc (0: clean, every result verified)"
log=$OUT/healthy.log
grep -q 'initialised: backend wrap:ncclfi-test-gdr' "$log"
check healthy-wrap $? "the shim wraps the fixture ('initialised: backend wrap:ncclfi-test-gdr')"
n=$(grep -c 'via NET/ncclfi/[0-9]*/GDRDMA' "$log")
check healthy-gdrdma $((n > 0 ? 0 : 1)) "$n channel lines 'via NET/ncclfi/N/GDRDMA'"
# NCCL's two halves of the GDR decision: the NIC's (ptrSupport) and the GPU's with the distance. NCCL prints
# nothing for a GPU whose cudaDevAttrGPUDirectRDMASupported is 0.
n=$(grep -c 'GPU Direct RDMA Enabled for HCA' "$log")
check healthy-gdr-nic $((n > 0 ? 0 : 1)) "$n lines 'GPU Direct RDMA Enabled for HCA' (the fixture's NCCL_PTR_CUDA)"
n=$(grep -c 'GPU Direct RDMA Enabled for GPU' "$log")
check healthy-gdr-gpu $((n > 0 ? 0 : 1)) "$n lines 'GPU Direct RDMA Enabled for GPU' (the GPU capable, distance within NCCL_NET_GDR_LEVEL)"
grep -h 'GPU Direct RDMA Disabled' "$log" | head -n 2 | tee -a "$summary"

run corrupt
rc=$?
check corrupt-verdict $rc "ncclfi run exit $rc (0: detected by verification, as expected)"
device=$(grep '"run": "corrupt"' "$OUT/events.jsonl" | grep '"event":"inject"' | grep -c '"memory":"device"')
refused=$(grep '"run": "corrupt"' "$OUT/events.jsonl" | grep '"event":"inject"' | grep -c '"effect"')
check corrupt-device-inject $((device == 1 && refused == 0 ? 0 : 1)) \
  "$device inject event(s) with \"memory\":\"device\", $refused refused (want 1 and 0)"
mismatch=$(grep '"run": "corrupt"' "$OUT/events.jsonl" | grep -c '"event":"result_mismatch"')
check corrupt-mismatch $((mismatch > 0 ? 0 : 1)) "$mismatch result_mismatch event(s)"
grep -q 'flipped 8 bits in request [0-9]* (device memory)' "$OUT/corrupt.log"
check corrupt-shim-line $? "the shim's INFO line 'flipped 8 bits in request N (device memory)'"

rm -rf "$work"
say "$([[ $FAILED -eq 0 ]] && echo PASSED || echo FAILED): logs in $OUT"
exit $FAILED
