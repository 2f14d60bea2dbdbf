#!/bin/sh
# run_gpu_check.sh SCRIPT: runs one scripts/gpu/*.sh check for CTest; exits 77 (reported SKIPPED, never
# passed) when fewer than 2 GPUs are visible, whatever the script itself would do.
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "${n:-0}" -lt 2 ]; then
  echo "SKIP fewer than 2 GPUs visible (${n:-0})"
  exit 77
fi
exec bash "$1"
