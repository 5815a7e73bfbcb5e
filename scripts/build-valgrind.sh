#!/bin/sh
# Builds a newer Valgrind than bookworm's 3.19 from Debian's signed source package, to try what
# 3.19 mis-runs (bench/valgrind/vg_hashmap.erl: a HAMT map updated under collections corrupts on
# OTP's JIT). 3.27.1 mis-runs it the same (docs/load-measurements.md, "The ways tried").
# Sources come from a private apt state (the host's own lists untouched); `apt-get source'
# checks the files against the suite's signed Sources index. Installs under
# ~/.cache/beamscale/valgrind/VERSION; prints that directory's bin/valgrind at the end. Use it
# with the bench scripts' VALGRIND=... where they take one.
#   scripts/build-valgrind.sh [SUITE]      (default forky: 3.27.1 on 2026-12-03)
set -eu
suite=${1:-forky}
root=${XDG_CACHE_HOME:-$HOME/.cache}/beamscale/valgrind
apt=$root/.apt/$suite
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/parts"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
     "http://deb.debian.org/debian $suite main" > "$apt/sources.list"
set -- -o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=$apt/parts" \
       -o "Dir::State=$apt" -o "Dir::State::status=/dev/null" -o "Dir::Cache=$apt"
apt-get "$@" update > "$apt/update.log" 2>&1 ||
    { echo "apt-get update of $suite's sources failed: see $apt/update.log" >&2; exit 1; }
version=$(apt-cache "$@" showsrc valgrind | sed -n 's/^Version: \(.*:\)\{0,1\}\([0-9.]*\).*/\2/p' |
          head -1)
[ -n "$version" ] || { echo "no valgrind source package in $suite" >&2; exit 1; }
prefix=$root/$version
if [ -x "$prefix/bin/valgrind" ]; then echo "$prefix/bin/valgrind"; exit 0; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/valgrind-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get "$@" source --download-only "valgrind" > fetch.log 2>&1 ||
    { echo "fetching valgrind's source from $suite failed:" >&2; tail -3 fetch.log >&2; exit 1; }
tar xf valgrind_"$version".orig.tar.*
cd "valgrind-$version"
echo "building Valgrind $version (from $suite) into $prefix: about 10 min on 2 cores" >&2
{ ./configure --prefix="$prefix" && make -j"$(nproc)" && make install; } > "$work/build.log" 2>&1 ||
    { tail -20 "$work/build.log" >&2; echo "building Valgrind $version failed" >&2; exit 1; }
echo "$prefix/bin/valgrind"
