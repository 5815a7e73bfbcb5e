#!/bin/bash
# Does `beamscale compare --fail-if-slower` make a CI gate that neither cries wolf nor sleeps?
# PAIRS times: three short runs of bench/ci_gate/ci_work.erl, each in LAUNCHES fresh emulators:
# A and B of unchanged code, S with the benchmark SLOWDOWN % slower (CI_GATE_SLOWDOWN). Then
# `compare A B` failing is a false alarm and `compare A S` failing a caught slowdown. Prints
# both counts (goal: at most 1 false alarm in 20, at least 19 of 20 slowdowns caught), then the
# launches' noise and the launches a side that goal needs at it (bench/ci_gate_noise.py).
# CLOCK is the runs' --clock: cpu (the emulator's CPU time, the default here) or wall. The CPU
# clock counts milliseconds, so with it the iterations are `intermediate' (about 0.4 s of CPU;
# a 60 ms one would be a few ticks); VERSION overrides.
# CI_GATE_OUT=DIR keeps the runs in DIR; with CI_GATE_REUSE=1 the runs already there are only
# compared again (a change to `compare' measured on the same runs).
#   bench/ci_gate.sh [PAIRS] [LAUNCHES] [ITERATIONS] [THRESHOLD_PCT] [SLOWDOWN_PCT] [CLOCK]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
pairs=${1:-20}
launches=${2:-8}
iterations=${3:-5}
threshold=${4:-5}
slowdown=${5:-10}
clock=${6:-cpu}
if [ "$clock" = cpu ]; then version=${VERSION:-intermediate}; else version=${VERSION:-short}; fi
gate_out "${CI_GATE_OUT:-}" ci-gate

run() { # NAME same|slow
    if [ -n "${CI_GATE_REUSE:-}" ]; then return 0; fi
    local pct=0
    if [ "$2" = slow ]; then pct=$slowdown; fi
    CI_GATE_SLOWDOWN=$pct "$bs" run --bench ci_work --bench-path bench/ci_gate \
        --schedulers 1 --iterations "$iterations" --warmups 1 --launches "$launches" \
        --clock "$clock" --version "$version" \
        --no-sample --name "$1" --out "$out" --quiet >/dev/null
}

# The ratio B / A of the one result, for the log.
ratio() { grep -o '[0-9.]*x' "$out/$1-$2.txt" | head -n 1; }

echo "launches $launches, iterations $iterations, --fail-if-slower $threshold," \
     "slowdown $slowdown %, clock $clock, version $version"
gate_pairs "$pairs" unchanged "${slowdown}% slower" --fail-if-slower "$threshold"
# What the goal asks of the host: the launches' noise, and the launches a side it would need.
python3 bench/ci_gate_noise.py "$out" "$launches" "$slowdown"
