#!/bin/sh
# run_hidden.sh PREFIX OUT HIDDEN... -- NCCLFI-RUN-ARGS...: runs PREFIX/bin/ncclfi's own CPU catalogue
# (PREFIX/share/ncclfi/scenarios/cpu) with the given `ncclfi run` arguments, from an unrelated working
# directory, with no location variable set, and with every HIDDEN folder (the build tree, the source
# tree) covered by an empty one in a private mount namespace, so that nothing of them can be read. Then
# checks that the ranks ran PREFIX's programs. Exit: ncclfi's status, or 1 for a failed check.
set -u
prefix=$1 out=$2
shift 2
hidden=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do hidden="$hidden $1"; shift; done
[ $# -gt 0 ] && shift
mkdir -p "$out/empty" "$out/work"
cd "$out/work" || exit 1
run="env -u NCCLFI_BUILD_DIR -u NCCLFI_DATA_DIR \"$prefix/bin/ncclfi\" run \"$prefix/share/ncclfi/scenarios/cpu\" --out \"$out/runs\" -q"
for arg in "$@"; do run="$run '$arg'"; done
mounts=""
for dir in $hidden; do mounts="$mounts mount --bind '$out/empty' '$dir' &&"; done
# A private mount namespace needs CAP_SYS_ADMIN; where there is none, the run is not hidden and says so.
if unshare -m true 2>/dev/null; then
  unshare -m sh -c "$mounts $run"
else
  echo "run_hidden: no mount namespace here: the build tree is not hidden for this run"
  sh -c "$run"
fi
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: ncclfi run from $prefix exited $rc"; exit "$rc"; }
# Every launch ran the prefix's ncclfi-cpu-ring.
launches=$(cat "$out"/runs/*/latest/events.jsonl 2>/dev/null | grep '"event":"launch"')
[ -n "$launches" ] || { echo "FAIL: no launch event under $out/runs"; exit 1; }
if echo "$launches" | grep -q 'ncclfi-cpu-ring' && echo "$launches" | grep 'ncclfi-cpu-ring' | grep -vqF "$prefix/bin/"; then
  echo "FAIL: a rank ran a program outside $prefix: $(echo "$launches" | grep -vF "$prefix/bin/" | head -n 1)"
  exit 1
fi
echo "ok: the catalogue ran from $prefix with$([ -n "$hidden" ] || echo "out") hidden trees:$hidden"
