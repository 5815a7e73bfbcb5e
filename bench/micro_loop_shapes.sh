#!/bin/bash
# Where `beamscale bench' loses time against the bare loop of bench/micro_vs_bare_loop.sh:
# rand:uniform(1000) in loops of several shapes and modules, and through beamscale's own
# harness (beamscale_bench_micro), alternated ROUNDS times in one emulator; minimum ns per call
# of each and its ratio to the bare loop.
#   bench/micro_loop_shapes.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-15}
out=$(mktemp -d /tmp/beamscale-micro-shapes.XXXXXX)
trap 'rm -rf "$out"' EXIT
rebar3 compile >/dev/null
erlc -o "$out" bench/micro_shapes/micro_shapes.erl bench/micro_shapes/micro_shapes_ab.erl
uptime
erl -noshell -pa "$out" -pa _build/default/lib/*/ebin -run micro_shapes main "$rounds" -s init stop
uptime
