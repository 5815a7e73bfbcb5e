#!/bin/sh
# Tsung's `<client host="localhost" cpu="N">' with source addresses, read from a Tsung file as
# Tsung's users write it (issue 38): N load nodes on 127.0.0.1 (Tsung's N emulators), the
# `<ip>' addresses pooled on each. Starts nginx on 127.0.0.1 (bench/lib.sh: reuseport workers,
# long keep-alive), makes USERS users arrive at RATE/s, each holding one keep-alive connection
# through two GETs and a think time longer than the ramp, so that every user is in flight at
# once; prints the closing lines (users in flight at the peak, errors by reason, memory) and
# exits 1 unless every user was in flight at once with no error.
#   bench/tsung_client_cpu.sh [USERS] [RATE] [CPU] [SOURCES]
# Defaults: 62500 users at 2000/s, cpu="4" (15 625 users a node: files are 20 000 a process),
# 3 addresses (127.0.0.2-4: 28 232 ephemeral ports each reach one server port).
set -e
cd "$(dirname "$0")/.."
users=${1:-62500}
rate=${2:-2000}
cpu=${3:-4}
sources=${4:-3}
ramp=$(( (users + rate - 1) / rate ))
phase_s=$(( ramp + 5 ))
think_s=$(( ramp + 20 ))
out=$(mktemp -d /tmp/beamscale-tsung-cpu.XXXXXX)
. bench/lib.sh
cleanup() { nginx_stop; rm -rf "$out"; }
trap cleanup EXIT INT TERM
nginx_start "$out" "$users"
tsung_keepalive_xml localhost "$cpu" 20000 2 "$sources" "$port" "$phase_s" "$users" "$rate" \
    "$think_s" 2 > "$out/cpu.xml"
echo "nginx: $nginx_workers workers on 127.0.0.1:$port; $users users at $rate/s;" \
     "<client host=\"localhost\" cpu=\"$cpu\"> with $sources <ip>s; think ${think_s} s"
start=$(date +%s)
if ! ./beamscale load "$out/cpu.xml" --name run --out "$out" > "$out/live.log" 2>&1; then
    tail -n 15 "$out/live.log" >&2
    exit 1
fi
sed -n '/^Load run directory/,$p' "$out/live.log" | grep -v '^Load run directory\|index.html'
echo "wall time: $(( $(date +%s) - start )) s"
python3 - "$out/run/summary.json" "$users" "$cpu" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
users, cpu = int(sys.argv[2]), int(sys.argv[3])
peak, nodes = s["memory"]["users_in_flight"], len(s.get("load_nodes") or [])
print("users in flight at the peak: %d of %d; load nodes: %d (cpu=%d); errors: %d %s"
      % (peak, users, nodes, cpu, s["errors"], s["errors_by_reason"] or ""))
sys.exit(0 if peak == users and nodes == cpu and s["errors"] == 0 else 1)
PY
nginx_complaints
