#!/bin/sh
# Makes the screenshots of issue 39's page parts in docs/screens/: load-live-names.png (the live
# page of a load against nginx: replies by status over time, bytes per second, users in
# flight, each request name's p99 and requests), load-names-hosts.png (its final page: the
# table by request name and the host rows of nginx's host and processes) and load-fine.png (the
# final page's charts of a `--resolution 100ms' run; `page-screens.sh fine': that one alone).
# About a minute;
# needs ./beamscale (make build), nginx and chromium (scripts/install-deps.sh).
set -e
out=$(mktemp -d /tmp/beamscale-page-screens.XXXXXX)
chmod 755 "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$out/nginx.conf" <<CONF
worker_processes 2;
pid $out/nginx.pid;
error_log $out/error.log;
events {}
http {
 access_log off;
 client_body_temp_path $out; proxy_temp_path $out; fastcgi_temp_path $out;
 uwsgi_temp_path $out; scgi_temp_path $out;
 server {
  listen 127.0.0.1:$port;
  location /item/ { return 200 "an item\n"; }
  location /missing { return 404; }
  location / { return 200 "home page, a little longer than an item's\n"; }
 }
}
CONF
nginx -p "$out" -c "$out/nginx.conf"
trap 'kill "$(cat "$out/nginx.pid")" 2>/dev/null || true' EXIT
cat > "$out/names.scenario" <<SCENARIO
{targets, [{web, #{address => "127.0.0.1:$port"}}]}.
{phases, [{warm, #{duration_s => 5, rate => 20}}, {peak, #{duration_s => 10, rate => 60}}]}.
{sessions, [{browse, #{steps => [{http, #{path => "/", label => "home"}}, {think, 50},
                                 {setvars, id, {random_number, 1, 1000}},
                                 {http, #{path => "/item/%%_id%%"}}, {think, 50},
                                 {http, #{path => "/missing", status => [404]}}]}}]}.
{sample, [web]}.
{monitors, [#{host => "127.0.0.1", processes => ["nginx"]}]}.
{drain_s, 2}.
SCENARIO
shot() { # URL FILE HEIGHT
    # As root Chromium needs --no-sandbox; its complaints (no D-Bus) are not ours.
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$out/profile" --window-size=1300,"$3" --virtual-time-budget=2000 \
        --screenshot="docs/screens/$2" "$1" 2>/dev/null
}
if [ "${1:-all}" != fine ]; then
./beamscale load "$out/names.scenario" --name names --out "$out" --quiet --web 0 \
    > "$out/output" 2>&1 &
load=$!
tries=0
until grep -q 'http://127\.0\.0\.1:[0-9]*/' "$out/output" 2>/dev/null; do
    tries=$((tries + 1))
    [ "$tries" -lt 120 ] || { echo "no live page in $out/output" >&2; exit 1; }
    sleep 0.5
done
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$out/output" | head -1)
sleep 10
shot "$url" load-live-names.png 3600
wait "$load" || true
shot "file://$out/names/index.html" load-names-hosts.png 5200
fi
echo "docs/screens: load-live-names.png load-names-hosts.png (run kept in $out)"
# load-fine.png: the final page's charts under a second (`--resolution 100ms').
./beamscale load "$out/names.scenario" --name fine --out "$out" --quiet --resolution 100ms \
    > "$out/fine-output" 2>&1 || true
python3 scripts/screen-cut.py "$out/fine/index.html" "$out/fine-cut.html" "<title>requests every" "Latency distribution"
shot "file://$out/fine-cut.html" load-fine.png 420
