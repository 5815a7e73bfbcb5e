#!/bin/sh
# The same open-model load through beamscale and through Tsung, one after the other against one
# server (beamscale_target_http in its own erl on 127.0.0.1): RATE sessions a second for SECONDS,
# each session one HTTP GET on a new connection. beamscale runs k6's constant_arrival_rate
# (docs/executors.md: an iteration every 1/RATE s, at most 1000 in flight); Tsung's closest form
# is an <arrivalphase> of RATE users a second (Poisson arrivals). Prints each tool's achieved
# rate (requests completed over SECONDS), the sessions it started, and its own CPU time (user + system of the whole
# process, GNU time, start-up included) per request, and the ratios beamscale/tsung.
#   bench/arrival_rate_vs_tsung.sh [SECONDS] [RATE]     (defaults 20 and 200; SECONDS >= 20)
# KEEP=1 keeps the run directories (printed by mktemp under /tmp).
# On a shared host the CPU figures move with the others' load; the ratios, measured side by side
# in one invocation, are the figures to read.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-20}
rate=${2:-200}
[ "$secs" -ge 20 ] || { echo "SECONDS must be at least 20 (Tsung reports every 10 s)" >&2; exit 2; }
if ! command -v tsung >/dev/null || [ ! -x /usr/bin/time ]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q tsung time >/dev/null
fi
cpu() { awk '/^cpu / { print $2 + $3 }' "$1"; }
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-arrival.XXXXXX)
srv=
cleanup() { [ -z "$srv" ] || kill "$srv" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$out"; }
trap cleanup EXIT

erl +sbwt none -noshell -pa _build/default/lib/beamscale_targets/ebin -eval "
    {ok, S} = beamscale_target_http:start(#{}),
    ok = file:write_file(\"$out/port\", integer_to_list(beamscale_target_http:port(S))),
    receive after $(( (secs * 2 + 120) * 1000 )) -> halt() end." >/dev/null 2>&1 &
srv=$!
i=0
while [ ! -s "$out/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$out/port")

cat > "$out/rate.scenario" <<EOF
{targets, [{web, #{address => "127.0.0.1:$port"}}]}.
{phases, [{run, #{executor => constant_arrival_rate, rate => $rate, duration_s => $secs,
                  pre_allocated => 1000}}]}.
{sessions, [{get, #{steps => [{http, #{path => "/"}}]}}]}.
{drain_s, 2}.
EOF
/usr/bin/time -o "$out/bs.time" -f "cpu %U %S" \
    ./beamscale load "$out/rate.scenario" --name bs --out "$out" --quiet >/dev/null
bs_n=$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$out/bs/load.csv")
dropped=$(grep -o '"dropped_iterations":[0-9]*' "$out/bs/summary.json" | cut -d: -f2)

cat > "$out/tsung.xml" <<EOF
<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="error" version="1.0">
<clients><client host="localhost" use_controller_vm="true" maxusers="60000"/></clients>
<servers><server host="127.0.0.1" port="$port" type="tcp"/></servers>
<load duration="$((secs + 2))" unit="second">
 <arrivalphase phase="1" duration="$secs" unit="second">
  <users arrivalrate="$rate" unit="second"/></arrivalphase>
</load>
<sessions><session name="get" probability="100" type="ts_http">
 <request><http url="/" method="GET" version="1.1"/></request>
</session></sessions>
</tsung>
EOF
/usr/bin/time -o "$out/ts.time" -f "cpu %U %S" \
    tsung -n -f "$out/tsung.xml" -l "$out/tsung" start >/dev/null 2>&1 || true
ts_n=$(grep -h '^stats: request ' "$out"/tsung/*/tsung.log | awk '{ s += $3 } END { print s + 0 }')
# Users Tsung started (its cumulative users_count), to tell its arrivals from its replies.
ts_u=$(grep -h '^stats: users_count ' "$out"/tsung/*/tsung.log | awk '{ u = $4 } END { print u + 0 }')
bs_u=$(grep -o '"sessions_started":[0-9]*' "$out/bs/summary.json" | head -1 | cut -d: -f2)

awk -v s="$secs" -v r="$rate" -v bsn="$bs_n" -v tsn="$ts_n" -v d="${dropped:-0}" \
    -v bsu="${bs_u:-0}" -v tsu="$ts_u" \
    -v bsc="$(cpu "$out/bs.time")" -v tsc="$(cpu "$out/ts.time")" 'BEGIN {
    printf "%d sessions/s offered for %d s, one GET on a new connection each\n", r, s
    printf "sessions started: beamscale %d (dropped %d), tsung %d (of %d offered)\n", bsu, d, tsu,
        r * s
    printf "achieved requests/s: beamscale %.1f, tsung %.1f\n", bsn / s, tsn / s
    printf "client CPU per request (us): beamscale %.1f, tsung %.1f\n",
        (bsn > 0 ? 1e6 * bsc / bsn : 0), (tsn > 0 ? 1e6 * tsc / tsn : 0)
    if (bsn > 0 && tsn > 0)
        printf "beamscale/tsung: rate %.2f, client CPU per request %.2f\n",
            bsn / tsn, (bsc / bsn) / (tsc / tsn) }'
