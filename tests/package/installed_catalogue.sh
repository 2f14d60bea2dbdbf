#!/bin/sh
# installed_catalogue.sh CMAKE BUILD SOURCE: `cmake --install` into a temporary prefix gives a working
# ncclfi: every part is installed (programs, the preload and the net shim, the workloads, the scenarios
# and their schema, the man page, the bash completion, the pytest plugin), the whole catalogue validates, and a few CPU
# scenarios run from the installed copy with the build and source trees hidden.
set -u
cmake=$1 build=$2 src=$3
tmp=$(mktemp -d /tmp/ncclfi-installed.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  fail "cmake --install: $(tail -n 5 "$tmp/install.log")"
for f in bin/ncclfi bin/ncclfi-cpu-ring lib/ncclfi/libncclfi-preload.so lib/ncclfi/libnccl-net-ncclfi.so \
  share/ncclfi/scenarios/schema.json share/ncclfi/scenarios/cpu/net-drop-recv-hang.json \
  share/ncclfi/workloads/torch/ddp_train.py share/man/man1/ncclfi.1.gz \
  share/bash-completion/completions/ncclfi share/doc/ncclfi/README.md \
  share/ncclfi/python/ncclfi_pytest/plugin.py; do
  [ -s "$prefix/$f" ] || fail "$prefix/$f was not installed"
done
# Every scenario of the source tree is installed.
for f in $(cd "$src/scenarios" && find . -name '*.json'); do
  [ -f "$prefix/share/ncclfi/scenarios/$f" ] || fail "scenarios/$f was not installed"
done
"$prefix/bin/ncclfi" validate "$prefix/share/ncclfi/scenarios" >"$tmp/validate.log" 2>&1 ||
  fail "the installed catalogue does not validate: $(tail -n 5 "$tmp/validate.log")"
man -l "$prefix/share/man/man1/ncclfi.1.gz" >/dev/null 2>&1 || ! command -v man >/dev/null ||
  fail "man cannot render ncclfi.1.gz"
bash -n "$prefix/share/bash-completion/completions/ncclfi" || fail "the bash completion is not valid bash"

sh "$(dirname "$0")/run_hidden.sh" "$prefix" "$tmp/run" "$build" "$src" -- \
  --filter net-drop-recv-hang --filter net-error-isend --filter proc-kill-rank || exit 1
echo "PASS: installed into $prefix; the catalogue validates and 3 CPU scenarios ran with the build hidden"
