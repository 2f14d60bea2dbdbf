#!/bin/sh
# run_scenario.sh NCCLFI SCENARIO OUT: one scenario file through the product, as one CTest test.
#   `NCCLFI run SCENARIO --out OUT --junit OUT/junit.xml`
# Exit 0 when its verdict passed; 77 (CTest reports SKIPPED, never passed) when ncclfi skipped the
# scenario on this host (fewer GPUs than it needs, a command or variable it lacks), with ncclfi's
# reason printed; ncclfi's own exit status otherwise (1 failed verdict, 2 bad input, 3 harness error).
set -u
ncclfi=$1 scenario=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
"$ncclfi" run "$scenario" --out "$out" --junit "$out/junit.xml" -q
rc=$?
if [ ! -s "$out/junit.xml" ]; then
  echo "run_scenario: ncclfi wrote no $out/junit.xml (exit $rc)"
  [ "$rc" -ne 0 ] && exit "$rc"
  exit 1
fi
# The JUnit report is the interface read here: one <testcase> per scenario, <skipped message=...> when
# ncclfi did not run it. A skip with exit 0 must not read as a pass.
if [ "$rc" -eq 0 ] && grep -q '<skipped' "$out/junit.xml"; then
  reason=$(sed -n 's/.*<skipped message="\([^"]*\)".*/\1/p' "$out/junit.xml" | head -n 1)
  echo "SKIPPED $(basename "$scenario" .json): ${reason:-no reason given}"
  exit 77
fi
exit "$rc"
