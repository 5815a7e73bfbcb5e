#!/bin/sh
# Client CPU per request of dynamic HTTP requests (one `%%_name%%' substitution in the URL and
# one regular-expression extraction from the body per request) against the same requests
# without them: the same nginx (started here on 127.0.0.1, a port picked here, stopped by its
# pid), the same USERS users each on its one keep-alive connection sending COUNT requests.
# Rounds alternate (static, dynamic, ...) so that the machine's load hits both alike; prints
# the medians of CPU microseconds per request (beamscale's user + system, GNU time) and the
# ratio dynamic/static (goal: at most 1.2).
#   bench/dyn_vs_static.sh [ROUNDS] [USERS] [COUNT]   (defaults 3, 20, 2000)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-3}
users=${2:-20}
count=${3:-2000}
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-dyn.XXXXXX)
ngx=
cleanup() { [ -z "$ngx" ] || kill "$ngx" 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$out/nginx.conf" <<EOF
daemon off; worker_processes 1; pid $out/nginx.pid; error_log $out/error.log;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $out; proxy_temp_path $out;
 fastcgi_temp_path $out; uwsgi_temp_path $out; scgi_temp_path $out;
 keepalive_requests 1000000;
 server { listen 127.0.0.1:$port; default_type text/html;
  location / { return 200 "<html><head><title>beamscale</title></head></html>"; } } }
EOF
/usr/sbin/nginx -p "$out" -c "$out/nginx.conf" -e "$out/error.log" &
ngx=$!
i=0
while ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && [ $i -lt 100 ]; do
    sleep 0.05; i=$((i + 1)); done

scenario() { # NAME STEP
    cat > "$out/$1.scenario" <<EOF
{targets, [{web, #{address => "127.0.0.1:$port"}}]}.
{phases, [{run, #{duration_s => 1, rate => 1000, max_users => $users}}]}.
{sessions, [{s, #{steps => [{setvars, [u], user_number}, {loop, $count, [$2]}]}}]}.
{drain_s, 120}.
EOF
}
scenario static '{http, #{path => "/p?u=1"}}'
scenario dynamic '{http, #{path => "/p?u=%%_u%%", extract => [{re, t, "<title>(.*)</title>"}]}}'

run() { # NAME ROUND: appends CPU microseconds per request
    /usr/bin/time -o "$out/$1.time" -f "cpu %U %S" \
        ./beamscale load "$out/$1.scenario" --name "$1$2" --out "$out" --quiet >/dev/null
    n=$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$out/$1$2/load.csv")
    e=$(awk -F, 'NR > 1 { s += $7 } END { print s }' "$out/$1$2/load.csv")
    [ "$n" -eq $((users * count)) ] && [ "$e" -eq 0 ] ||
        { echo "$1: $n requests, $e errors (expected $((users * count)), 0)" >&2; exit 1; }
    awk -v n="$n" '/^cpu / { printf "%.2f\n", ($2 + $3) * 1e6 / n }' "$out/$1.time" \
        >> "$out/$1.txt"
}
r=1
while [ $r -le "$rounds" ]; do run static $r; run dynamic $r; r=$((r + 1)); done
s=$(median "$out/static.txt")
d=$(median "$out/dynamic.txt")
echo "requests per run: $((users * count)) ($users users x $count)"
echo "static:  $s us CPU/request (median of $rounds: $(tr '\n' ' ' < "$out/static.txt"))"
echo "dynamic: $d us CPU/request (median of $rounds: $(tr '\n' ' ' < "$out/dynamic.txt"))"
awk -v s="$s" -v d="$d" 'BEGIN { printf "ratio dynamic/static: %.3f (goal <= 1.2)\n", d / s }'
