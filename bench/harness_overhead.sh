#!/bin/sh
# Times a benchmark through beamscale's harness (fresh peer node, erpc, output capture, the
# multi-phase runner) and through a bare loop calling its run/3 in a plain emulator with the
# same scheduler flags, and prints both medians and their ratio (goal: within 2 %). Rounds
# alternate (harness, bare, harness, ...) so that drift in the machine's load hits both alike.
#   bench/harness_overhead.sh [ROUNDS] [ITERATIONS] [BENCH] [VERSION] [SCHEDULERS]
set -e
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-10}
iterations=${2:-2}
bench=${3:-mbrot}
version=${4:-intermediate}
schedulers=${5:-2}
out=$(mktemp -d /tmp/beamscale-harness.XXXXXX)
trap 'rm -rf "$out"' EXIT
./beamscale list >/dev/null
ebin=_build/default/lib/beamscale_bench/ebin

harness() { # ROUND
    ./beamscale run --bench "$bench" --version "$version" --schedulers "$schedulers" \
        --iterations "$iterations" --warmups 1 --no-sample --name "h$1" --out "$out" \
        --quiet >/dev/null
    # The seconds are the last column; args may hold quoted commas.
    tail -n +2 "$out/h$1/measurements.csv" | awk -F, '{ print $NF }' >> "$out/harness.txt"
}

# One warm-up and ITERATIONS timed calls of run/3 with the first argument set, in the shell's
# process; each time is appended to the file, what the benchmark prints goes to /dev/null.
bare() {
    erl -noshell +S "$schedulers:$schedulers" -pa "$ebin" -eval "
        Mod = beamscale_bench:module($bench),
        Cores = erlang:system_info(logical_processors_available),
        [Args | _] = Mod:bench_args($version, [{number_of_cores, Cores}, {slaves, []}]),
        Time = fun() ->
                   T0 = erlang:monotonic_time(),
                   _ = Mod:run(Args, [], []),
                   erlang:convert_time_unit(erlang:monotonic_time() - T0, native, nanosecond)
               end,
        _ = Time(),
        Times = [Time() || _ <- lists:seq(1, $iterations)],
        ok = file:write_file(\"$out/bare.txt\", [io_lib:format(\"~.9f~n\", [T / 1.0e9])
                                                || T <- Times], [append]),
        halt()." >/dev/null
}

i=1
while [ "$i" -le "$rounds" ]; do
    harness "$i"
    bare
    i=$((i + 1))
done
h=$(median "$out/harness.txt")
b=$(median "$out/bare.txt")
n=$(wc -l < "$out/harness.txt")
m=$(wc -l < "$out/bare.txt")
awk -v h="$h" -v b="$b" -v n="$n" -v m="$m" -v bench="$bench" -v ver="$version" \
    -v s="$schedulers" 'BEGIN {
    printf "%s (%s), %d schedulers: median through the harness %.4f s (%d runs), bare %.4f s (%d runs)\n", bench, ver, s, h, n, b, m
    printf "ratio harness/bare: %.4f (goal within 0.98 .. 1.02)\n", h / b }'
