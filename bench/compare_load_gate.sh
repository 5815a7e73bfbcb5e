#!/bin/bash
# Does `beamscale compare` of two load runs make a CI gate that neither cries wolf nor sleeps?
# PAIRS times: three short loads of beamscale_target_workers (WORKERS workers of SERVICE_MS
# each, a known service time) at RATE users/s for SECONDS: A and B of the same server, S of
# the server slowed by SLOWDOWN % (its service time longer). `compare A B` failing is a false
# alarm, `compare A S` failing a caught slowdown. Gates: --fail-if-p99-above THRESHOLD and
# --fail-if-throughput-below THRESHOLD (an open load keeps its throughput below capacity, so
# the p99 gate is the one a slower server trips). Prints both counts. A long service time
# (1 s) keeps the host's scheduling noise (tens of ms in the tail on a busy 2-core host) small
# beside the slowdown. COMPARE_GATE_OUT=DIR keeps the runs there.
#   bench/compare_load_gate.sh [PAIRS] [SECONDS] [RATE] [THRESHOLD_PCT] [SLOWDOWN_PCT]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
pairs=${1:-10}
seconds=${2:-10}
rate=${3:-100}
threshold=${4:-5}
slowdown=${5:-20}
workers=${WORKERS:-256}
service=${SERVICE_MS:-1000}
slow=$(( service * (100 + slowdown) / 100 ))
gate_out "${COMPARE_GATE_OUT:-}" compare-load-gate  # COMPARE_GATE_OUT=DIR keeps the runs

scenario() { # FILE SERVICE_MS
    cat > "$1" <<SCENARIO
{targets, [{sut, #{start => #{erl => "erl", flags => "+sbwt none",
                              init => {beamscale_target_workers, start, [$workers, $2]}}}}]}.
{phases, [{main, #{duration_s => $seconds, rate => $rate}}]}.
{sessions, [{one, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []},
                                      timeout_ms => 5000}}]}}]}.
{drain_s, 2}.
SCENARIO
}
scenario "$out/same.scenario" "$service"
scenario "$out/slow.scenario" "$slow"

run() { "$bs" load "$out/$2.scenario" --name "$1" --out "$out" --quiet >/dev/null; }

# The p99 (corrected) ratio B / A, for the log.
ratio() { echo "p99 $(grep 'corrected) p99 ' "$out/$1-$2.txt" | grep -o '[0-9.]*x \[.*\]' \
                         | head -n 1)"; }

echo "workers $workers x ${service} ms (slowed: $slow ms), rate $rate/s for $seconds s," \
     "gates at $threshold %"
gate_pairs "$pairs" "same server" "${slowdown}% slower" --fail-if-p99-above "$threshold" \
    --fail-if-throughput-below "$threshold"
