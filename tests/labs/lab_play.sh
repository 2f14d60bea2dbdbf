#!/usr/bin/env bash
# Plays one training lab end to end, as a student and an instructor would:
#   lab_play.sh NCCLFI CATALOGUE LAB [OUT]
# two seeds that draw different causes (different variants for a lab of one cause); a wrong answer graded
# wrong (exit 1); the student's debrief refused before the answer is final (exit 2); one hint, counted;
# the right answer from the key graded right (exit 0) with the hint and the wrong attempt subtracted; the
# gradebook; the student's debrief, quoting lines of the workspace; and a scan of every file of both
# workspaces for the ground truth (fault ids, injections, the plan, the fault kinds, and in the jobs'
# files every cause the lab can draw).
set -euo pipefail
ncclfi=$1 catalogue=$2 lab=$3
out=${4:-$(mktemp -d)}
keys=$out/keys
rm -rf "$out"  # a workspace must not exist before its start
mkdir -p "$out"
fail() { echo "FAIL ($lab): $*" >&2; exit 1; }
key_of() { "$ncclfi" lab key "$1" --key-dir "$keys"; }
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
draw() { "$ncclfi" lab draw "$lab" --seed "$1" --catalogue "$catalogue" | jq_ "$2"; }

start() {  # start SEED DIR: checks the last line names the workspace
  local log=$out/start-$1.log
  "$ncclfi" lab start "$lab" --student "s$1" --seed "$1" --dir "$2" --key-dir "$keys" --catalogue "$catalogue" \
    >"$log" 2>"$out/start-$1.err" || fail "start seed $1 exited $?: $(cat "$out/start-$1.err")"
  [[ "$(tail -n1 "$log")" == "workspace: $2" ]] || fail "start's last line is not 'workspace: $2'"
}

# Two seeds that draw different causes (`lab draw` runs nothing): seed 1, and the first after it whose
# cause differs; a lab of one cause takes the first seed whose variant differs.
causes=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1] + "/" + sys.argv[2] + ".json")).get("causes", [0])))' "$catalogue" "$lab")
what='d["cause_id"]'; [[ $causes == 1 ]] && what='d["variant"]'
drawn_a=$(draw 1 "$what")
seed_b=""
for s in $(seq 2 40); do
  if [[ "$(draw "$s" "$what")" != "$drawn_a" ]]; then seed_b=$s; break; fi
done
[[ -n "$seed_b" ]] || fail "seeds 1-40 all drew $drawn_a"
start 1 "$out/ws-a"
start "$seed_b" "$out/ws-b"
[[ "$(key_of "$out/ws-a" | jq_ "$what")" == "$drawn_a" ]] || fail "start drew another variant than lab draw"
# Every cause word and cause id the lab can draw: none may appear in what the jobs left.
lab_causes=$(python3 - "$catalogue" "$lab" <<'PY'
import json, sys
lab = json.load(open(sys.argv[1] + "/" + sys.argv[2] + ".json"))
words = set()
for c in lab.get("causes", []):
    words.add(c["id"])
    if not c["answer"]["cause"].startswith("{var:"):
        words.add(c["answer"]["cause"])
print("\n".join(sorted(words)))
PY
)

for ws in "$out/ws-a" "$out/ws-b"; do
  key=$(key_of "$ws")
  cause=$(jq_ 'd["answer"]["cause"]' <<<"$key")
  ranks=$(jq_ '" ".join("--rank %d" % r for r in (d["answer"]["ranks"] or [0]))' <<<"$key")
  details=$(jq_ '" ".join("--detail %s=%s" % kv for kv in d["answer"].get("details", {}).items())' <<<"$key")
  wrong=none; [[ "$cause" == none ]] && wrong=nic
  # shellcheck disable=SC2086
  if "$ncclfi" lab answer "$ws" $ranks --cause "$wrong" $details >"$out/wrong.txt"; then
    fail "a wrong cause was graded right"
  else
    [[ $? == 1 ]] || fail "a wrong answer must exit 1"
  fi
  grep -q '^WRONG' "$out/wrong.txt" || fail "no WRONG verdict: $(cat "$out/wrong.txt")"
  if "$ncclfi" lab debrief "$ws" >/dev/null 2>"$out/debrief.err"; then fail "a debrief before the final answer"; fi
  grep -q 'answer first' "$out/debrief.err" || fail "the early debrief does not say 'answer first': $(cat "$out/debrief.err")"
  "$ncclfi" lab hint "$ws" | grep -q '^hint 1 of' || fail "the first hint is not numbered 1"
  # shellcheck disable=SC2086
  "$ncclfi" lab answer "$ws" $ranks --cause "$cause" $details >"$out/right.txt" || fail "the key's answer was graded wrong: $(cat "$out/right.txt")"
  grep -q '^RIGHT: score 75/100 (attempt 2, hints used 1)' "$out/right.txt" ||
    fail "expected 75/100 after one hint and one wrong attempt: $(cat "$out/right.txt")"
  row=$("$ncclfi" lab gradebook --key-dir "$keys" "$ws" | tail -n1)
  [[ "$row" =~ ,2,1,[0-9]+,75,75,yes, ]] || fail "gradebook row: $row"
  # The student's own debrief, now that the answer is right, quotes the workspace's lines (file:line: text).
  "$ncclfi" lab debrief "$ws" >"$out/debrief.txt" || fail "the student's debrief after the right answer failed"
  grep -qE '^    [^ ]+:[0-9]+: ' "$out/debrief.txt" || fail "the debrief quotes no line of the workspace: $(cat "$out/debrief.txt")"

  # The hidden fault really happened (a lab whose fault never fired teaches nothing).
  for run in $(jq_ '" ".join(d["runs"])' <<<"$key"); do
    if [[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["faults"]))' "$run/plan.json")" != 0 ]]; then
      grep -q '"event":"inject"' "$run/events.jsonl" || fail "no injection in $run"
    fi
  done
  # The scan: nothing in the workspace may name the truth.
  ids=$(jq_ '"\n".join(f["id"] for r in d["runs"] for f in json.load(open(r + "/plan.json"))["faults"])' <<<"$key")
  patterns=(-e inject -e 'fault_id' -e 'NCCLFI_' -e 'plan\.json' -e nic_down -e connect_fail -e throttle -e corrupt -e stall)
  while read -r id; do [[ -n "$id" ]] && patterns+=(-e "$id"); done <<<"$ids"
  if grep -rniI "${patterns[@]}" "$ws"; then fail "the workspace names the truth (above)"; fi
  # What the ranks printed (NCCLFI_QUIET): nothing names ncclfi or an injection, as on a real cluster.
  if find "$ws" -name 'rank-*.log' -print0 | xargs -0 -r grep -niI -e ncclfi -e inject; then
    fail "a rank's output names ncclfi or an injection (above)"
  fi
  find "$ws" -name 'rank-*.log' | grep -q . || fail "no rank output in the workspace"
  # The briefing may name the course topic ("fault classification") and the topology (NVLink, PCIe);
  # what the job left may name neither a fault nor the cause.
  # NCCL's own result strings (ncclGetErrorString) are the evidence an error-code lab teaches to read, the
  # same text a real failure prints: they may contain the cause's words ("internal error - please report ...").
  # NCCL_DEBUG=INFO's "Init timings" line names the bootstrap in every job, whatever went wrong. CUDA's own
# text for error 220 (cudaErrorNvlinkUncorrectable) is what a GPU's NVLink failure prints.
  nccl_strings=(-e 'internal error - please report this issue to the NCCL developers' -e 'unhandled system error'
    -e 'unhandled cuda error' -e 'invalid usage' -e 'remote process exited or there was a network error'
    -e 'NCCL INFO Init timings - ' -e "uncorrectable NVLink error detected during the execution")
  # "\bfault": NCCL's INFO lines say "Default value is 20" (its IB hints).
  words=(-e "\\bfault" -e "\\b$cause\\b" -e "\\b${cause//_/ }\\b")
  while read -r w; do
    [[ -n "$w" ]] && words+=(-e "\\b$w\\b" -e "\\b${w//_/ }\\b" -e "\\b${w//-/ }\\b")
  done <<<"$lab_causes"
  if find "$ws" -mindepth 2 -type f -not -path "$ws/nodes/*" -print0 | xargs -0 grep -niI "${words[@]}" | grep -v "${nccl_strings[@]}"; then
    fail "the job's files name a fault or one of the lab's causes (above)"
  fi
  if [[ -d "$ws/nodes" ]] && grep -rniI -e "\\bfault" -e ncclfi "$ws/nodes"; then
    fail "a node's files name a fault or ncclfi (above)"
  fi
  # Each rank ran on one of the lab's nodes: every NCCL line (host:pid:tid [dev]) names one of the nodes, and
  # exit_codes.txt names each node.
  [[ -d "$ws/nodes" ]] || fail "no node files (nodes/HOST/) in the workspace"
  nodes=$(ls "$ws/nodes")
  prefixed=$(find "$ws" -name 'rank-*.log' -print0 | xargs -0 -r grep -hoE '^(\[[^]]*\] )?[A-Za-z0-9.-]+:[0-9]+:[0-9]+ \[' |
    sed -E 's/^(\[[^]]*\] )?//; s/:.*//' | sort -u || true)  # a job without NCCL lines has none
  for host in $prefixed; do
    grep -qx "$host" <<<"$nodes" || fail "a rank's NCCL line names host '$host', not one of the nodes: $nodes"
  done
  for host in $nodes; do
    grep -rqs " on $host: " "$ws" --include=exit_codes.txt || fail "exit_codes.txt does not name node $host"
  done
done
summary() { key_of "$1" | jq_ '"%s (variant %d)" % (d.get("cause_id", "?"), d["variant"])'; }
echo "PASS ($lab): $(summary "$out/ws-a") and $(summary "$out/ws-b") (seeds 1, $seed_b)"
