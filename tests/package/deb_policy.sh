#!/bin/sh
# deb_policy.sh DEB ROOT TMP: the package DEB (unpacked in ROOT) keeps Debian policy: lintian reports no
# error (its E: lines), programs and libraries are stripped with their debug symbols in the -dbgsym
# .ddeb beside DEB, the private libraries are in /usr/lib/ncclfi and none is left in /usr/lib, the man
# page is gzipped, the copyright file and the Debian changelog are there, no __pycache__ is shipped, the
# control fields are sane, and the pytest plugin installs with pip from /usr/share/ncclfi/python.
set -u
deb=$1 root=$2 tmp=$3
fail() { echo "FAIL $*"; exit 1; }

command -v lintian >/dev/null || fail "no lintian (scripts/setup installs it)"
lintian --fail-on none "$deb" >"$tmp/lintian.txt" 2>&1
echo "lintian:"; sed 's/^/  /' "$tmp/lintian.txt"
errors=$(grep -c '^E: ' "$tmp/lintian.txt")
[ "$errors" -eq 0 ] || fail "lintian reports $errors errors"

dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/files"
! grep -q '__pycache__' "$tmp/files" || fail "the package ships $(grep -m1 __pycache__ "$tmp/files")"
! grep -Eq '^\./usr/lib/[^/]+\.so' "$tmp/files" || fail "a library is left in /usr/lib: $(grep -Em1 '^\./usr/lib/[^/]+\.so' "$tmp/files")"
for f in ./usr/lib/ncclfi/libncclfi-preload.so ./usr/lib/ncclfi/libnccl-net-ncclfi.so \
  ./usr/share/man/man1/ncclfi.1.gz ./usr/share/doc/ncclfi/copyright ./usr/share/doc/ncclfi/changelog.Debian.gz \
  ./usr/share/ncclfi/python/pyproject.toml; do
  grep -qxF "$f" "$tmp/files" || fail "the package lacks $f"
done
gzip -t "$root/usr/share/man/man1/ncclfi.1.gz" || fail "ncclfi.1.gz is no gzip file"

# Stripped: no symbol table and no debug sections left; the debug symbols are in the .ddeb.
for elf in "$root"/usr/bin/* "$root"/usr/lib/ncclfi/*.so; do
  head -c 4 "$elf" | grep -q ELF || continue
  ! readelf -S -W "$elf" | grep -Eq ' \.(symtab|debug_info) ' || fail "$elf is not stripped"
done
ls "$(dirname "$deb")"/ncclfi-dbgsym_*.ddeb >/dev/null 2>&1 || fail "no ncclfi-dbgsym .ddeb beside $deb"

maintainer=$(dpkg-deb -f "$deb" Maintainer)
case "$maintainer" in *localhost*|"") fail "Maintainer is '$maintainer'" ;; esac
! dpkg-deb -f "$deb" Description | grep -q ';' || fail "Description holds a ';' (a CMake list)"

# The pytest plugin, installed with pip from the package's copy, offline: Debian's python3 (not a pyenv
# one first on PATH), which has python3-pytest and python3-hatchling.
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv" || fail "python3 -m venv"
"$tmp/venv/bin/python" -m pip install -q --no-build-isolation --no-deps --no-index "$root/usr/share/ncclfi/python" \
  >"$tmp/pip.log" 2>&1 || fail "pip install from /usr/share/ncclfi/python: $(tail -n 5 "$tmp/pip.log")"
"$tmp/venv/bin/python" -m pytest --help 2>&1 | grep -q -- --ncclfi-collect ||
  fail "pytest does not load the pip-installed plugin"
echo "ok: $(basename "$deb") keeps policy: lintian without errors, stripped, private libraries, gzipped man page"
