#!/usr/bin/env bash
# How often `ncclfi diagnose`, from the logs alone, names the truth: runs the CPU catalogue and every
# cause of every CPU lab (two seeds each), scores them with `ncclfi score` and fails below the floors given.
#   score_floor.sh NCCLFI SCENARIOS LABS OUT MIN_RANK_SITE MIN_SYMPTOM
# NCCLFI_SCORE_SEEDS (default "1 2"): the seeds each cause is started with. CI gives one (half the lab
# jobs); the floors are fractions of the cases scored, so the same floors hold.
# The floors are what was measured when they were set (docs/diagnose.md), so a change that makes the
# diagnosis worse fails here; raise them as it improves.
set -euo pipefail
ncclfi=$1 scenarios=$2 labs=$3 out=$4 min_rank_site=$5 min_symptom=$6
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The catalogue, beside the labs: verdicts do not matter here (the e2e tests judge them), only the runs'
# logs and truth.
"$ncclfi" run -q --out "$out/cpu" "$scenarios"/*.json >"$out/run.log" 2>&1 &
catalogue=$!
trap 'kill "$catalogue" 2>/dev/null || true' EXIT  # ncclfi run tears its jobs down on SIGTERM
# Every cause of every CPU lab, once per seed: `--cause` with a seed, which draws the rank and the other
# values.
read -r -a seeds <<<"${NCCLFI_SCORE_SEEDS:-1 2}"
((${#seeds[@]})) || fail "NCCLFI_SCORE_SEEDS is empty (expected seeds such as \"1 2\")"
mapfile -t cpu_causes < <("$(dirname "$0")/../../scripts/lab-causes" cpu "$labs")
for entry in "${cpu_causes[@]}"; do
  read -r lab cause <<<"$entry"
  for seed in "${seeds[@]}"; do
    "$ncclfi" lab start "$lab" --student "score-$cause-$seed" --cause "$cause" --seed "$seed" \
      --dir "$out/ws/$lab-$cause-$seed" --key-dir "$out/keys" --catalogue "$labs" >"$out/start.log" 2>&1 ||
      fail "lab start $lab --cause $cause --seed $seed exited $?: $(tail -n3 "$out/start.log")"
  done
done

wait "$catalogue" || true

status=0
"$ncclfi" score "$out/cpu" "$out/keys" --json "$out/score.json" \
  --min-rank-site "$min_rank_site" --min-symptom "$min_symptom" || status=$?
python3 - "$out/score.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
runs = sum(1 for c in s["cases"] if c["kind"] == "run")
labs = sum(1 for c in s["cases"] if c["kind"] == "lab")
print(f"score: {runs} catalogue runs, {labs} lab variants; errors: {len(s['errors'])}")
for name, a in s["accuracy"].items():
    print(f"score: {name} {a['right']}/{a['scored']}")
PY
[[ $status == 0 ]] || fail "ncclfi score exited $status (below a floor, or nothing to score)"
# Every run and every variant was scored: a case lost is a figure that means less.
python3 - "$out/score.json" <<'PY' || fail "cases were not scored"
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(1 if s["errors"] else 0)
PY
