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
  # A slow lab teaches nothing unless today's steps are slower than last week's: the medians, side by side.
  for ws in "$out/labs/$lab"/ws-*; do
    [[ -f "$ws/today/step_times.csv" && -f "$ws/last-week/step_times.csv" ]] || continue
    python3 - "$ws" <<'PY' | tee -a "$summary"
import csv, statistics, sys
ws = sys.argv[1]
med = {}
for job in ("last-week", "today"):
    rows = list(csv.DictReader(open(f"{ws}/{job}/step_times.csv")))
    med[job] = statistics.median(float(r["duration_ms"]) for r in rows) if rows else float("nan")
print(f"  {ws.rsplit('/', 1)[-1]}: median step {med['last-week']:.2f} ms last week, {med['today']:.2f} ms today "
      f"({med['today'] / med['last-week']:.2f}x)")
PY
  done
done
echo "one-GPU labs: $pass passed, $fail failed" | tee -a "$summary"
((fail == 0))
