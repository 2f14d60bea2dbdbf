#!/usr/bin/env bash
# The harness's memory against the number of events a run writes. A two-rank `command` job whose
# ranks each write EVENTS/2 timed op events (bench/harness/op_events.py) is judged by `ncclfi run`,
# then re-rendered by `ncclfi report`, each under /usr/bin/time -v. Prints one name=value line per
# figure: peak RSS (MiB) and wall time of each, the size of events.jsonl and of verdict.json.
# Budget (docs/robustness.md): under 200 MB peak RSS for a million events.
#   bench/harness/history_memory.sh [EVENTS, default 1000000]      BUILD_DIR (default build)
set -euo pipefail
source "$(dirname "$0")/preamble.sh" history-memory
events="${1:-1000000}"
[[ -x /usr/bin/time ]] || { echo "history_memory: /usr/bin/time is not installed (Debian: time)" >&2; exit 2; }

cat >"$work/many-events.json" <<JSON
{
  "name": "many-events",
  "summary": "two ranks writing $events timed op events in all",
  "workload": {"command": ["python3", "$PWD/bench/harness/op_events.py", "$((events / 2))"], "ranks": 2},
  "launcher": {"kind": "command"},
  "baseline": false,
  "deadline_s": 900,
  "expect": {"outcome": "clean", "result": "verified"}
}
JSON

# measure NAME COMMAND...: runs it under /usr/bin/time -v, prints NAME_peak_rss_mb and NAME_wall_s.
measure() {
  local name=$1
  shift
  local rc=0
  /usr/bin/time -v "$@" >"$work/$name.out" 2>"$work/$name.time" || rc=$?
  if [[ $rc -ne 0 ]]; then
    tail -20 "$work/$name.out" "$work/$name.time" >&2
    echo "history_memory: $name exited $rc" >&2
    exit 1
  fi
  awk -v n="$name" -F': ' '
    /Maximum resident set size/ { printf "%s_peak_rss_mb=%.1f\n", n, $2 / 1024 }
    /Elapsed \(wall clock\)/ { k = split($2, t, ":"); s = 0; for (i = 1; i <= k; i++) s = s * 60 + t[i];
                              printf "%s_wall_s=%.1f\n", n, s }' "$work/$name.time"
}

echo "events=$events"
measure run "$ncclfi" run "$work/many-events.json" --out "$work/runs" -q
run_dir=$(readlink -f "$work/runs/many-events/latest")
measure report "$ncclfi" report "$run_dir"
echo "events_jsonl_mb=$(awk -v b="$(stat -c %s "$run_dir/events.jsonl")" 'BEGIN { printf "%.1f", b / 1048576 }')"
echo "verdict_json_kb=$(awk -v b="$(stat -c %s "$run_dir/verdict.json")" 'BEGIN { printf "%.1f", b / 1024 }')"
python3 - "$run_dir/verdict.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
h = v["history"]
held = sum(1 for e in h["events"] if e["event"] == "op")
counted = sum(f["count"] for f in h.get("folded", []) if f["event"] == "op")
print(f"verdict={v['verdict']}")
print(f"op_events_held={held}")
print(f"op_events_counted={counted}")
PY
