#!/bin/sh
# relocated.sh BUILD SOURCE: ncclfi runs from a copy of its build tree outside the source tree, and the
# binary holds no path of the source tree (it finds its programs, libraries and scenarios from where
# its executable is: docs/environment.md, "Where ncclfi finds its files").
set -u
build=$1 src=$2
fail() { echo "FAIL $*"; exit 1; }
for f in bin/ncclfi bin/ncclfi-cpu-ring lib/libnccl-net-ncclfi.so share/ncclfi/scenarios/cpu; do
  [ -e "$build/$f" ] || fail "$build/$f is missing: build every default target first"
done

# 1. No source path compiled in (debug information included: the build maps it away).
found=$(strings -a "$build/bin/ncclfi" | grep -F "$src" | head -n 3)
[ -z "$found" ] || fail "bin/ncclfi contains the source path $src: $found"

# 2. A copy of the tree's layout (bin, lib, share/ncclfi) elsewhere runs a CPU scenario, with no
# location variable set and from an unrelated working directory.
tmp=$(mktemp -d /tmp/ncclfi-relocated.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/prefix/bin" "$tmp/prefix/lib" "$tmp/work"
cp "$build/bin/ncclfi" "$build/bin/ncclfi-cpu-ring" "$tmp/prefix/bin/"
cp "$build"/lib/*.so "$tmp/prefix/lib/"
cp -R "$build/share" "$tmp/prefix/share"
scenario=$tmp/prefix/share/ncclfi/scenarios/cpu/net-drop-recv-hang.json
cd "$tmp/work" || fail "cannot enter $tmp/work"
env -u NCCLFI_BUILD_DIR -u NCCLFI_DATA_DIR "$tmp/prefix/bin/ncclfi" run "$scenario" --out "$tmp/runs" -q
rc=$?
[ "$rc" -eq 0 ] || fail "ncclfi run from the copy exited $rc"
# The ranks ran the copy's programs and library, not the build tree's.
events=$tmp/runs/net-drop-recv-hang/latest/events.jsonl
grep '"event":"launch"' "$events" | grep -qF "$tmp/prefix/bin/ncclfi-cpu-ring" ||
  fail "the ranks did not run $tmp/prefix/bin/ncclfi-cpu-ring: $(grep -m1 '"launch"' "$events")"
echo "PASS: the copy in $tmp/prefix ran net-drop-recv-hang; no source path in bin/ncclfi"
