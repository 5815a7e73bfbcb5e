#!/bin/bash
# Does `beamscale bench' agree with erlperf and Benchee on the same calls? The same expressions
# through erlperf's runner (erlperf:run/2, its long-lived runner process), Benchee (through
# `elixir', each expression a closure compiled in a module, as a script's `defmodule' is) and
# `beamscale bench' (fresh node per expression, the default process shape), one emulator per
# tool a round, the three tools' order rotated over ROUNDS rounds (default 6) so a slow spell
# of the host falls on every side. Prints per expression each tool's median ns/call over the
# rounds (launches), their min..max, and bench/erlperf and bench/Benchee with whether bench's
# median lies inside the peer's own launch spread (min..max): "inside" is all a loaded host lets
# one claim.
#   ERLPERF_DIR=DIR BENCHEE_DIR=DIR bench/micro_vs_peers.sh [ROUNDS]
# ERLPERF_DIR: erlperf built (its ebin/); BENCHEE_DIR: Benchee, Statistex and DeepMerge's
# .beam files (in it, or in its ebin/), the protocols consolidated in its consolidated/.
# Budgets: erlperf 1 warm-up and 5 samples of 200 ms; Benchee warmup 0.2 s, time 1 s; bench
# its defaults (warm-up 0.2 s, 0.5 s of samples).
# Figures: erlperf's iteration_time (1 s / its average rate), Benchee's average and median
# (per call, its own timer's overhead removed by Benchee), bench's ns (median of samples).
set -euo pipefail
cd "$(dirname "$0")/.."
how='build erlperf (github max-au/erlperf 2.3.0, erlc -o DIR/ebin src/*.erl) and Benchee 1.5.0
with statistex 1.1.0 and deep_merge 1.0.0 (elixirc -o DIR lib; protocols consolidated into
DIR/consolidated by Protocol.consolidate/2) outside this repo, then set ERLPERF_DIR and
BENCHEE_DIR to them'
peer_ebin() { if [ -d "$1/ebin" ]; then echo "$1/ebin"; else echo "$1"; fi; }
if [ -z "${ERLPERF_DIR:-}" ] || [ -z "${BENCHEE_DIR:-}" ] \
        || [ ! -f "$(peer_ebin "${ERLPERF_DIR:-/nonexistent}")/erlperf.beam" ] \
        || [ ! -f "$(peer_ebin "${BENCHEE_DIR:-/nonexistent}")/Elixir.Benchee.beam" ]; then
    echo "micro_vs_peers.sh: ERLPERF_DIR and BENCHEE_DIR must hold the built peers:" \
        $how >&2
    exit 2
fi
erlperf_ebin=$(peer_ebin "$ERLPERF_DIR")
benchee_ebin=$(peer_ebin "$BENCHEE_DIR")
# Protocols consolidated, as `mix' does and as Benchee asks (it warns otherwise): their
# .beam files in BENCHEE_DIR/consolidated, first in the code path (before Elixir loads its own).
consolidated=$BENCHEE_DIR/consolidated
rounds=${1:-6}
# Erlang expression | the same call in Elixir.
exprs=('lists:seq(1, 100).' 'lists:reverse(lists:seq(1, 30)).'
       'maps:from_list([{a, 1}, {b, 2}, {c, 3}]).' 'erlang:phash2({a, [1, 2, 3], <<"bin">>}).')
elixir_exprs=(':lists.seq(1, 100)' ':lists.reverse(:lists.seq(1, 30))'
              ':maps.from_list([{:a, 1}, {:b, 2}, {:c, 3}])'
              ':erlang.phash2({:a, [1, 2, 3], "bin"})')
out=$(mktemp -d /tmp/beamscale-micro-peers.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$out"' EXIT
./beamscale list >/dev/null
cp _build/default/bin/beamscale "$out/beamscale"
# The peers' emulators run with the flags bench's nodes have (ERL_*FLAGS emptied), each in a
# session of its own as bench's nodes are (their port program makes one): on a loaded host
# Linux's autogroups share the CPU by session, and the two runs before this read bench 0.24-0.88x
# erlperf with the peers left in this script's session.
noflags() { setsid -w env ERL_FLAGS='' ERL_AFLAGS='' ERL_ZFLAGS='' "$@"; }
{
    echo 'Es = ['
    for i in "${!exprs[@]}"; do
        [ "$i" = 0 ] || echo ','
        printf '"%s"' "$(printf '%s' "${exprs[$i]}" | sed 's/"/\\"/g')"
    done
    echo '],'
    echo 'lists:foreach(fun({I, E}) ->'
    echo '    #{result := #{iteration_time := Ns}} = erlperf:run(E, #{samples => 5,'
    echo '        sample_duration => 200, warmup => 1, report => full}),'
    echo '    io:format("~b ~b~n", [I, Ns]) end, lists:zip(lists:seq(1, length(Es)), Es)),'
    echo 'halt().'
} >"$out/erlperf.erl.eval"
{
    echo 'defmodule PeersJobs do'
    echo '  def jobs, do: ['
    for i in "${!elixir_exprs[@]}"; do
        echo "    {$((i + 1)), fn -> ${elixir_exprs[$i]} end},"
    done
    echo '  ]'
    echo 'end'
    echo 'for {i, f} <- PeersJobs.jobs() do'
    echo '  suite = Benchee.run(%{"e" => f}, warmup: 0.2, time: 1, memory_time: 0,'
    echo '    formatters: [], print: [benchmarking: false, configuration: false,'
    echo '    fast_warning: false])'
    echo '  [s] = suite.scenarios'
    echo '  st = s.run_time_data.statistics'
    echo '  IO.puts("#{i} #{st.average} #{st.median}")'
    echo 'end'
} >"$out/benchee.exs"
erlperf() {
    noflags erl -noshell -pa "$erlperf_ebin" -eval "$(cat "$out/erlperf.erl.eval")" \
        | sed "s/^\([0-9]*\) /erlperf $1 \1 /" >>"$out/figures"
}
benchee() {
    (cd "$out" && noflags elixir --erl "-pa $consolidated" -pa "$benchee_ebin" benchee.exs) \
        | grep '^[0-9]' \
        | awk -v r="$1" '{ print "benchee " r " " $1 " " $2
                           print "benchee_median " r " " $1 " " $3 }' \
        >>"$out/figures"
}
bench() {
    "$out/beamscale" bench --json --launches 1 "${exprs[@]}" 2>/dev/null | python3 -c '
import json, sys
for i, r in enumerate(json.load(sys.stdin)["results"], 1):
    print("bench %s %d %.2f" % (sys.argv[1], i, r["ns"]))' "$1" >>"$out/figures"
}
loads=()
for r in $(seq 1 "$rounds"); do
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
    case $(( r % 3 )) in
        1) erlperf "$r"; benchee "$r"; bench "$r" ;;
        2) bench "$r"; erlperf "$r"; benchee "$r" ;;
        0) benchee "$r"; bench "$r"; erlperf "$r" ;;
    esac
done
loads+=("$(cut -d' ' -f1 /proc/loadavg)")
python3 - "$out/figures" "${loads[*]}" "${exprs[@]}" <<'PY'
import statistics, sys
path, loads, exprs = sys.argv[1], [float(x) for x in sys.argv[2].split()], sys.argv[3:]
fig = {}
for line in open(path):
    tool, _round, i, ns = line.split()
    fig.setdefault((tool, int(i)), []).append(float(ns))
tools = ["erlperf", "benchee", "benchee_median", "bench"]
print("%d rounds; load average (1 min) %.1f..%.1f, median %.1f; %d cores" % (
    len(loads) - 1, min(loads), max(loads), statistics.median(loads),
    len(open("/proc/cpuinfo").read().split("processor")) - 1))
print("%-44s %-15s %9s %17s" % ("expression", "tool", "ns/call", "min..max"))
verdicts = []
for i, e in enumerate(exprs, 1):
    med = {}
    for t in tools:
        v = fig.get((t, i), [])
        if not v:
            print("%-44s %-15s %9s" % (e, t, "missing")); continue
        med[t] = statistics.median(v)
        print("%-44s %-15s %9.1f %8.1f..%-8.1f" % (e, t, med[t], min(v), max(v)))
    for peer in ["erlperf", "benchee", "benchee_median"]:
        if "bench" not in med or peer not in med:
            continue
        v = fig[(peer, i)]
        inside = min(v) <= med["bench"] <= max(v)
        print("%-44s bench/%-9s %9.3f  peer spread %.3f..%.3f: %s" % (
            e, peer, med["bench"] / med[peer], min(v) / med[peer], max(v) / med[peer],
            "inside" if inside else "OUTSIDE"))
PY
