#!/bin/sh
# Tsung files run by beamscale and by Tsung 1.7, side by side in one invocation against the same
# servers on 127.0.0.1 (issue 48): the shipped http_setdynvars.xml (a captured <title> and CSV
# values with spaces put into a URL) against nginx, and a two-user file with idle_timeout 30000
# against a server of this script's own that answers each request 6 s late. Prints, per case and
# tool, sessions done, requests, errors and replies by status as each tool counts them, and
# nginx's count of URIs holding a raw space (0 when values were encoded).
#   bench/tsung_compat.sh
# Rewrites of http_setdynvars.xml, as a user would make them: the server, the CSV path, 1 s
# phases and think times Tsung accepts (1 s, or 1 to 2 s). Tsung runs under a controller id of
# its own (-i) so another Tsung on the machine keeps its name; its monitor of localhost fails
# without sshd and changes nothing sent. KEEP=1 keeps the directory and names it.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-tsung-compat.XXXXXX)
slow_pid=
cleanup() {
    [ -z "$slow_pid" ] || kill "$slow_pid" 2>/dev/null || true
    [ ! -f "$out/nginx.pid" ] || kill "$(cat "$out/nginx.pid")" 2>/dev/null || true
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi; }
trap cleanup EXIT

port=$(free_port)
cat > "$out/nginx.conf" <<EOF
error_log $out/error.log;
pid $out/nginx.pid;
events { worker_connections 64; }
http {
  log_format seen '\$status|\$request_uri';
  access_log $out/access.log seen;
  client_body_temp_path $out; proxy_temp_path $out; fastcgi_temp_path $out;
  uwsgi_temp_path $out; scgi_temp_path $out;
  server {
    listen 127.0.0.1:$port;
    location / { return 200 'hello'; }
    location /test.html { return 200 '<html><title>Hello World Page</title></html>'; }
  }
}
EOF
/usr/sbin/nginx -p "$out" -c "$out/nginx.conf"
printf 'user one;pass word\nuser two;pass%%20word\n' > "$out/users.csv"
sed -e "s/port=\"80\"/port=\"$port\"/" -e 's/<server host="localhost"/<server host="127.0.0.1"/' \
    -e "s|./src/test/test_file_server.csv|$out/users.csv|" \
    -e 's/duration="1" unit="minute"/duration="1" unit="second"/g' \
    -e 's/min="2" max="4"/min="1" max="2"/' -e 's/value="[45]" random="true"/value="1"/' \
    /usr/share/doc/tsung/examples/http_setdynvars.xml > "$out/setdynvars.xml"

# The late server: reads each request's head, answers 6 s later.
cat > "$out/slow.py" <<'EOF'
import socket, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
def serve(c):
    buf = b""
    while True:
        d = c.recv(4096)
        if not d: break
        buf += d
        while b"\r\n\r\n" in buf:
            _, buf = buf.split(b"\r\n\r\n", 1)
            time.sleep(6)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    c.close()
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
python3 "$out/slow.py" > "$out/slow.port" &
slow_pid=$!
i=0
until [ -s "$out/slow.port" ]; do
    i=$((i + 1)); [ "$i" -lt 100 ] || { echo "the late server did not start" >&2; exit 1; }
    sleep 0.1
done
slow=$(head -1 "$out/slow.port")
cat > "$out/slow.xml" <<EOF
<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="notice">
<clients><client host="localhost" use_controller_vm="true"/></clients>
<servers><server host="127.0.0.1" port="$slow" type="tcp"/></servers>
<load><arrivalphase phase="1" duration="1" unit="second">
<users maxnumber="2" interarrival="0.1" unit="second"/></arrivalphase></load>
<options><option name="idle_timeout" value="30000"/></options>
<sessions><session name="s" probability="100" type="ts_http">
<request><http url="/" method="GET"/></request></session></sessions>
</tsung>
EOF

# Tsung's totals from its tsung.log: the last line of each counter (cumulative in its last field).
tsung_row() {
    log=$(ls "$1"/*/tsung.log)
    last() { awk -v k="$1" '$1 == "stats:" && $2 == k { v = $NF } END { print v + 0 }' "$log"; }
    errs=$(awk '$1 == "stats:" && $2 ~ /^error_/ { e[$2] = $NF } END { s = 0
               for (k in e) s += e[k]; print s }' "$log")
    # A sample's lines give each interval's count in their third field.
    reqs=$(awk '$1 == "stats:" && $2 == "request" { n += $3 } END { print n + 0 }' "$log")
    echo "tsung      sessions $(last finish_users_count) requests $reqs errors $errs" \
         "200s $(last 200)"; }
beamscale_row() {
    dir=$(./beamscale load "$1" 2>"$out/beamscale.err" | sed -n 's/^Load run directory: //p')
    [ -n "$dir" ] || { cat "$out/beamscale.err" >&2; return 1; }
    python3 - "$dir/summary.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("beamscale  sessions %d requests %d errors %d 200s %d" % (
    d["sessions_done"], d["requests"], d["errors"], d.get("statuses", {}).get("200", 0)))
EOF
    rm -rf "$dir"; }
raw_spaces() { grep -c ' ' "$out/access.log" || true; }

for case in setdynvars slow; do
    echo "== $case.xml"
    : > "$out/access.log"; kill -USR1 "$(cat "$out/nginx.pid")"; sleep 0.3
    tsung -i bs48 -f "$out/$case.xml" -l "$out/tsung-$case" start >/dev/null 2>&1 || true
    tsung_row "$out/tsung-$case"
    [ "$case" = slow ] || echo "           nginx: URIs with a raw space: $(raw_spaces)"
    : > "$out/access.log"; kill -USR1 "$(cat "$out/nginx.pid")"; sleep 0.3
    beamscale_row "$out/$case.xml"
    [ "$case" = slow ] || echo "           nginx: URIs with a raw space: $(raw_spaces)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
