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
if [ -n "${CI_GATE_OUT:-}" ]; then
    out=$CI_GATE_OUT
    mkdir -p "$out"
else
    out=$(mktemp -d /tmp/beamscale-ci-gate.XXXXXX)
    trap 'rm -rf "$out"' EXIT
fi
./beamscale list >/dev/null
# A copy of the built command: a source edited (and rebuilt) meanwhile changes no measurement.
cp _build/default/bin/beamscale "$out/beamscale"
bs="$out/beamscale"

run() { # NAME SLOWDOWN
    if [ -n "${CI_GATE_REUSE:-}" ]; then return 0; fi
    CI_GATE_SLOWDOWN=$2 "$bs" run --bench ci_work --bench-path bench/ci_gate \
        --schedulers 1 --iterations "$iterations" --warmups 1 --launches "$launches" \
        --clock "$clock" --version "$version" \
        --no-sample --name "$1" --out "$out" --quiet >/dev/null
}

# Exit 0: passed, 1: the gate failed; anything else (2: nothing in common) stops the script.
gate() { # A B
    local code=0
    "$bs" compare "$out/$1" "$out/$2" --fail-if-slower "$threshold" \
        --out "$out/$1-$2.html" >"$out/$1-$2.txt" 2>&1 || code=$?
    case $code in 0|1) return $code ;; *) cat "$out/$1-$2.txt" >&2; exit "$code" ;; esac
}

# The ratio B / A of the one result, for the log.
ratio() { grep -o '[0-9.]*x' "$out/$1-$2.txt" | head -n 1; }

alarms=0
caught=0
for i in $(seq 1 "$pairs"); do
    # One after the other, so a slow spell of the host falls on all three alike.
    run "a$i" 0
    run "b$i" 0
    run "s$i" "$slowdown"
    if gate "a$i" "b$i"; then a=pass; else a=FAIL; alarms=$((alarms + 1)); fi
    if gate "a$i" "s$i"; then s=missed; else s=caught; caught=$((caught + 1)); fi
    echo "pair $i: unchanged $a ($(ratio "a$i" "b$i")), ${slowdown}% slower $s" \
         "($(ratio "a$i" "s$i"))"
done
echo "launches $launches, iterations $iterations, --fail-if-slower $threshold," \
     "slowdown $slowdown %, clock $clock, version $version"
echo "false alarms: $alarms of $pairs"
echo "slowdowns caught: $caught of $pairs"
# What the goal asks of the host: the launches' noise, and the launches a side it would need.
python3 bench/ci_gate_noise.py "$out" "$launches" "$slowdown"
