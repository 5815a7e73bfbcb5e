#!/bin/sh
# Client cost per request of dynamic HTTP requests (one `%%_name%%' substitution in the URL and
# one regular-expression extraction from the body per request) against the same requests
# without them: the same nginx (started here on 127.0.0.1, a port picked here, stopped by its
# pid), the same USERS users each on its one keep-alive connection sending COUNT requests.
# Both sides run in one emulator (bench/dyn_vs_static.escript), without the command's start-up
# (about 0.6 s of CPU, which both figures included before and which pulled the ratio toward 1)
# and minus a run of one request per user (the run's own set-up). Rounds alternate which side
# goes first; prints the medians of CPU microseconds and of reductions per request and the
# ratios dynamic/static (goal: at most 1.2).
#   bench/dyn_vs_static.sh [ROUNDS] [USERS] [COUNT]   (defaults 5, 20, 2000)
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-5}
users=${2:-20}
count=${3:-2000}
rebar3 compile >/dev/null
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

escript bench/dyn_vs_static.escript "$port" "$users" "$count" "$rounds" "$(getconf CLK_TCK)"
