#!/bin/bash
# Verdicts on identical code beside one CPU hog per core (`yes', stopped by pid): PAIRS times
# three `bench' runs of bench/ci_gate/bench_work.erl, each in LAUNCHES fresh emulators per side
# (A and B unchanged, S SLOWDOWN % slower through CI_GATE_SLOWDOWN), then `compare A B
# --fail-if-slower THRESHOLD' failing is a false alarm, `compare A S' failing a caught slowdown.
# Then the same for `run' (bench/ci_gate.sh, on RUN_CLOCK: cpu by default, the clock a gate
# on computing work uses; wall for the elapsed time) unless NO_RUN=1. Goal (issue 54): at
# most 1 false alarm in 20, at least 19 of 20 slowdowns caught. It takes long: PAIRS is the
# first argument (20 for the goal).
# CLOCK=instructions counts the runs with `--clock instructions --counter valgrind' instead
# (no `run' side; defaults LAUNCHES 2, THRESHOLD 1, SLOWDOWN 2: S does 1020 hashes a call for
# 1000). Goal: 0 false alarms, the 2 % change caught 20 of 20. A pair is six Valgrind boots.
#   [CLOCK=time|instructions] bench/noise_gate.sh [PAIRS] [LAUNCHES] [THRESHOLD_PCT] [SLOWDOWN_PCT]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
clock=${CLOCK:-time}
case $clock in
    time) counted=(--time 0.3 --samples 10); defaults=(3 5 10) ;;
    instructions) counted=(--time 0.1 --samples 5 --clock instructions --counter valgrind
                           --count-samples 5); defaults=(2 1 2); NO_RUN=1 ;;
    *) echo "CLOCK=$clock: expected time or instructions" >&2; exit 2 ;;
esac
pairs=${1:-20}
launches=${2:-${defaults[0]}}
threshold=${3:-${defaults[1]}}
slowdown=${4:-${defaults[2]}}
gate_out "${CI_GATE_OUT:-}" noise-gate
trap 'hogs_stop; rm -rf "$out"' EXIT
hogs_start

run() { # NAME same|slow
    local pct=0
    if [ "$2" = slow ]; then pct=$slowdown; fi
    CI_GATE_SLOWDOWN=$pct "$bs" bench bench/ci_gate/bench_work.erl 'bench_work:work(State).' \
        --init-runner 'bench_work:rounds().' --launches "$launches" "${counted[@]}" \
        --name "$1" --out "$out" --quiet --json >/dev/null 2>&1
}
# The ratio B / A, for the log: of times `1.02x [', of instructions `1.0200x (A'.
ratio() { grep -o '[0-9.]*x [[(]' "$out/$1-$2.txt" | head -n 1 | tr -d ' [('; }

start=$(date +%s)
echo "bench, clock $clock: $pairs pairs, launches $launches, --fail-if-slower $threshold," \
     "slowdown $slowdown %, $(nproc) CPU hogs, load $(cut -d' ' -f1 /proc/loadavg)"
gate_pairs "$pairs" unchanged "${slowdown}% slower" --fail-if-slower "$threshold"
echo "$(( $(date +%s) - start )) s; load $(cut -d' ' -f1 /proc/loadavg)"
if [ -z "${NO_RUN:-}" ]; then
    echo "run (bench/ci_gate.sh, ${RUN_CLOCK:-cpu} clock, launches $launches):"
    bench/ci_gate.sh "$pairs" "$launches" 5 "$threshold" "$slowdown" "${RUN_CLOCK:-cpu}"
fi
