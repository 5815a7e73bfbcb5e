#!/bin/sh
# `beamscale saturate` against a server of known capacity, RUNS times (default 3): K workers
# (default 10) each holding a request for SERVICE_MS (default 50), so the server completes at
# most K / SERVICE_MS requests a second (200/s) whatever the shared CPU does
# (beamscale_target_workers). Each run has the budget BUDGET (default 3m) and the objective
# "p99<1s,errors<1%,achieved>95%"; other options are saturate's defaults. Prints each run's
# capacity with its bracket, its error against K / SERVICE_MS, and its wall time (goal: within
# +-10 % in at most 3 minutes, every run).
#   bench/saturate_known_capacity.sh [RUNS] [K] [SERVICE_MS] [BUDGET]
# The command is a copy of the built escript, so editing the sources meanwhile changes nothing.
set -eu
cd "$(dirname "$0")/.."
runs=${1:-3}
k=${2:-10}
service=${3:-50}
budget=${4:-3m}
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-saturate.XXXXXX)
trap 'rm -rf "$out"' EXIT
cp _build/default/bin/beamscale "$out/beamscale"
cat > "$out/workers.scenario" <<EOT
{targets, [{sut, #{start => #{init => {beamscale_target_workers, start, [$k, $service]}}}}]}.
{phases, [{p, #{duration_s => 1, rate => 1}}]}.
{sessions, [{s, #{steps => [{rpc, #{target => sut,
                                    call => {beamscale_target_workers, request, []}}}]}}]}.
{slo, "p99<1s,errors<1%,achieved>95%"}.
EOT
known=$(awk -v k="$k" -v s="$service" 'BEGIN { printf "%.1f", k * 1000 / s }')
echo "known capacity: $k workers x $service ms = $known/s; budget $budget"
i=1
while [ "$i" -le "$runs" ]; do
    t0=$(date +%s)
    "$out/beamscale" saturate "$out/workers.scenario" --out "$out" --name "run$i" \
        --budget "$budget" --quiet >/dev/null
    t1=$(date +%s)
    # summary.json is one line of JSON; pick the figures out with sed.
    get() { sed -n "s/.*\"$1\": *\([^,}]*\).*/\1/p" "$out/run$i/summary.json"; }
    c=$(get capacity_per_s)
    awk -v i="$i" -v c="$c" -v lo="$(get capacity_low_per_s)" -v hi="$(get capacity_high_per_s)" \
        -v by="$(get limited_by)" -v why="$(get stopped)" -v n="$(get levels)" \
        -v known="$known" -v t=$((t1 - t0)) 'BEGIN {
        printf "run %d: capacity %.1f/s [%s, %s) error %+.1f %% limited by %s, %d levels, " \
               "stopped %s, %d s\n", i, c, lo, hi, 100 * (c - known) / known, by, n, why, t }'
    i=$((i + 1))
done
