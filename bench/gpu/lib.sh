# bench/gpu/lib.sh: what the GPU benchmark scripts share (sourced, never run alone). Source it after
# setting LOG (the log folder), WORKLOAD (the ncclfi-workload binary), PORT (a base port) and RUN_TIMEOUT_S.
# shellcheck shell=bash

FAILED=0

# Arithmetic through awk: the GPU host has no bc.
calc() { awk "BEGIN { printf \"%.6g\\n\", $1 }"; }
say() { echo "$*" | tee -a "$LOG/summary.txt"; }
check() {  # check NAME STATUS DETAIL: STATUS 0 is a pass
  if [[ $2 -eq 0 ]]; then say "PASS $1: $3"; else say "FAIL $1: $3"; FAILED=1; fi
}

# launch NAME [VAR=value...] -- workload args: two ranks with torchrun-style variables, each under a
# SIGKILL timeout. Writes $LOG/NAME.rank{0,1}.log, NAME.events.jsonl, NAME.exit ("code0 code1") and
# NAME.seconds (wall time of the pair).
launch() {
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  PORT=$((PORT + 1))
  rm -f "$LOG/$name.events.jsonl"
  local start; start=$(date +%s.%N)
  local pids=()
  for r in 0 1; do
    env "${envs[@]}" RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT \
      NCCLFI_EVENTS="$LOG/$name.events.jsonl" timeout -s KILL "$RUN_TIMEOUT_S" "$WORKLOAD" "$@" \
      >"$LOG/$name.rank$r.log" 2>&1 &
    pids+=($!)
  done
  local codes=""
  for p in "${pids[@]}"; do wait "$p"; codes+="$? "; done
  echo "${codes% }" >"$LOG/$name.exit"
  awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.2f\n", e - s}' >"$LOG/$name.seconds"
}
exit_codes() { cat "$LOG/$1.exit"; }
secs() { cat "$LOG/$1.seconds"; }
# Column of the workload's last result line on rank 0: 7 = time(us), 9 = busbw, 10 = #wrong.
col() { awk -v c="$2" '!/^#/ && NF >= 10 && $9 ~ /^[0-9.]+$/ {v=$c} END {print v+0}' "$LOG/$1.rank0.log"; }
