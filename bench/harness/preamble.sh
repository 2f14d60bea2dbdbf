# What every harness benchmark starts with, sourced after `set -euo pipefail` from the script's own
# directory: the repository root as the working directory, the ncclfi of BUILD_DIR (default build) in
# $ncclfi, and a private work directory in $work that is removed on exit.
#   source "$(dirname "$0")/preamble.sh" NAME        (NAME: the benchmark, for messages and the directory)
bench_name=$1
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BUILD_DIR="${BUILD_DIR:-build}"
ncclfi="$(cd "$BUILD_DIR" && pwd)/bin/ncclfi"
[[ -x "$ncclfi" ]] || { echo "$bench_name: no ncclfi in $BUILD_DIR/bin" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ncclfi-$bench_name.XXXXXX")
trap 'rm -rf "$work"' EXIT
