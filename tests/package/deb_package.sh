#!/bin/sh
# deb_package.sh CPACK BUILD SOURCE: `cpack -G DEB` makes a package whose Depends are Debian package
# names that cover every shared library its programs load (found with ldd and dpkg -S), that holds
# every installed part under /usr, that keeps Debian policy (deb_policy.sh: lintian and the rest), and
# whose unpacked tree runs a few CPU scenarios with the build and source trees hidden.
set -u
cpack=$1 build=$2 src=$3
tmp=$(mktemp -d /tmp/ncclfi-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }

(cd "$tmp" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out") >"$tmp/cpack.log" 2>&1 ||
  fail "cpack: $(tail -n 5 "$tmp/cpack.log")"
deb=$(ls "$tmp"/out/*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || fail "cpack made no .deb: $(tail -n 5 "$tmp/cpack.log")"
[ "$(dpkg-deb -f "$deb" Package)" = ncclfi ] || fail "Package is not ncclfi"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"

# Every name in Depends is a Debian package name this host's package database knows.
names=$(echo "$depends" | tr ',' '\n' | sed 's/(.*)//; s/|.*//; s/ //g' | grep -v '^$')
for name in $names; do
  echo "$name" | grep -Eq '^[a-z0-9][a-z0-9+.-]+$' || fail "'$name' is not a Debian package name"
  dpkg-query -W "$name" >/dev/null 2>&1 || apt-cache show "$name" >/dev/null 2>&1 ||
    fail "Depends names '$name', which is no Debian package"
done

# The package's files.
dpkg-deb -c "$deb" | awk '{print $NF}' >"$tmp/contents"
for f in ./usr/bin/ncclfi ./usr/bin/ncclfi-cpu-ring ./usr/lib/ncclfi/libncclfi-preload.so \
  ./usr/lib/ncclfi/libnccl-net-ncclfi.so ./usr/share/ncclfi/scenarios/schema.json \
  ./usr/share/ncclfi/scenarios/cpu/net-drop-recv-hang.json ./usr/share/ncclfi/workloads/torch/ddp_train.py \
  ./usr/share/bash-completion/completions/ncclfi ./usr/share/ncclfi/python/ncclfi_pytest/plugin.py; do
  grep -qxF "$f" "$tmp/contents" || fail "the package lacks $f"
done

# Depends covers what the programs and libraries load: each library ldd resolves comes from a package in
# Depends (the CUDA toolkit's libraries, which the GPU workload loads on a GPU host, are no Debian package).
root=$tmp/root
dpkg-deb -x "$deb" "$root"
for elf in "$root"/usr/bin/* "$root"/usr/lib/ncclfi/*.so; do
  head -c 4 "$elf" | grep -q ELF || continue
  for lib in $(ldd "$elf" 2>/dev/null | awk '/=> \// {print $3}'); do
    case "$lib" in /usr/local/cuda*|/usr/local/*) continue ;; esac
    owner=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -n "$owner" ] || owner=$(dpkg -S "$lib" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -n "$owner" ] || fail "$(basename "$elf") loads $lib, which no Debian package holds"
    echo "$names" | grep -qxF "$owner" || fail "$(basename "$elf") loads $lib from $owner, which Depends lacks"
  done
done

sh "$(dirname "$0")/deb_policy.sh" "$deb" "$root" "$tmp" || exit 1
sh "$(dirname "$0")/run_hidden.sh" "$root/usr" "$tmp/run" "$build" "$src" -- \
  --filter net-drop-recv-hang --filter proc-kill-rank || exit 1
echo "PASS: $(basename "$deb"): Depends $depends; the unpacked tree ran 2 CPU scenarios with the build hidden"
