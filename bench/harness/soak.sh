#!/usr/bin/env bash
# A soak of COUNT scenarios (default 1000) in one `ncclfi run`: copies of four fast CPU scenarios, each
# copy under a name of its own, cycled (an injected NCCL error, corrupt data caught by the check, a
# killed rank, a clean 8-rank ring). bench/harness/proc_watch.py samples the harness every second: its
# open descriptors, resident memory, living descendants and the entries in its private TMPDIR. Prints
# one name=value line per figure: first_* is the first sample after the first run directory appeared,
# last_* the last sample before the harness exited (goal: no growth between them), peak_*, the wall
# time and how many verdicts passed. early_min_* and late_min_* are the least of each figure over the
# first and the last tenth of the samples: what the harness holds between two scenarios.
#   bench/harness/soak.sh [COUNT]      BUILD_DIR (default build)
set -euo pipefail
source "$(dirname "$0")/preamble.sh" soak
count="${1:-1000}"
mkdir -p "$work/scenarios" "$work/tmp"
python3 - "$count" "$work/scenarios" <<'PY'
import json, sys
count, out = int(sys.argv[1]), sys.argv[2]
cycle = ["net-error-isend", "net-corrupt-detected", "proc-kill-rank", "cpu-ring-8-ranks-clean"]
for i in range(count):
    base = cycle[i % len(cycle)]
    doc = json.load(open(f"scenarios/cpu/{base}.json"))
    doc["name"] = f"soak-{i:04d}-{base}"
    doc["baseline"] = False  # the soak is about the harness's resources, not the faults' timing
    json.dump(doc, open(f"{out}/{doc['name']}.json", "w"))
PY
echo "scenarios=$count cpus=$(nproc)"
TMPDIR="$work/tmp" python3 bench/harness/proc_watch.py --interval 1 --runs-dir "$work/runs" \
  --tmp-glob "$work/tmp/*" -- "$ncclfi" run "$work/scenarios" --out "$work/runs" -q \
  --summary "$work/summary.json" >"$work/watch" 2>"$work/err" || true
grep -E "^(exit_status|wall_s|harness_cores|first_|last_|early_|late_|peak_)" "$work/watch"
python3 - "$work/summary.json" <<'PY'
import collections, json, sys
s = json.load(open(sys.argv[1]))
verdicts = collections.Counter(r["status"] for r in s["runs"])  # the suite's summary.json
print("verdicts=" + ",".join(f"{k}:{v}" for k, v in sorted(verdicts.items(), key=str)))
PY
left=$(find "$work/tmp" -mindepth 1 | wc -l)
echo "tmp_entries_after_exit=$left"
tail -3 "$work/err" >&2 || true
