#!/bin/sh
# HTTP keep-alive GETs against the project's own HTTP server (beamscale_target_http, in its own
# erl on 127.0.0.1), USERS users/connections looping with no think time, by beamscale, by Tsung
# and by wrk, one after the other against the same server in one invocation. Prints the three
# steady rates (requests/s) and the ratios beamscale/tsung (goal >= 2) and beamscale/wrk
# (goal >= 0.75).
# The server's emulator flags are SERVER_FLAGS (default "+sbwt none": schedulers that spin while
# waiting take a core from the client on a 2-core host; "" for the default).
#   bench/load_http_vs_tsung_wrk.sh [SECONDS] [USERS] [SERVER_FLAGS]
#   (SECONDS at least 20; defaults 20, 100 and "+sbwt none")
# Steady rates: beamscale's from load.csv without its first 2 seconds (ramp); Tsung's from its
# largest full 10 s statistics interval (tsung.log); wrk's own Requests/sec.
# Each tool's own CPU time (user + system of the whole process, GNU time; beamscale's includes
# its start) per request it completed is printed too, with the ratios beamscale/wrk
# (goal <= 1.3, issue 19) and beamscale/tsung: on a shared 2-core host, where client and server
# compete for the cores, it is the steadier figure.
# BEFORE=ESCRIPT runs an earlier beamscale build (say main's _build/default/bin/beamscale) the
# same way right after this one, and prints its rate and client CPU per request beside.
# Installs Debian's tsung, wrk and time if missing (they are not needed by make test).
set -eu
cd "$(dirname "$0")/.."
secs=${1:-20}
users=${2:-100}
sflags=${3-+sbwt none}
[ "$secs" -ge 20 ] || { echo "SECONDS must be at least 20 (Tsung reports every 10 s)" >&2; exit 2; }
if ! command -v tsung >/dev/null || ! command -v wrk >/dev/null || [ ! -x /usr/bin/time ]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q tsung wrk time >/dev/null
fi
cpu() { # FILE: CPU seconds of the timed command
    awk '/^cpu / { print $2 + $3 }' "$1"; }
srvcpu() { # the server's CPU seconds so far (utime + stime, /proc; erl execs the emulator)
    awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$srv/stat"; }
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-http.XXXXXX)
srv=
cleanup() { [ -z "$srv" ] || kill "$srv" 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT

# The server: a plain erl (2 schedulers), its port written to a file.
# shellcheck disable=SC2086
erl $sflags -noshell -pa _build/default/lib/beamscale_targets/ebin -eval "
    {ok, S} = beamscale_target_http:start(#{}),
    ok = file:write_file(\"$out/port\", integer_to_list(beamscale_target_http:port(S))),
    receive after $(( (secs * 3 + 120) * 1000 )) -> halt() end." >/dev/null 2>&1 &
srv=$!
i=0
while [ ! -s "$out/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$out/port")

# beamscale: USERS users arrive within a fraction of a second and loop GETs until the limit.
cat > "$out/http.scenario" <<EOF
{targets, [{web, #{address => "127.0.0.1:$port"}}]}.
{phases, [{run, #{duration_s => $secs, rate => 1000, max_users => $users}}]}.
{sessions, [{get, #{steps => [{loop, 1000000000, [{http, #{path => "/"}}]}]}}]}.
{drain_s, 0}.
{time_limit_s, $secs}.
EOF
s0=$(srvcpu)
/usr/bin/time -o "$out/bs.time" -f "cpu %U %S" \
    ./beamscale load "$out/http.scenario" --name bs --out "$out" --quiet >/dev/null
bs=$(awk -F, 'NR > 3 && $2 == "run" { n++; s += $6 } END { printf "%.0f", s / n }' \
    "$out/bs/load.csv")
bs_n=$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$out/bs/load.csv")
s1=$(srvcpu)
if [ -n "${BEFORE:-}" ]; then
    /usr/bin/time -o "$out/bs0.time" -f "cpu %U %S" \
        "$BEFORE" load "$out/http.scenario" --name bs0 --out "$out" --quiet >/dev/null
    bs0=$(awk -F, 'NR > 3 && $2 == "run" { n++; s += $6 } END { printf "%.0f", s / n }' \
        "$out/bs0/load.csv")
    bs0_n=$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$out/bs0/load.csv")
    printf "before (%s): requests/s %d, client CPU per request (us) %.1f\n" "$BEFORE" "$bs0" \
        "$(awk -v c="$(cpu "$out/bs0.time")" -v n="$bs0_n" 'BEGIN { print 1e6 * c / n }')"
fi
st=$(srvcpu)

# Tsung: the same users, started within the first seconds, for SECONDS + 2.
cat > "$out/tsung.xml" <<EOF
<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="error" version="1.0">
<clients><client host="localhost" use_controller_vm="true" maxusers="$((users * 2))"/></clients>
<servers><server host="127.0.0.1" port="$port" type="tcp"/></servers>
<load duration="$((secs + 2))" unit="second">
 <arrivalphase phase="1" duration="$secs" unit="second">
  <users maxnumber="$users" arrivalrate="1000" unit="second"/></arrivalphase>
</load>
<sessions><session name="get" probability="100" type="ts_http">
 <for from="1" to="1000000000" var="i"><request><http url="/" method="GET" version="1.1"/>
 </request></for>
</session></sessions>
</tsung>
EOF
/usr/bin/time -o "$out/ts.time" -f "cpu %U %S" \
    tsung -n -f "$out/tsung.xml" -l "$out/tsung" start >/dev/null 2>&1 || true
ts=$(grep -h '^stats: request ' "$out"/tsung/*/tsung.log | head -n -1 \
    | awk '$3 > m { m = $3 } END { printf "%.0f", m / 10 }')
ts_n=$(grep -h '^stats: request ' "$out"/tsung/*/tsung.log | awk '{ s += $3 } END { print s }')
s2=$(srvcpu)

# wrk: USERS connections on 2 threads.
/usr/bin/time -o "$out/wrk.time" -f "cpu %U %S" \
    wrk -t 2 -c "$users" -d "${secs}s" "http://127.0.0.1:$port/" > "$out/wrk.txt"
wrk=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$out/wrk.txt")
wrk_n=$(awk '/ requests in / { print $1 }' "$out/wrk.txt")
s3=$(srvcpu)

awk -v bs="$bs" -v ts="$ts" -v wrk="$wrk" -v u="$users" -v s="$secs" \
    -v bsc="$(cpu "$out/bs.time")" -v tsc="$(cpu "$out/ts.time")" -v wrkc="$(cpu "$out/wrk.time")" \
    -v bsn="$bs_n" -v tsn="$ts_n" -v wrkn="$wrk_n" -v sf="$sflags" \
    -v s0="$s0" -v s1="$s1" -v st="$st" -v s2="$s2" -v s3="$s3" 'BEGIN {
    printf "%d users/connections, %d s each, keep-alive GET against beamscale_target_http\n", u, s
    printf "server flags: %s\n", (sf == "" ? "(default)" : sf)
    printf "requests/s: beamscale %d, tsung %d, wrk %d\n", bs, ts, wrk
    printf "client CPU per request (us): beamscale %.1f, tsung %.1f, wrk %.1f\n",
        1e6 * bsc / bsn, 1e6 * tsc / tsn, 1e6 * wrkc / wrkn
    printf "server CPU per request (us) while serving beamscale %.1f, tsung %.1f, wrk %.1f\n",
        1e6 * (s1 - s0) / bsn, 1e6 * (s2 - st) / tsn, 1e6 * (s3 - s2) / wrkn
    printf "beamscale/tsung: %.2f (goal >= 2)\n", (ts > 0 ? bs / ts : 0)
    printf "beamscale/wrk:   %.2f (goal >= 0.75)\n", (wrk > 0 ? bs / wrk : 0)
    bcpu = bsc / bsn; tcpu = tsc / tsn; wcpu = wrkc / wrkn
    printf "client CPU per request beamscale/wrk:   %.2f (goal <= 1.3)\n", bcpu / wcpu
    printf "client CPU per request beamscale/tsung: %.2f\n", bcpu / tcpu }'
