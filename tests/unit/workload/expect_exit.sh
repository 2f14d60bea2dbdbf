#!/bin/sh
# expect_exit.sh CODE PATTERN COMMAND...: runs COMMAND, passes when it exits CODE and its output
# (stdout and stderr) matches the grep -E PATTERN.
code=$1 pattern=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$code" ]; then echo "expected exit $code, got $rc"; exit 1; fi
printf '%s\n' "$out" | grep -Eq -- "$pattern" || { echo "output does not match: $pattern"; exit 1; }
