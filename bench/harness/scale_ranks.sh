#!/usr/bin/env bash
# The harness at scale: one host runs RANKS cpu-ring ranks (default 1024), twice. First a clean job (20
# all-reduces of 64 KiB, verified), then the same job with every rank stopped (SIGSTOP) after 3 s, so
# that the harness's deadline (30 s) tears down RANKS stopped processes. Each run is watched from /proc by
# bench/harness/proc_watch.py. Prints one name=value line per figure, prefixed clean_ or hung_:
#   start_s            first `launch` event to the last rank's `start` event (every rank up and in the ring)
#   teardown_s         clean: the last `done` event to the moment no rank process is left;
#                      hung: the `deadline` event to the moment no rank process is left
#   harness_cpu_share  the harness's own CPU time over the CPU time of the harness and all its ranks
#   harness_cores      the harness's own CPU time over the wall time
#   verdict            the verdict's status (clean: pass; hung: pass, the scenario expects `hung`)
#   bench/harness/scale_ranks.sh [RANKS]      BUILD_DIR (default build)
set -euo pipefail
source "$(dirname "$0")/preamble.sh" scale
ranks="${1:-1024}"
echo "ranks=$ranks cpus=$(nproc) open_files_soft=$(ulimit -Sn) open_files_hard=$(ulimit -Hn)"

scenario() {  # NAME ITERS TIMEOUT_S FAULTS_JSON EXPECT_JSON DEADLINE_S
  cat >"$work/$1.json" <<JSON
{
  "name": "$1",
  "summary": "$ranks cpu-ring ranks on one host (bench/harness/scale_ranks.sh)",
  "workload": {"builtin": "cpu-ring", "ranks": $ranks,
               "args": ["--iters", "$2", "--bytes", "64K", "--timeout-s", "$3", "--check"]},
  "launcher": {"kind": "local"},
  "faults": $4,
  "baseline": false,
  "deadline_s": $6,
  "expect": $5
}
JSON
}
scenario clean 20 120 '[]' '{"outcome": "clean", "result": "verified"}' 300
scenario hung 1000000 10 '[{"id": "stop-all", "layer": "proc", "kind": "stop", "target": {"ranks": "all"},
                 "trigger": {"after_ms": 3000}}]' '{"outcome": "hung"}' 30

for name in clean hung; do
  python3 bench/harness/proc_watch.py --interval 0.02 -- \
    "$ncclfi" run "$work/$name.json" --out "$work/runs" -q >"$work/$name.watch" 2>"$work/$name.err" || true
  run_dir=$(readlink -f "$work/runs/$name/latest")
  python3 - "$name" "$run_dir" "$work/$name.watch" <<'PY'
import json, sys
name, run_dir, watch = sys.argv[1:]
figures = dict(line.strip().split("=", 1) for line in open(watch) if "=" in line)
first_launch = last_start = last_done = deadline = None
for line in open(f"{run_dir}/events.jsonl"):
    e = json.loads(line)
    t = e["ts_ns"]
    if e["event"] == "launch":
        first_launch = t if first_launch is None else min(first_launch, t)
    elif e["event"] == "start":
        last_start = t if last_start is None else max(last_start, t)
    elif e["event"] == "done":
        last_done = t if last_done is None else max(last_done, t)
    elif e["event"] == "deadline":
        deadline = t
verdict = json.load(open(f"{run_dir}/verdict.json"))
gone = min(t for t in (int(figures.get("all_gone_ns", "0")), int(figures["exit_ns"])) if t > 0)
end = deadline if name == "hung" else last_done
out = {
    "exit_status": figures["exit_status"],
    "verdict": verdict.get("verdict"),
    "start_s": f"{(last_start - first_launch) / 1e9:.2f}" if first_launch and last_start else "n/a",
    "teardown_s": f"{(gone - end) / 1e9:.2f}" if gone and end else "n/a",
    "wall_s": figures["wall_s"],
    "harness_cpu_s": figures["harness_cpu_s"],
    "total_cpu_s": figures["total_cpu_s"],
    "harness_cpu_share": figures["harness_cpu_share"],
    "harness_cores": figures["harness_cores"],
    "peak_ranks": figures.get("peak_descendants", "0"),
    "peak_rss_mb": figures.get("peak_rss_mb", "0"),
    "peak_fds": figures.get("peak_fds", "0"),
}
for k, v in out.items():
    print(f"{name}_{k}={v}")
PY
  tail -3 "$work/$name.err" | sed "s/^/$name stderr: /" >&2 || true
done
