#!/bin/bash
# Is `beamscale bench' honest against the floor? The same expressions as bare hand-written loops
# (bench/micro_bare/micro_bare.erl, a plain emulator) and through `beamscale bench' (fresh node,
# compiled loop), alternated ROUNDS times in one run, the first side alternating too. Both time
# each sample in a fresh process and subtract their own empty loop. Prints per expression the
# median ns/call of each over the rounds, the ratio of the medians, the quartiles of the rounds'
# own ratios (spread), and the load average seen (goal: within 5 % for calls of 50 ns or more).
# SAMPLES (default 20, bench's) cut 0.5 s into samples on both sides: on a loaded host, short
# samples (200: 2.5 ms) often run between two preemptions, so their median stays the call's.
#   bench/micro_vs_bare_loop.sh [ROUNDS [SAMPLES]]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
samples=${2:-20}
out=$(mktemp -d /tmp/beamscale-micro-bare.XXXXXX)
trap 'rm -rf "$out"' EXIT
./beamscale list >/dev/null
cp _build/default/bin/beamscale "$out/beamscale"
erlc -o "$out" bench/micro_bare/micro_bare.erl
# The nodes of `beamscale bench' start with ERL_FLAGS, ERL_AFLAGS and ERL_ZFLAGS emptied
# (beamscale_node): the bare emulator too, so both run with the same flags.
bare_erl() { ERL_FLAGS='' ERL_AFLAGS='' ERL_ZFLAGS='' erl -noshell -pa "$out" "$@"; }
mapfile -t exprs < <(bare_erl -eval '[io:format("~s~n", [E]) || E <- micro_bare:exprs()], halt().')
# Each expression in an emulator of its own, in a session of its own (setsid), as `bench' runs
# each in a fresh node (which its port program puts in a new session): on a loaded host Linux's
# autogroups share the CPU by session, and a session just woken gets more of it than one busy
# for seconds. One emulator for all five read 2-4x slower than the nodes at a load of 20.
bare() {
    for i in $(seq 1 ${#exprs[@]}); do
        setsid -w env ERL_FLAGS='' ERL_AFLAGS='' ERL_ZFLAGS='' erl -noshell -pa "$out" \
            -eval "micro_bare:main($samples, $i), halt()." | sed "s/^/bare $1 /" >>"$out/figures"
    done
}
bench() {
    "$out/beamscale" bench --json --samples "$samples" "${exprs[@]}" 2>/dev/null | python3 -c '
import json, sys
for i, r in enumerate(json.load(sys.stdin)["results"], 1):
    print("bench %s %d %.2f" % (sys.argv[1], i, r["ns"]))' "$1" >>"$out/figures"
}
for r in $(seq 1 "$rounds"); do
    echo "load $r 0 $(cut -d' ' -f1 /proc/loadavg)" >>"$out/figures"
    if (( r % 2 )); then bare "$r"; bench "$r"; else bench "$r"; bare "$r"; fi
done
echo "load $rounds 0 $(cut -d' ' -f1 /proc/loadavg)" >>"$out/figures"
python3 - "$out/figures" "${exprs[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
exprs = sys.argv[2:]
def fig(side, r, i):
    return [float(x[3]) for x in rows if x[0] == side and x[1] == r and x[2] == str(i)]
load = [float(x[3]) for x in rows if x[0] == "load"]
rounds = sorted({x[1] for x in rows if x[0] == "bare"}, key=int)
print("%-45s %9s %9s %7s %15s" % ("expression", "bare ns", "bench ns", "ratio",
                                  "rounds' q1..q3"))
for i, e in enumerate(exprs, 1):
    bare = [v for r in rounds for v in fig("bare", r, i)]
    bench = [v for r in rounds for v in fig("bench", r, i)]
    each = sorted(b / a for r in rounds for a, b in zip(fig("bare", r, i), fig("bench", r, i)))
    q = statistics.quantiles(each, n=4) if len(each) > 1 else each * 3
    print("%-45s %9.1f %9.1f %7.3f %7.3f..%.3f" % (e, statistics.median(bare),
          statistics.median(bench), statistics.median(bench) / statistics.median(bare),
          q[0], q[2]))
print("%d rounds; load average (1 min) %.1f..%.1f, median %.1f"
      % (len(rounds), min(load), max(load), statistics.median(load)))
PY
