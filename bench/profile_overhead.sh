#!/bin/sh
# The overhead of `run --profile' on a benchmark's time (goal: at most 5 % on mbrot), each part
# printed as a ratio with a bootstrap 95 % interval (bench/profile_overhead.py):
#   - the measured times, profiled run over plain run: ROUNDS rounds of two runs of BENCH at 1
#     and 2 schedulers, one plain, one with --profile, their order alternating between rounds
#     (a drift of the host's load falls on both);
#   - why the measured nodes run without `+JPperf true' (a profile has nodes of its own): one
#     run with two erl_args, without and with the flag, LAUNCHES fresh nodes each, interleaved;
#   - perf's cost on the calls it samples (never measurements): per profiled point, the median
#     call under `perf record' over the median call without it (docs/profiles.md).
#   bench/profile_overhead.sh [ROUNDS] [BENCH] [VERSION] [WINDOW_MS] [STACKS] [LAUNCHES]
set -e
cd "$(dirname "$0")/.."
rounds=${1:-4}
bench=${2:-mbrot}
version=${3:-short}
window=${4:-4000}
stacks=${5:-dwarf}
launches=${6:-6}
out=$(mktemp -d /tmp/beamscale-profile-overhead.XXXXXX)
trap 'rm -rf "$out"' EXIT
./beamscale list >/dev/null
load0=$(cut -d' ' -f1 /proc/loadavg)
echo '{erl_args, [{plain, ""}, {jpperf, "+JPperf true"}]}.' > "$out/flags.config"
run() {
    ./beamscale run --bench "$bench" --version "$version" --schedulers 1,2 --warmups 1 \
        --no-sample --out "$out" --quiet "$@" >/dev/null; }
run --config "$out/flags.config" --iterations 5 --launches "$launches" --name flags
for r in $(seq 1 "$rounds"); do
    plain="--iterations 5 --launches 1 --name plain$r"
    prof="--iterations 5 --launches 1 --profile --profile-window $window"
    prof="$prof --profile-stacks $stacks --name prof$r"
    if [ $((r % 2)) -eq 1 ]; then run $plain; run $prof; else run $prof; run $plain; fi
done
echo "$bench ($version), $launches launches of each flag set, $rounds rounds, profiles with" \
    "$stacks stacks, window $window ms; load average $load0 at start," \
    "$(cut -d' ' -f1 /proc/loadavg) at end:"
python3 bench/profile_overhead.py "$out"
