#!/bin/sh
# The overhead of `run --profile' on a benchmark's time, as beamscale measures it at each point:
# calls of the benchmark under `perf record' against calls without it, half a window before
# and half after (docs/profiles.md). ROUNDS runs of BENCH at 1 and 2 schedulers; prints every
# point's overhead and their median (goal: at most 5 % on mbrot). STACKS: dwarf or fp.
#   bench/profile_overhead.sh [ROUNDS] [BENCH] [VERSION] [WINDOW_MS] [STACKS]
set -e
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-3}
bench=${2:-mbrot}
version=${3:-short}
window=${4:-4000}
stacks=${5:-dwarf}
out=$(mktemp -d /tmp/beamscale-profile-overhead.XXXXXX)
trap 'rm -rf "$out"' EXIT
./beamscale list >/dev/null
for r in $(seq 1 "$rounds"); do
    ./beamscale run --bench "$bench" --version "$version" --schedulers 1,2 --iterations 1 \
        --warmups 1 --launches 1 --no-sample --profile --profile-window "$window" \
        --profile-stacks "$stacks" --name "r$r" --out "$out" --quiet >/dev/null
done
for f in "$out"/r*/profiles/"$bench"/*.json; do
    tr ',' '\n' < "$f" | sed -n 's/^"overhead_pct"://p'
done > "$out/overheads"
echo "$bench ($version), $stacks stacks, window $window ms, $rounds rounds:"
echo "  overhead per point (%): $(tr '\n' ' ' < "$out/overheads")"
echo "  median overhead (%): $(median "$out/overheads")"
