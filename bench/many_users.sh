#!/bin/sh
# Many concurrent keep-alive users on one box, beamscale and Tsung side by side (issue 19):
# starts nginx on 127.0.0.1 (bench/lib.sh: several workers, reuseport, long keep-alive, a free
# port), then drives USERS users that arrive at RATE/s (until USERS have started) and each hold
# one keep-alive connection through three GETs and two long think times, from SOURCES source
# addresses (127.0.0.2...) and LOAD_NODES emulators: first beamscale (load_nodes), then Tsung
# (Debian's, `cpu` client VMs, its own SOURCES addresses) on the same scenario against the same
# nginx. Prints, for both, the users in flight at the peak, the RSS of the emulators holding
# users then and before the load, memory per user (that RSS over users in flight; and above the
# RSS before the load), the achieved arrival rate and the ratio beamscale/tsung (goal <= 0.5).
# nginx, Tsung and its VMs are stopped by their pids.
#   bench/many_users.sh [USERS] [RATE] [LOAD_NODES] [SOURCES]
# Defaults: 20000 users at 2000/s; an emulator per 18 000 users (files: 20 000 per process) and
# a source address per 25 000 users (one address reaches a server port once per ephemeral port,
# 28 232 here), at least 2 of each. 100 000 users: bench/many_users.sh 100000 2000 (6 emulators
# of 16 667 users, 4 addresses of 25 000 connections each side, 11 nginx workers).
set -e
cd "$(dirname "$0")/.."
users=${1:-20000}
rate=${2:-2000}
nodes=${3:-$(( (users + 17999) / 18000 ))}
sources=${4:-$(( (users + 24999) / 25000 ))}
[ "$nodes" -ge 2 ] || nodes=2
[ "$sources" -ge 2 ] || sources=2
ramp=$(( (users + rate - 1) / rate ))
# The phase lasts twice the ramp, so that a launcher that falls behind the rate (Tsung's, here)
# still starts every user (max_users ends it), and each user thinks longer than that, so that
# every user is in flight at once at its end.
phase_s=$(( 2 * ramp + 1 ))
think_ms=$(( (2 * ramp + 10) * 1000 ))
out=$(mktemp -d /tmp/beamscale-many.XXXXXX)
. bench/lib.sh
tsung_pid=
cleanup() {
    if [ -n "$tsung_pid" ]; then kill "$tsung_pid" 2>/dev/null || true; wait "$tsung_pid" || true; fi
    nginx_stop
    rm -rf "$out"
}
trap cleanup EXIT INT TERM
nginx_start "$out" "$users"

# Source addresses: beamscale's from 127.0.0.2, Tsung's the next SOURCES ones, as the ports of
# one run's closed connections stay taken (TIME_WAIT, 60 s) for the addresses that closed them.
ips=$(seq 2 $((sources + 1)) | sed 's/.*/"127.0.0.&"/' | paste -sd, -)
cat > "$out/many.scenario" <<EOF
{targets, [{web, #{address => "127.0.0.1:$port"}}]}.
{phases, [{ramp, #{duration_s => $phase_s, rate => $rate, max_users => $users}}]}.
{sessions, [{s, #{steps => [{http, #{}}, {think, $think_ms}, {http, #{}},
                            {think, $think_ms}, {http, #{}}]}}]}.
{load_nodes, $nodes}.
{source_ips, [$ips]}.
{sample, []}.
{drain_s, $(( 2 * think_ms / 1000 + 30 ))}.
EOF
echo "nginx: $nginx_workers workers on 127.0.0.1:$port; $users users at $rate/s, $nodes load nodes" \
     "(Tsung: client VMs), $sources source addresses each, think ${think_ms} ms"
# The live lines go to a file (the last ones are shown if the run fails); the closing lines
# (memory, errors by reason) are printed.
if ! ./beamscale load "$out/many.scenario" --name run --out "$out" > "$out/live.log" 2>&1; then
    tail -n 15 "$out/live.log" >&2
    echo "errors by reason (errors.csv):" >&2
    awk -F, 'NR > 1 { n[$2] += $3 } END { for (r in n) print n[r], r }' \
        "$out/run/errors.csv" | sort -rn | head -n 5 >&2
    exit 1
fi
echo "beamscale:"
sed -n '/^Load run directory/,$p' "$out/live.log" | grep -v '^Load run directory\|index.html'

# Tsung on the same scenario: as many client VMs (`cpu`) as beamscale's load nodes, on this
# host by its short name (slave:start runs a VM on the controller's own host without ssh, and
# `erl -detached`: bench/emulators_rss.py, a subreaper, finds them by pid, samples their RSS
# every second and stops what is left). maxusers per VM: the file limit (20 000) less a margin;
# each VM gets USERS/VMS users. Statistics every second (dumpstats_interval); a warm time of 5 s
# so that the VMs are up and idle before the load (their RSS before it); a controller id of
# its own (-i), no web GUI (-n); distribution on loopback only.
tsung_keepalive_xml "$(hostname -s)" "$nodes" 19500 $((sources + 2)) "$sources" "$port" \
    "$phase_s" "$users" "$rate" $((think_ms / 1000)) 3 > "$out/tsung.xml"
ERL_FLAGS="-tsung_controller dumpstats_interval 1000 -kernel inet_dist_use_interface {127,0,0,1}" \
    bench/emulators_rss.py "$out/tsung.rss" tsung -n -w 5 -i "many$$" -f "$out/tsung.xml" \
    -l "$out/tsung" start > "$out/tsung.out" 2>&1 &
tsung_pid=$!
# Tsung ends when its last user does; it is stopped (with its VMs) if it has not by then.
deadline=$(( $(date +%s) + 5 + phase_s + 2 * think_ms / 1000 + 120 ))
while kill -0 "$tsung_pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 1; done
kill "$tsung_pid" 2>/dev/null || true
wait "$tsung_pid" || { echo "tsung failed:" >&2; tail -n 15 "$out/tsung.out" >&2; exit 1; }
tsung_pid=
echo
bench/many_users_report.py "$out/run/summary.json" "$out"/tsung/*/tsung.log "$out/tsung.rss" \
    "$users" "$rate"
nginx_complaints
