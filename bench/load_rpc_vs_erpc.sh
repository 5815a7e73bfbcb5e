#!/bin/sh
# rpc calls of a no-op (erlang:node/0) on a fresh peer node at saturation: CONCURRENCY beamscale
# users looping rpc calls with no think time, against a bare loop of erpc:call/4 in as many
# processes (same emulator flags as the beamscale command), one after the other in one
# invocation, alternating for ROUNDS rounds (the shared host's load drifts by tens of percent
# within minutes). Prints every round's rates (calls/s), their medians and the ratio of the
# medians beamscale/erpc (goal >= 0.9).
# Both targets are started alike, with the emulator flags TARGET_FLAGS (default "+sbwt none": a
# target's schedulers that spin while waiting take a core from the callers on a 2-core host,
# which swung the rates of either side by a third between rounds; "" for the default).
#   bench/load_rpc_vs_erpc.sh [SECONDS] [CONCURRENCY] [ROUNDS] [TARGET_FLAGS]
#   (defaults 10, 50, 4 and "+sbwt none")
# Steady rates: beamscale's from load.csv without its first 2 seconds; the bare loop's over the
# same number of seconds after a 2 s warm-up.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-10}
conc=${2:-50}
rounds=${3:-4}
tflags=${4-+sbwt none}
[ "$secs" -ge 5 ] || { echo "SECONDS must be at least 5" >&2; exit 2; }
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-rpc.XXXXXX)
trap 'rm -rf "$out"' EXIT

cat > "$out/rpc.scenario" <<EOF
{targets, [{sut, #{start => #{flags => "$tflags"}}}]}.
{phases, [{run, #{duration_s => $secs, rate => 1000, max_users => $conc}}]}.
{sessions, [{call, #{steps => [{loop, 1000000000, [{rpc, #{call => {erlang, node, []}}}]}]}}]}.
{sample, []}.
{drain_s, 0}.
{time_limit_s, $secs}.
EOF
beamscale() { # ROUND
    ./beamscale load "$out/rpc.scenario" --name "bs$1" --out "$out" --quiet >/dev/null
    awk -F, 'NR > 3 && $2 == "run" { n++; s += $6 } END { printf "%.0f\n", s / n }' \
        "$out/bs$1/load.csv"
}

# The bare loop: a distributed erl on loopback, a peer started like beamscale's, N processes.
flags=$(sed -n 's/.*"%%! \(.*\) -escript.*/\1/p' rebar.config)
epmd -daemon -address 127.0.0.1
# The target's flags as more peer:start/1 args.
targs=$(printf '%s' "$tflags" | awk '{ for (i = 1; i <= NF; i++) printf ", \"%s\"", $i }')
bare() {
# shellcheck disable=SC2086
erl $flags -noshell -name "bare_$$@127.0.0.1" -setcookie "bare$$" \
    -kernel inet_dist_use_interface '{127,0,0,1}' -eval "
    {ok, Peer, Node} = peer:start(#{name => \"bare_peer_$$\", host => \"127.0.0.1\",
        longnames => true, args => [\"-setcookie\", \"bare$$\", \"-kernel\",
        \"inet_dist_use_interface\", \"{127,0,0,1}\", \"+S\", \"2:2\"$targs]}),
    C = counters:new(1, [write_concurrency]),
    Loop = fun L() -> Node = erpc:call(Node, erlang, node, [], 5000),
                      counters:add(C, 1, 1), L() end,
    Pids = [spawn(Loop) || _ <- lists:seq(1, $conc)],
    timer:sleep(2000), V0 = counters:get(C, 1),
    timer:sleep(($secs - 2) * 1000), V1 = counters:get(C, 1),
    [exit(P, kill) || P <- Pids],
    peer:stop(Peer),
    io:format(\"~b~n\", [round((V1 - V0) / ($secs - 2))]),
    halt()."
}

i=1
while [ "$i" -le "$rounds" ]; do
    # Which goes first alternates: a drift in the host's load hits both alike.
    if [ $((i % 2)) -eq 1 ]; then
        beamscale "$i" >> "$out/bs.txt"; bare >> "$out/bare.txt"
    else
        bare >> "$out/bare.txt"; beamscale "$i" >> "$out/bs.txt"
    fi
    echo "round $i: beamscale $(tail -n 1 "$out/bs.txt")," \
        "bare erpc loop $(tail -n 1 "$out/bare.txt")"
    i=$((i + 1))
done
awk -v bs="$(median "$out/bs.txt")" -v e="$(median "$out/bare.txt")" -v c="$conc" \
    -v s="$secs" -v r="$rounds" -v tf="$tflags" 'BEGIN {
    printf "%d concurrent callers, %d s each, %d rounds, erpc:call of erlang:node/0 on a peer\n",
        c, s, r
    printf "target flags: %s\n", (tf == "" ? "(default)" : tf)
    printf "median calls/s: beamscale %d, bare erpc loop %d\n", bs, e
    printf "beamscale/erpc: %.2f (goal >= 0.9)\n", (e > 0 ? bs / e : 0) }'
