#!/bin/sh
# Times a CPU-bound benchmark with and without sampling, side by side in one invocation, and
# prints the ratio of the median iteration times (goal: under 1.01). Runs alternate (sampled,
# unsampled, sampled, ...) so that drift in the machine's load hits both alike. MSACC is the
# share (%) of each interval microstate accounting is on in the sampled runs (--msacc; default:
# beamscale's default, 10).
#   bench/sampler_overhead.sh [ROUNDS] [ITERATIONS] [BENCH] [VERSION] [MSACC]
set -e
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-4}
iterations=${2:-10}
bench=${3:-mbrot}
version=${4:-intermediate}
msacc=${5:-}
out=$(mktemp -d /tmp/beamscale-overhead.XXXXXX)
trap 'rm -rf "$out"' EXIT
./beamscale list >/dev/null
run() { # NAME EXTRA-OPTION
    ./beamscale run --bench "$bench" --version "$version" --schedulers 2 \
        --iterations "$iterations" --warmups 1 --name "$1" --out "$out" --quiet $2 >/dev/null
    # seconds is the last column; args before it may hold quoted commas
    tail -n +2 "$out/$1/measurements.csv" | awk -F, '{ print $NF }' >> "$out/$3.txt"
}
i=1
while [ "$i" -le "$rounds" ]; do
    run "on$i" "${msacc:+--msacc $msacc}" on
    run "off$i" "--no-sample" off
    i=$((i + 1))
done
on=$(median "$out/on.txt")
off=$(median "$out/off.txt")
n=$(wc -l < "$out/on.txt")
awk -v on="$on" -v off="$off" -v n="$n" -v b="$bench" -v ver="$version" \
    -v m="${msacc:-default}" 'BEGIN {
    printf "%s (%s), msacc share %s, %d iterations each: median sampled %.4f s, unsampled %.4f s\n",
        b, ver, m, n, on, off
    printf "ratio sampled/unsampled: %.4f (goal < 1.01)\n", on / off }'
grep -c ',ok,' "$out"/on1/samples.csv | sed 's/^/samples rows in first sampled run: /'
