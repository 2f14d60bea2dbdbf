#!/usr/bin/env bash
# `ncclfi diagnose` on real NCCL logs: starts every cause of every one-GPU lab (scenarios/labs/*.json with
# "needs": "one_gpu") with two seeds, the ranks sharing the GPU, then scores the diagnosis of each
# workspace's logs against its key (`ncclfi score`). Writes $OUT/score_one_gpu.txt, the score's JSON and
# the workspaces (workspaces.tgz) to read the evidence afterwards.
#   BUILD=build bench/gpu/score_one_gpu_labs.sh      # OUT defaults to ./out
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
out=${OUT:-out}
ncclfi=$build/bin/ncclfi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
summary=$out/score_one_gpu.txt
: >"$summary"
mapfile -t causes < <(scripts/lab-causes one_gpu scenarios/labs)
for entry in "${causes[@]}"; do
  read -r lab cause <<<"$entry"
  for seed in 1 2; do
    if ! "$ncclfi" lab start "$lab" --student "gpu-$cause-$seed" --cause "$cause" --seed "$seed" \
      --dir "$work/ws/$lab-$cause-$seed" --key-dir "$work/keys" --catalogue scenarios/labs >"$work/start.log" 2>&1; then
      echo "lab start $lab --cause $cause --seed $seed failed: $(tail -n3 "$work/start.log")" | tee -a "$summary"
    fi
  done
done
"$ncclfi" score "$work/keys" --json "$out/score_one_gpu.json" 2>&1 | tee -a "$summary"
tar czf "$out/workspaces.tgz" -C "$work" ws
