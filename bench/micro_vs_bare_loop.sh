#!/bin/bash
# Is `beamscale bench' honest against the floor? The same expressions as bare hand-written loops
# (bench/micro_bare/micro_bare.erl, a plain emulator) and through `beamscale bench' (fresh node,
# compiled loop), and the bare loops again in emulators of their own (the A/A control: what one
# comparison of fresh emulators can tell), rotated ROUNDS times in one run. All time each sample
# in a fresh process and subtract their own empty loop. Prints per expression the median ns/call
# of bare and bench over the rounds, the ratios of medians bench/bare and A/A with 95 % intervals
# (bench/micro_vs_bare_loop.py), the rounds' own ratios' quartiles, and the load average seen
# (goal: bench within 5 % of bare for calls of 50 ns or more, testable where A/A is within 5 %);
# then the same for the 10th percentile of each run's samples instead of their median.
# SAMPLES (default 20, bench's) cut 0.5 s into samples on both sides: on a loaded host, short
# samples (200: 2.5 ms) often run between two preemptions, so their median stays the call's.
#   bench/micro_vs_bare_loop.sh [ROUNDS [SAMPLES]]
# In instructions (`instructions [COUNT_SAMPLES]', default 9): `bench --clock instructions
# --counter valgrind' against the bare loops counted the same way (micro_bare:count/4: under
# callgrind, collection on around each loop only, the same calls per sample as bench's, the
# least sample less the empty loop's), the bare loops counted again in another emulator as the
# A/A control; prints per expression the three counts and the ratios (goal: within 2 %).
#   bench/micro_vs_bare_loop.sh instructions [COUNT_SAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=time
if [ "${1:-}" = instructions ]; then mode=instructions; shift; fi
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
if [ "$mode" = instructions ]; then
    . bench/micro_vs_bare_instr.sh
    instructions "${1:-9}"
    exit 0
fi
# Each expression in an emulator of its own, in a session of its own (setsid), as `bench' runs
# each in a fresh node (which its port program puts in a new session): on a loaded host Linux's
# autogroups share the CPU by session, and a session just woken gets more of it than one busy
# for seconds. One emulator for all five read 2-4x slower than the nodes at a load of 20.
# `bare SIDE ROUND': SIDE bare, or aa (the A/A control: the bare loops again, in emulators of
# their own, compared with the first as bench is).
bare() {
    for i in $(seq 1 ${#exprs[@]}); do
        setsid -w env ERL_FLAGS='' ERL_AFLAGS='' ERL_ZFLAGS='' erl -noshell -pa "$out" \
            -eval "micro_bare:main($samples, $i), halt()." | sed "s/^/$1 $2 /" >>"$out/figures"
    done
}
bench() {
    "$out/beamscale" bench --json --samples "$samples" "${exprs[@]}" 2>/dev/null | python3 -c '
import json, sys
for i, r in enumerate(json.load(sys.stdin)["results"], 1):
    low = sorted(r["per_call"])[max(1, (len(r["per_call"]) + 5) // 10) - 1]
    print("bench %s %d %.2f %.2f" % (sys.argv[1], i, r["ns"], low))' "$1" >>"$out/figures"
}
# The three sides in turn, each first, second and third in as many rounds.
for r in $(seq 1 "$rounds"); do
    echo "load $r 0 $(cut -d' ' -f1 /proc/loadavg) 0" >>"$out/figures"
    case $(( r % 3 )) in
        1) bare bare "$r"; bench "$r"; bare aa "$r" ;;
        2) bench "$r"; bare aa "$r"; bare bare "$r" ;;
        0) bare aa "$r"; bare bare "$r"; bench "$r" ;;
    esac
done
echo "load $rounds 0 $(cut -d' ' -f1 /proc/loadavg) 0" >>"$out/figures"
python3 bench/micro_vs_bare_loop.py "$out/figures" "${exprs[@]}"
