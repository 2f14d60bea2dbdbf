#!/bin/sh
# relocated.sh CMAKE BUILD SOURCE: ncclfi runs from a copy of its build tree outside the source tree and
# from an installed tree (cmake --install), and the binary holds no path of the source tree: it finds
# its programs, libraries and scenarios from where its executable is (docs/environment.md, "Where
# ncclfi finds its files").
set -u
cmake=$1 build=$2 src=$3
fail() { echo "FAIL $*"; exit 1; }
for f in bin/ncclfi bin/ncclfi-cpu-ring lib/libnccl-net-ncclfi.so share/ncclfi/scenarios/cpu; do
  [ -e "$build/$f" ] || fail "$build/$f is missing: build every default target first"
done

# 1. No source path compiled in (debug information included: the build maps it away).
found=$(strings -a "$build/bin/ncclfi" | grep -F "$src" | head -n 3)
[ -z "$found" ] || fail "bin/ncclfi contains the source path $src: $found"

tmp=$(mktemp -d /tmp/ncclfi-relocated.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/work"
cd "$tmp/work" || fail "cannot enter $tmp/work"

# run_from PREFIX: a CPU scenario from PREFIX's own catalogue, with no location variable set and from an
# unrelated working directory; the ranks must run PREFIX's programs, not the build tree's.
run_from() {
  prefix=$1 runs=$tmp/runs-$(basename "$1")
  env -u NCCLFI_BUILD_DIR -u NCCLFI_DATA_DIR "$prefix/bin/ncclfi" run \
    "$prefix/share/ncclfi/scenarios/cpu/net-drop-recv-hang.json" --out "$runs" -q
  rc=$?
  [ "$rc" -eq 0 ] || fail "ncclfi run from $prefix exited $rc"
  events=$runs/net-drop-recv-hang/latest/events.jsonl
  grep '"event":"launch"' "$events" | grep -qF "$prefix/bin/ncclfi-cpu-ring" ||
    fail "the ranks did not run $prefix/bin/ncclfi-cpu-ring: $(grep -m1 '"launch"' "$events")"
  echo "ok: ncclfi from $prefix ran net-drop-recv-hang"
}

# 2. A copy of the tree's layout (bin, lib, share/ncclfi) elsewhere.
mkdir -p "$tmp/copy/bin" "$tmp/copy/lib"
cp "$build/bin/ncclfi" "$build/bin/ncclfi-cpu-ring" "$tmp/copy/bin/"
cp "$build"/lib/*.so "$tmp/copy/lib/"
cp -R "$build/share" "$tmp/copy/share"
run_from "$tmp/copy"

# 3. An installed tree.
"$cmake" --install "$build" --prefix "$tmp/installed" >"$tmp/install.log" 2>&1 ||
  fail "cmake --install failed: $(tail -n 5 "$tmp/install.log")"
run_from "$tmp/installed"
echo "PASS: no source path in bin/ncclfi; a copied and an installed tree each ran a scenario"
