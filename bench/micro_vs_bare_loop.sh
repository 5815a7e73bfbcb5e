#!/bin/bash
# Is `beamscale bench' honest against the floor? The same expressions as a bare hand-written
# loop (bench/micro_bare/micro_bare.erl, a plain emulator, nothing subtracted) and through
# `beamscale bench' (fresh node, compiled loop, empty loop subtracted), alternated ROUNDS times
# in one run. Prints per expression the median ns/call of each and their ratio (goal: within
# 5 % for calls of 50 ns or more).
#   bench/micro_vs_bare_loop.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
out=$(mktemp -d /tmp/beamscale-micro-bare.XXXXXX)
trap 'rm -rf "$out"' EXIT
./beamscale list >/dev/null
cp _build/default/bin/beamscale "$out/beamscale"
erlc -o "$out" bench/micro_bare/micro_bare.erl
mapfile -t exprs < <(erl -noshell -pa "$out" \
    -eval '[io:format("~s~n", [E]) || E <- micro_bare:exprs()], halt().')
for r in $(seq 1 "$rounds"); do
    erl -noshell -pa "$out" -eval 'micro_bare:main([]), halt().' \
        | sed "s/^/bare $r /" >>"$out/figures"
    "$out/beamscale" bench --json "${exprs[@]}" \
        | python3 -c '
import json, sys
for i, r in enumerate(json.load(sys.stdin)["results"], 1):
    print("bench %s %d %.2f" % (sys.argv[1], i, r["ns"]))' "$r" >>"$out/figures"
done
python3 - "$out/figures" "${exprs[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
exprs = sys.argv[2:]
print("%-45s %10s %10s %7s" % ("expression", "bare ns", "bench ns", "ratio"))
for i, e in enumerate(exprs, 1):
    bare = statistics.median(float(r[3]) for r in rows if r[0] == "bare" and r[2] == str(i))
    bench = statistics.median(float(r[3]) for r in rows if r[0] == "bench" and r[2] == str(i))
    print("%-45s %10.1f %10.1f %7.3f" % (e, bare, bench, bench / bare))
PY
