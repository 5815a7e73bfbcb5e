#!/bin/sh
# HTTP/2 keep-alive GETs of a 1000-byte file from one nginx (h2c, prior knowledge, on
# 127.0.0.1), 8 connections x 10 concurrent streams, by beamscale's http2 kind (8 users,
# `streams => 10') and by h2load (-c 8 -m 10), one after the other in one invocation; then, for
# context, HTTP/1.1 keep-alive GETs of the same file from the same nginx by beamscale's http kind
# (8 users) and by wrk (-c 8). Prints each tool's client CPU (user + system of the whole
# process, GNU time; beamscale's includes its start) per request (an HTTP/2 stream is one
# request) and the ratios beamscale/h2load (goal <= 2) and beamscale/wrk.
#   bench/load_h2_vs_h2load.sh [SECONDS]   (default 20: beamscale's start is in its CPU)
# On a shared host the absolute figures move with the other load; the ratios, measured side by
# side in one run, are the figures to read.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-20}
for t in nginx h2load wrk; do
    command -v "$t" >/dev/null || { echo "$t missing: scripts/install-deps.sh installs it" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "GNU time missing (apt-get install time)" >&2; exit 2; }
cpu() { awk '/^cpu / { print $2 + $3 }' "$1"; }
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-h2.XXXXXX)
ngx=
cleanup() { [ -z "$ngx" ] || kill "$ngx" 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT

p2=$(freeport)
p1=$(freeport)
head -c 1000 /dev/zero | tr '\0' x > "$out/small.txt"
cat > "$out/nginx.conf" <<EOF
error_log $out/error.log;
pid $out/nginx.pid;
worker_processes 1;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $out; proxy_temp_path $out; fastcgi_temp_path $out;
  uwsgi_temp_path $out; scgi_temp_path $out;
  keepalive_requests 100000000;
  server { listen 127.0.0.1:$p2 http2; root $out; }
  server { listen 127.0.0.1:$p1; root $out; }
}
EOF
nginx -p "$out" -c "$out/nginx.conf" -g "daemon off;" &
ngx=$!
i=0
while ! (echo > "/dev/tcp/127.0.0.1/$p2") 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done

scenario() { # KIND EXTRA PORT
    users=$(for i in 0 1 2 3 4 5 6 7; do printf '{0.0%d, s}, ' "$i"; done)
    cat <<EOS
{targets, [{w, #{address => "127.0.0.1:$3"}}]}.
{phases, [{p, #{duration_s => 1, users_at => [${users%, }]}}]}.
{sessions, [{s, #{steps => [{loop, 1000000000, [{$1, #{path => "/small.txt"$2}}]}]}}]}.
{drain_s, 0}.
{time_limit_s, $secs}.
EOS
}
run_bs() { # NAME KIND EXTRA PORT STREAMS
    scenario "$2" "$3" "$4" > "$out/$1.scenario"
    /usr/bin/time -o "$out/$1.time" -f "cpu %U %S" \
        ./beamscale load "$out/$1.scenario" --name "$1" --out "$out" --quiet >/dev/null || true
    n=$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$out/$1/load.csv")
    e=$(awk -F, 'NR > 1 { s += $7 } END { print s }' "$out/$1/load.csv")
    echo "$(( n * $5 )) $e"
}
set -- $(run_bs h2 http2 ", streams => 10" "$p2" 10)
bs2_n=$1; bs2_e=$2
/usr/bin/time -o "$out/h2load.time" -f "cpu %U %S" \
    h2load -c 8 -m 10 -D "$secs" "http://127.0.0.1:$p2/small.txt" > "$out/h2load.txt"
h2_n=$(awk '/^requests:/ { print $8 }' "$out/h2load.txt")
set -- $(run_bs h1 http "" "$p1" 1)
bs1_n=$1; bs1_e=$2
/usr/bin/time -o "$out/wrk.time" -f "cpu %U %S" \
    wrk -t 2 -c 8 -d "${secs}s" "http://127.0.0.1:$p1/small.txt" > "$out/wrk.txt"
wrk_n=$(awk '/ requests in / { print $1 }' "$out/wrk.txt")

awk -v s="$secs" -v b2="$bs2_n" -v b2e="$bs2_e" -v h2="$h2_n" -v b1="$bs1_n" -v b1e="$bs1_e" \
    -v w="$wrk_n" -v b2c="$(cpu "$out/h2.time")" -v h2c="$(cpu "$out/h2load.time")" \
    -v b1c="$(cpu "$out/h1.time")" -v wc="$(cpu "$out/wrk.time")" 'BEGIN {
    printf "nginx, 1000-byte file, %d s each; HTTP/2: 8 connections x 10 streams (h2c)\n", s
    printf "HTTP/2 streams done: beamscale %d (errors %d), h2load %d\n", b2, b2e, h2
    printf "HTTP/1.1 requests done: beamscale %d (errors %d), wrk %d\n", b1, b1e, w
    x2 = 1e6 * b2c / b2; y2 = 1e6 * h2c / h2; x1 = 1e6 * b1c / b1; y1 = 1e6 * wc / w
    printf "client CPU per request (us): HTTP/2 beamscale %.1f, h2load %.1f\n", x2, y2
    printf "client CPU per request (us): HTTP/1.1 beamscale %.1f, wrk %.1f\n", x1, y1
    printf "client CPU per request HTTP/2 beamscale/h2load: %.2f (goal <= 2)\n", x2 / y2
    printf "client CPU per request HTTP/1.1 beamscale/wrk:  %.2f (context)\n", x1 / y1 }'
