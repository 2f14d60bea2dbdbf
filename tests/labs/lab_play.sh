#!/usr/bin/env bash
# Plays one training lab end to end, as a student and an instructor would:
#   lab_play.sh NCCLFI CATALOGUE LAB [OUT]
# two seeds that pick different variants; a wrong answer graded wrong (exit 1); the student's debrief
# refused before the answer is final (exit 2); one hint, counted; the right answer from the key graded
# right (exit 0) with the hint and the wrong attempt subtracted; the gradebook; the student's debrief,
# quoting lines of the workspace; and a scan of every
# file of both workspaces for the ground truth (fault ids, injections, the plan, the fault kinds, the cause).
set -euo pipefail
ncclfi=$1 catalogue=$2 lab=$3
out=${4:-$(mktemp -d)}
keys=$out/keys
rm -rf "$out"  # a workspace must not exist before its start
mkdir -p "$out"
fail() { echo "FAIL ($lab): $*" >&2; exit 1; }
key_of() { "$ncclfi" lab key "$1" --key-dir "$keys"; }
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

start() {  # start SEED DIR: checks the last line names the workspace
  local log=$out/start-$1.log
  "$ncclfi" lab start "$lab" --student "s$1" --seed "$1" --dir "$2" --key-dir "$keys" --catalogue "$catalogue" \
    >"$log" 2>"$out/start-$1.err" || fail "start seed $1 exited $?: $(cat "$out/start-$1.err")"
  [[ "$(tail -n1 "$log")" == "workspace: $2" ]] || fail "start's last line is not 'workspace: $2'"
}

# Two seeds with different variants (the first seed is 1; the second is the first that differs).
start 1 "$out/ws-a"
variant_a=$(key_of "$out/ws-a" | jq_ 'd["variant"]')
seed_b=""
for s in 2 3 4 5 6 7 8 9; do
  rm -rf "$out/ws-b"
  start "$s" "$out/ws-b"
  if [[ "$(key_of "$out/ws-b" | jq_ 'd["variant"]')" != "$variant_a" ]]; then seed_b=$s; break; fi
done
[[ -n "$seed_b" ]] || fail "seeds 1-9 all picked variant $variant_a"

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
  nccl_strings=(-e 'internal error - please report this issue to the NCCL developers' -e 'unhandled system error'
    -e 'unhandled cuda error' -e 'invalid usage' -e 'remote process exited or there was a network error')
  if find "$ws" -mindepth 2 -type f -print0 | xargs -0 grep -niI -e fault -e "\\b$cause\\b" -e "\\b${cause//_/ }\\b" |
    grep -v "${nccl_strings[@]}"; then
    fail "the job's files name a fault or the cause '$cause' (above)"
  fi
done
echo "PASS ($lab): variants $variant_a and $(key_of "$out/ws-b" | jq_ 'd["variant"]') (seeds 1, $seed_b)"
