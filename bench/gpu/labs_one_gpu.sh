#!/usr/bin/env bash
# Plays every one-GPU training lab (scenarios/labs/*.json with "needs": "one_gpu") on a host with one GPU,
# the way the CPU labs are tested (tests/labs/lab_play.sh): two variants, a wrong answer, a hint, the right
# answer from the key, the gradebook, and the scan of every workspace file for the ground truth. The ranks
# of each job share the GPU (shared-GPU mode, docs/scenarios.md).
#   BUILD=build bench/gpu/labs_one_gpu.sh        # writes $OUT/labs_one_gpu.txt (OUT defaults to ./out)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
out=${OUT:-out}
mkdir -p "$out"
summary=$out/labs_one_gpu.txt
: >"$summary"
nvidia-smi -L >>"$summary" 2>&1 || echo "no nvidia-smi" >>"$summary"
pass=0 fail=0
for file in scenarios/labs/*.json; do
  needs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["needs"])' "$file")
  [[ "$needs" == one_gpu ]] || continue
  lab=$(basename "$file" .json)
  start=$(date +%s)
  if bash tests/labs/lab_play.sh "$build/bin/ncclfi" scenarios/labs "$lab" "$out/labs/$lab" >"$out/$lab.log" 2>&1; then
    pass=$((pass + 1)); verdict=PASS
  else
    fail=$((fail + 1)); verdict=FAIL
  fi
  echo "$verdict $lab ($(( $(date +%s) - start )) s): $(tail -n1 "$out/$lab.log")" | tee -a "$summary"
done
echo "one-GPU labs: $pass passed, $fail failed" | tee -a "$summary"
((fail == 0))
