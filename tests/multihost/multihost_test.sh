#!/usr/bin/env bash
# multihost_test.sh NCCLFI SOURCE_DIR OUT CASE: one `multihost` test on the namespace cluster
# (scripts/cluster-local, started by scripts/test). ncclfi runs on node1; the ranks and their agents on
# node1..node3, each host with its own /tmp (the ranks' events are there: no file is shared).
# Exit 0 pass, 1 fail, 77 skipped (no cluster).
set -uo pipefail
ncclfi=$1 src=$2 out=$3 case=$4
cluster=$src/scripts/cluster-local
[[ -n ${NCCLFI_CLUSTER_HOSTFILE:-} && -f ${NCCLFI_CLUSTER_HOSTFILE:-} ]] || { echo "SKIPPED: no cluster-local cluster"; exit 77; }
rm -rf "$out" && mkdir -p "$out"
# A failure says why, with each run's verdict checks beside it (CI keeps only the test's output).
fail() {
  echo "FAIL: $*"
  for v in "$out"/*/*/verdict.json; do
    [[ -f $v ]] || continue
    echo "--- $v"
    python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
print(v.get("status"))
for c in v.get("judgement", {}).get("checks", []): print(" ", c.get("field"), c.get("answer"), c.get("reason", "")[:400])' "$v" 2>&1
  done
  exit 1
}
on_node1() { "$cluster" exec node1 "$@"; }
run_scenario() { on_node1 "$ncclfi" run "$src/scenarios/multihost/$1.json" --out "$out" -q --color never; }
events() { cat "$out"/*/*/events.jsonl 2>/dev/null; }
# Under pipefail, `events | grep -q X` fails at random: grep -q leaves at the first match and cat, still
# writing a large events file, dies of SIGPIPE (status 141). So every match below reads all its input
# (grep -c X >/dev/null: the same exit status).
# Every process of a drill on any host of the cluster: what carries an NCCLFI_HARNESS_ID there.
drill_pids() {
  for p in $(for h in $NCCLFI_CLUSTER_HOSTS; do ip netns pids "ncclfi-$h"; done); do
    tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -q '^NCCLFI_HARNESS_ID=' && echo "$p"
  done
  return 0
}
# torchrun, mpirun's and srun's own processes of a job, and ncclfi's, on any host of the cluster: what
# drill_pids cannot see (torchrun runs without the harness id).
torchrun_pids() {
  for p in $(for h in $NCCLFI_CLUSTER_HOSTS; do ip netns pids "ncclfi-$h"; done); do
    tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -Eq '(^| |/)(torchrun|ncclfi-cpu-ring|ncclfi) ' && echo "$p"
  done
  return 0
}
hosts_with_rank_events() {
  events | python3 -c '
import json, sys
hosts = set()
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("source") != "harness" and e.get("rank", -1) >= 0: hosts.add(e.get("host"))
print(" ".join(sorted(h for h in hosts if h)))'
}
expect_verdict_pass() {
  [[ $1 -eq 0 ]] || { cat "$out"/*/*/verdict.json 2>/dev/null | head -c 4000; fail "ncclfi exited $1"; }
  local hosts; hosts=$(hosts_with_rank_events)
  [[ $hosts == "node1 node2 node3" ]] || fail "rank events from hosts '$hosts', expected node1 node2 node3"
  # The ranks wrote to their own host's /tmp: nothing of theirs may be in the run directory but what
  # the agents streamed (their events are appended by the harness, their spool is elsewhere).
  ls "$out"/*/*/ | grep -q '^ncclfi-cpu' && fail "a rank's control FIFO is in the run directory"
  return 0
}

case $case in
  drop | kill | link-rate-drill | srun-drop | srun-kill | srun-link-rate-drill)
    launcher=mpirun
    if [[ $case == srun-* ]]; then
      [[ -n ${NCCLFI_CLUSTER_SLURM_CONF:-} ]] || { echo "SKIPPED: no Slurm on the cluster's hosts"; exit 77; }
      launcher=srun case=${case#srun-}
    fi
    name=$launcher-net-drop; [[ $case == kill ]] && name=$launcher-proc-kill
    [[ $case == link-rate-drill ]] && name=$launcher-link-rate
    run_scenario "$name"; expect_verdict_pass $?
    if [[ $case == link-rate-drill ]]; then
      events | grep '"inject"' | grep -c '"link/rate"' >/dev/null || fail "no link rate injection recorded"
      [[ -z $(ip netns exec ncclfi-node3 tc qdisc show dev eth0 | grep tbf) ]] || fail "node3's link still limited after the drill"
    fi
    if [[ $case == kill ]]; then
      events | grep '"inject"' | grep -c '"proc/kill"' >/dev/null || fail "no proc kill injection recorded"
      events | grep '"rank_gone"' | grep -c '"rank":2' >/dev/null || fail "node3's agent did not report rank 2 gone"
      # Its fate, recorded on its own host by the process that held its place for the launcher.
      events | grep '"rank_exit"' | grep '"rank":2' | grep '"host":"node3"' | grep -c '"signal":9' >/dev/null ||
        fail "no rank_exit with signal 9 for rank 2 from node3"
    fi ;;
  torchrun-drop | torchrun-kill | torchrun-srun-drop | torchrun-srun-kill)
    # torchrun across the hosts: one torchrun and one agent per host, started by mpirun (or srun).
    command -v torchrun >/dev/null || { echo "SKIPPED: no torchrun (Debian: python3-torch)"; exit 77; }
    node_launcher=mpirun drill=${case#torchrun-}
    if [[ $drill == srun-* ]]; then
      [[ -n ${NCCLFI_CLUSTER_SLURM_CONF:-} ]] || { echo "SKIPPED: no Slurm on the cluster's hosts"; exit 77; }
      node_launcher=srun drill=${drill#srun-}
    fi
    name=torchrun-$node_launcher-net-drop; [[ $drill == kill ]] && name=torchrun-$node_launcher-proc-kill
    run_scenario "$name"; expect_verdict_pass $?
    # torchrun placed its workers: two per host, in host order (c10d ranks the nodes by host name).
    hosts=$(events | python3 -c '
import json, sys
seen = {}
for line in sys.stdin:
    e = json.loads(line)
    if e.get("event") == "start" and e.get("rank", -1) >= 0: seen[e["rank"]] = e.get("host")
print(" ".join("%d:%s" % kv for kv in sorted(seen.items())))')
    [[ $hosts == "0:node1 1:node1 2:node2 3:node2 4:node3 5:node3" ]] || fail "workers placed $hosts"
    if [[ $drill == kill ]]; then
      events | grep '"inject"' | grep -c '"proc/kill"' >/dev/null || fail "no proc kill injection recorded"
      # Rank 4's fate, recorded on node3 by the `ncclfi agent --exec` that holds its place under torchrun.
      events | grep '"rank_exit"' | grep '"rank":4' | grep '"host":"node3"' | grep -c '"signal":9' >/dev/null ||
        fail "no rank_exit with signal 9 for rank 4 from node3"
      # ... and torchrun restarted the group (the verdict counted it): every rank started again.
      for r in 0 1 2 3 4 5; do
        [[ $(events | grep '"event":"start"' | grep -c "\"rank\":$r,") -ge 2 ]] || fail "rank $r did not start again"
      done
    fi ;;
  torchrun-sigkill | torchrun-srun-sigkill)
    # SIGKILL of ncclfi in the middle of a torchrun job across hosts: no torchrun, worker or agent stays
    # (the agents end the workers; mpirun's teardown, or scancel of the srun step, ends the torchruns).
    command -v torchrun >/dev/null || { echo "SKIPPED: no torchrun (Debian: python3-torch)"; exit 77; }
    node_launcher=mpirun
    if [[ $case == torchrun-srun-* ]]; then
      [[ -n ${NCCLFI_CLUSTER_SLURM_CONF:-} ]] || { echo "SKIPPED: no Slurm on the cluster's hosts"; exit 77; }
      node_launcher=srun
    fi
    "$cluster" exec node1 "$ncclfi" run "$src/scenarios/multihost/torchrun-$node_launcher-proc-kill.json" --out "$out" -q --color never &
    pid=$!
    for _ in $(seq 1 300); do [[ $(events | grep -c '"event":"start"') -ge 6 ]] && break; sleep 0.1; done
    [[ $(events | grep -c '"event":"start"') -ge 6 ]] || { kill $pid; fail "the six workers did not start"; }
    [[ -n $(torchrun_pids) ]] || { kill $pid; fail "no torchrun was running before the SIGKILL"; }
    kill -KILL $pid
    for _ in $(seq 1 150); do [[ -z $(drill_pids)$(torchrun_pids) ]] && break; sleep 0.1; done
    left="$(drill_pids) $(torchrun_pids)"
    [[ -z ${left// /} ]] || fail "left running after ncclfi was killed: $(ps -o pid,args -p "$(echo $left | tr ' ' ,)" | tail -n +2)" ;;
  arm)
    "$cluster" exec node1 "$ncclfi" run "$src/scenarios/multihost/mpirun-armed-drop.json" --out "$out" -q --color never &
    pid=$!
    for _ in $(seq 1 300); do  # the job runs once all three agents are in and rank 4 is up
      [[ $(events | grep -c '"event":"agent"') -ge 3 ]] && events | grep -c '"rank":4' >/dev/null && break
      sleep 0.1
    done
    sleep 1
    run_dir=$(dirname "$(ls "$out"/*/*/events.jsonl | head -1)")
    on_node1 "$ncclfi" arm "$run_dir" drop4 || { kill $pid; fail "ncclfi arm found no rank through the agents"; }
    wait $pid; expect_verdict_pass $?
    events | grep '"inject"' | grep -c '"drop4"' >/dev/null || fail "the armed drop never fired"
    # ... and not before it was armed: the first injection follows the control event.
    events | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin if l.strip()]
armed = min(e["ts_ns"] for e in ev if e.get("event") == "control")
first = min(e["ts_ns"] for e in ev if e.get("event") == "inject")
sys.exit(0 if first >= armed else 1)' || fail "the drop fired before ncclfi arm" ;;
  output-tail)
    # Rank 2 runs on node3 (--map-by node); its output reaches the run directory through node3's agent
    # only: its spool is node3's /tmp, and the launcher's own log is not where this looks.
    on_node1 "$ncclfi" run "$src/tests/multihost/output-tail.json" --out "$out" -q --color never
    expect_verdict_pass $?
    run_dir=$(dirname "$(ls "$out"/*/*/verdict.json | head -1)")
    grep -q '^ncclfi-cpu-ring: rank 2/8: ' "$run_dir/attempt-0/output-node3-rank-2.log" ||
      fail "rank 2's output did not arrive from node3: $(ls "$run_dir/attempt-0")"
    python3 - "$run_dir/verdict.json" <<'PY' || fail "verdict.json lacks rank 2's last lines from node3"
import json, sys
out = json.load(open(sys.argv[1]))["history"]["rank_output"]
r = [o for o in out if o["rank"] == 2]
assert len(r) == 1 and r[0]["host"] == "node3", r
assert any(l.startswith("ncclfi-cpu-ring: rank 2/8: ") for l in r[0]["last_lines"]), r
assert r[0]["file"] == "attempt-0/output-node3-rank-2.log", r
assert sorted({o["host"] for o in out}) == ["node1", "node2", "node3"], out
PY
    grep -q "^| 2 | node3 | 1 | .*ncclfi-cpu-ring: rank 2/8: " "$run_dir/drill-report.md" ||
      fail "the drill report does not show rank 2's last output on node3"
    id=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["harness_id"])' "$run_dir/harness.json")
    [[ -z $("$cluster" exec node3 sh -c "ls -d /tmp/ncclfi-$id-* 2>/dev/null") ]] || fail "node3 kept its spool" ;;
  allow-list)
    # node3 is not on the drill's allow-list: its agent refuses the kill of rank 2, loudly; rank 2
    # lives; nothing was injected, so the run cannot pass (unknown: the injection check says why).
    NCCLFI_ALLOWED_HOSTS=node1,node2 on_node1 "$ncclfi" run \
      "$src/scenarios/multihost/mpirun-proc-kill-outside-allow-list.json" --out "$out" -q --color never
    rc=$?
    [[ $rc -eq 1 ]] || fail "a run whose only fault was refused exited $rc, expected 1 (not a pass)"
    run_dir=$(dirname "$(ls "$out"/*/*/verdict.json | head -1)")
    events | grep '"injection_refused"' | grep '"host":"node3"' | grep '"source":"agent"' | grep -c '"rank":2' >/dev/null ||
      fail "no injection_refused event from node3's agent for rank 2"
    events | grep -c '"event":"inject"' >/dev/null && fail "an injection was recorded"
    events | grep '"rank_exit"' | grep '"rank":2' | grep '"host":"node3"' | grep -c '"exit_code":0' >/dev/null ||
      fail "rank 2 on node3 did not end on its own with 0 (was it killed?)"
    grep -q "refused signal 9 for rank 2: not in the allowed hosts (node1, node2)" "$run_dir/attempt-0/agents.log" ||
      fail "node3's agent did not say it refused: $(cat "$run_dir/attempt-0/agents.log")"
    python3 - "$run_dir/verdict.json" <<'PY' || fail "the verdict does not say the fault was refused"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["status"] == "unknown", v["status"]
checks = {c["field"]: c for c in v["judgement"]["checks"]}
assert checks["outcome"]["answer"] == "pass", checks
inj = checks["injection"]
assert inj["answer"] == "unknown" and "node3 refused: not in the allowed hosts (node1, node2)" in inj["reason"], inj
PY
    grep -q "Host node3 refused to inject (rank 2" "$run_dir/drill-report.md" ||
      fail "the drill report does not show node3's refusal" ;;
  rogue-agent-and-sigkill)
    "$cluster" exec node1 "$ncclfi" run "$src/scenarios/multihost/mpirun-armed-drop.json" --out "$out" -q --color never &
    pid=$!
    for _ in $(seq 1 300); do [[ $(events | grep -c '"event":"agent"') -ge 3 ]] && break; sleep 0.1; done
    # An agent that does not know the drill's secret: refused, and it says so.
    addr=$(for p in $(drill_pids); do tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | sed -n 's/^NCCLFI_AGENT_ADDR=//p'; done | head -1)
    [[ -n $addr ]] || { kill $pid; fail "no agent found"; }
    "$cluster" exec node3 env NCCLFI_AGENT_ADDR="$addr" NCCLFI_AGENT_SECRET=not-the-secret NCCLFI_HARNESS_ID=x \
      NCCLFI_AGENT_SPOOL=/tmp/rogue "$ncclfi" agent >"$out/rogue.log" 2>&1
    rc=$?
    [[ $rc -eq 3 ]] || { kill $pid; fail "a rogue agent exited $rc, expected 3"; }
    grep -q "did not prove the drill's secret" "$out/rogue.log" || { kill $pid; fail "rogue agent: $(cat "$out/rogue.log")"; }
    sleep 2
    [[ -n $(drill_pids) ]] || fail "no drill process was running before the SIGKILL"
    # The harness itself dies: every host must be left with no process of the drill.
    kill -KILL $pid  # cluster-local exec execs nsenter, which execs ncclfi: $pid is ncclfi
    for _ in $(seq 1 150); do [[ -z $(drill_pids) ]] && break; sleep 0.1; done
    left=$(drill_pids)
    [[ -z $left ]] || fail "left running after ncclfi was killed: $(ps -o pid,args -p ${left//$'\n'/,} | tail -n +2)" ;;
  dry-run)
    # A dry run across the cluster: the plan per rank, and nothing started on any host (no agent, no
    # rank, no run directory).
    on_node1 "$ncclfi" run --dry-run "$src/scenarios/multihost/mpirun-proc-kill.json" --out "$out/runs" \
      --color never >"$out/dry-run.log" 2>&1 &
    pid=$!
    seen=""
    while kill -0 $pid 2>/dev/null; do seen+=$(drill_pids); sleep 0.05; done
    wait $pid; rc=$?
    [[ $rc -eq 0 ]] || fail "the dry run exited $rc: $(cat "$out/dry-run.log")"
    grep -q "nothing is launched" "$out/dry-run.log" || fail "no dry-run header: $(cat "$out/dry-run.log")"
    grep -q "rank 2: crash (proc kill" "$out/dry-run.log" || fail "the dry run does not show rank 2's kill"
    [[ -z $seen && -z $(drill_pids) ]] || fail "a process of the drill ran during the dry run"
    [[ ! -e $out/runs ]] || fail "the dry run wrote a run directory" ;;
  link-rate)
    # tbf on node2's link: 256 KiB from node1 to node2 takes at least 2 s at 1 Mbit/s (ms without it).
    "$cluster" link node2 rate 1mbit || fail "cannot rate-limit node2's link"
    trap '"$cluster" link node2 clear' EXIT
    "$cluster" exec node2 python3 -c '
import socket; s = socket.socket(); s.bind(("0.0.0.0", 29876)); s.listen(1); c, _ = s.accept()
while c.recv(65536): pass' &
    sleep 0.5
    start=$(date +%s%N)
    "$cluster" exec node1 python3 -c '
import socket; s = socket.create_connection(("node2", 29876)); s.sendall(b"x" * 262144); s.close()'
    wait
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [[ $ms -ge 1500 ]] || fail "256 KiB crossed a 1 Mbit/s link in $ms ms" ;;
  link-netem)
    # Delay, loss and corruption need netem; where the kernel lacks it the request fails and says why.
    if grep -qw delay <<<"${NCCLFI_CLUSTER_LINK_FAULTS:-}"; then
      "$cluster" link node2 delay 5ms || fail "netem delay failed though probed as available"
      "$cluster" link node2 clear
    else
      msg=$("$cluster" link node2 delay 5ms 2>&1) && fail "a delay without netem was accepted"
      grep -q "netem" <<<"$msg" || fail "unclear refusal: $msg"
    fi ;;
  link-netem-drill)
    # The same through ncclfi: a link delay runs where the kernel has netem; elsewhere the agents say
    # so and ncclfi refuses the scenario before its job launches (a harness error, exit 3).
    on_node1 "$ncclfi" run "$src/tests/multihost/link-delay.json" --out "$out" --color never >"$out/run.log" 2>&1
    rc=$?
    if grep -qw delay <<<"${NCCLFI_CLUSTER_LINK_FAULTS:-}"; then
      [[ $rc -eq 0 ]] || fail "the link delay drill did not pass: $(tail -20 "$out/run.log")"
    else
      [[ $rc -eq 3 ]] || fail "a link delay without netem: exit $rc, expected 3"
      grep -q "link fault 'slow' (delay) cannot run on node[0-9]: its kernel can do rate" "$out/run.log" ||
        fail "unclear refusal: $(tail -20 "$out/run.log")"
      events | grep -c '"launch".*cpu-ring' >/dev/null && fail "the job was launched"
    fi ;;
  *) fail "unknown case $case" ;;
esac
echo PASS
