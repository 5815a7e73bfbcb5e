#!/bin/bash
# Verdicts on identical code beside one CPU hog per core (`yes', stopped by pid): PAIRS times
# three `bench' runs of bench/ci_gate/bench_work.erl, each in LAUNCHES fresh emulators per side
# (A and B unchanged, S SLOWDOWN % slower through CI_GATE_SLOWDOWN), then `compare A B
# --fail-if-slower THRESHOLD' failing is a false alarm, `compare A S' failing a caught slowdown.
# Then the same for `run' (bench/ci_gate.sh, wall clock) unless NO_RUN=1. Goal (issue 54): at
# most 1 false alarm in 20, at least 19 of 20 slowdowns caught. It takes long: PAIRS is the
# first argument (20 for the goal).
#   bench/noise_gate.sh [PAIRS] [LAUNCHES] [THRESHOLD_PCT] [SLOWDOWN_PCT]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
pairs=${1:-20}
launches=${2:-3}
threshold=${3:-5}
slowdown=${4:-10}
gate_out "${CI_GATE_OUT:-}" noise-gate
trap 'hogs_stop; rm -rf "$out"' EXIT
hogs_start

run() { # NAME same|slow
    local pct=0
    if [ "$2" = slow ]; then pct=$slowdown; fi
    CI_GATE_SLOWDOWN=$pct "$bs" bench bench/ci_gate/bench_work.erl 'bench_work:work(State).' \
        --init-runner 'bench_work:rounds().' --launches "$launches" --time 0.3 --samples 10 \
        --name "$1" --out "$out" --quiet --json >/dev/null 2>&1
}
ratio() { grep -o '[0-9.]*x \[' "$out/$1-$2.txt" | head -n 1 | tr -d ' ['; }

echo "bench: $pairs pairs, launches $launches, --fail-if-slower $threshold," \
     "slowdown $slowdown %, $(nproc) CPU hogs, load $(cut -d' ' -f1 /proc/loadavg)"
gate_pairs "$pairs" unchanged "${slowdown}% slower" --fail-if-slower "$threshold"
if [ -z "${NO_RUN:-}" ]; then
    echo "run (bench/ci_gate.sh, wall clock, launches $launches):"
    bench/ci_gate.sh "$pairs" "$launches" 5 "$threshold" "$slowdown" wall
fi
