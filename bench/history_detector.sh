#!/bin/bash
# The change-point detector of `beamscale history' on real measurements: its false positives on
# A/A histories (identical code) and its detection of an injected 10 % slowdown.
# Measures once, beside a CPU hog per core (`yes > /dev/null', stopped by pid): SAME_LAUNCHES
# fresh emulators of bench/ci_gate/ci_work.erl on the CPU clock, and SLOW_LAUNCHES of the same
# code made SLOWDOWN % slower (CI_GATE_SLOWDOWN: more rounds of work, a real slowdown, not a
# number multiplied). Each launch is one run of a history (its median of ITERATIONS). Then
# bench/history_detector.escript draws, seeded, HISTORIES histories of RUNS_BEFORE identical
# runs then RUNS_AFTER slow ones (resampled from the measured launches, with replacement), and
# HISTORIES of RUNS_BEFORE + RUNS_AFTER identical runs, and runs the detector of `history show'
# on each (beamscale_stats_history, default alpha 0.001): it prints how many step histories
# have exactly one change point at run RUNS_BEFORE + 1 (+/- 1) and how many A/A ones have none.
# HISTORY_OUT=DIR keeps the measured runs in DIR; HISTORY_REUSE=1 only resamples them.
# A run of a history is PER_RUN launches (default 3, as the CI recipe's `--launches 3'): the
# median of PER_RUN launch medians drawn from the measured ones.
# CHUNKS=K (default 5 on the time clock, 1 on instructions; at most either side's launches)
# measures each side in K blocks taken in turn (identical, slow, identical, ...), so a drift of
# the host's speed over minutes falls on both sides instead of on the step.
# CLOCK=instructions measures bench/ci_gate/bench_work.erl with `bench --clock instructions
# --counter valgrind' instead (as bench/noise_gate.sh; no hogs: counts do not depend on them),
# the slow side doing SLOWDOWN % more hashes (default 2), a launch's figure its least count;
# defaults SAME_LAUNCHES 3, SLOW_LAUNCHES 3, PER_RUN 1. Goal: 10 of 10 and no false change.
#   [CLOCK=time|instructions] bench/history_detector.sh [HISTORIES] [SAME_LAUNCHES]
#       [SLOW_LAUNCHES] [ITERATIONS] [SLOWDOWN_PCT] [RUNS_BEFORE] [RUNS_AFTER] [PER_RUN]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
clock=${CLOCK:-time}
case $clock in
    time) defaults=(40 30 10 3 5) ;;
    instructions) defaults=(3 3 2 1 1) ;; # same, slow, slowdown, per run, chunks
    *) echo "CLOCK=$clock: expected time or instructions" >&2; exit 2 ;;
esac
histories=${1:-10}
same=${2:-${defaults[0]}}
slow=${3:-${defaults[1]}}
iterations=${4:-3}
slowdown=${5:-${defaults[2]}}
before=${6:-30}
after=${7:-30}
per_run=${8:-${defaults[3]}}
gate_out "${HISTORY_OUT:-}" history-detector

hogs=()
stop_hogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap 'stop_hogs; [ -n "${HISTORY_OUT:-}" ] || rm -rf "$out"' EXIT

measure() { # NAME LAUNCHES SLOWDOWN
    [ -n "${HISTORY_REUSE:-}" ] && return 0
    if [ "$clock" = instructions ]; then
        CI_GATE_SLOWDOWN=$3 "$bs" bench bench/ci_gate/bench_work.erl 'bench_work:work(State).' \
            --init-runner 'bench_work:rounds().' --launches "$2" --time 0.1 --samples 5 \
            --clock instructions --counter valgrind --count-samples 5 --name "$1" --out "$out" \
            --quiet --json >/dev/null
        return 0
    fi
    CI_GATE_SLOWDOWN=$3 "$bs" run --bench ci_work --bench-path bench/ci_gate --schedulers 1 \
        --iterations "$iterations" --warmups 1 --launches "$2" --clock cpu \
        --version intermediate --no-sample --name "$1" --out "$out" --quiet >/dev/null
}

if [ -z "${HISTORY_REUSE:-}" ] && [ "$clock" = time ]; then
    for _ in $(seq "$(nproc)"); do yes > /dev/null & hogs+=($!); done
fi
start=$(date +%s)
chunks=${CHUNKS:-${defaults[4]}}
[ "$chunks" -le "$same" ] || chunks=$same
[ "$chunks" -le "$slow" ] || chunks=$slow
same_dirs=() slow_dirs=()
for k in $(seq "$chunks"); do
    sfx=$([ "$chunks" = 1 ] || echo "$k")
    measure "same$sfx" $(( same / chunks + (k <= same % chunks) )) 0
    measure "slow$sfx" $(( slow / chunks + (k <= slow % chunks) )) "$slowdown"
    same_dirs+=("$out/same$sfx") slow_dirs+=("$out/slow$sfx")
done
stop_hogs
echo "measured $same + $slow launches (clock $clock, a hog per core on the time clock)" \
     "in $(( $(date +%s) - start )) s"
join() { local IFS=,; echo "$*"; }
escript bench/history_detector.escript "$(join "${same_dirs[@]}")" "$(join "${slow_dirs[@]}")" \
    "$histories" "$before" "$after" \
    "$per_run" "$clock"
