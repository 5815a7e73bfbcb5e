#!/bin/sh
# Many concurrent keep-alive users on one box (issue 19): starts nginx on 127.0.0.1 (a config
# written here: several workers, high worker_connections, long keep-alive, on a free port),
# drives USERS users that arrive at RATE/s and each hold one keep-alive connection through
# three requests and two long think times, from several source addresses (127.0.0.2...) and
# load nodes, and prints the users in flight at the peak, memory per user (load node RSS over
# users in flight) and the achieved arrival rate. nginx is stopped by its pid.
#   bench/many_users.sh [USERS] [RATE] [LOAD_NODES] [SOURCES]
# Defaults: 20000 users at 2000/s; a load node per 18 000 users and a source address per
# 25 000 users (one address reaches a server port once per ephemeral port, 28 232 here), at
# least 2 of each.
set -e
cd "$(dirname "$0")/.."
users=${1:-20000}
rate=${2:-2000}
nodes=${3:-$(( (users + 17999) / 18000 ))}
sources=${4:-$(( (users + 24999) / 25000 ))}
[ "$nodes" -ge 2 ] || nodes=2
[ "$sources" -ge 2 ] || sources=2
# nginx workers hold the server side: at most 20 000 files each here, and connections do not
# spread evenly over them: a worker per 10 000 users, plus one, each with its own listening
# socket (reuseport: the kernel spreads the connections).
workers=$(( (users + 9999) / 10000 + 1 ))
ramp=$(( (users + rate - 1) / rate ))
# Each user thinks longer than the ramp, so that every user is in flight at once at its end.
think_ms=$(( (ramp + 10) * 1000 ))
out=$(mktemp -d /tmp/beamscale-many.XXXXXX)
nginx_pid=
cleanup() {
    if [ -n "$nginx_pid" ]; then
        kill -QUIT "$nginx_pid" 2>/dev/null || true
        wait "$nginx_pid" 2>/dev/null || true
    fi
    rm -rf "$out"
}
trap cleanup EXIT INT TERM

# A free port on 127.0.0.1 (none listening on it).
port=
for p in $(shuf -i 20000-32000 -n 50); do
    if ! ss -ltnH "sport = :$p" | grep -q .; then port=$p; break; fi
done
[ -n "$port" ] || { echo "no free port found" >&2; exit 1; }

mkdir -p "$out/nginx/logs"
cat > "$out/nginx/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes $workers;
worker_rlimit_nofile 20000;
error_log $out/nginx/logs/error.log warn;
pid $out/nginx/nginx.pid;
events { worker_connections 19500; }
http {
    access_log off;
    keepalive_timeout 600s;
    keepalive_requests 1000000;
    client_body_temp_path $out/nginx/body;
    proxy_temp_path $out/nginx/proxy;
    fastcgi_temp_path $out/nginx/fastcgi;
    uwsgi_temp_path $out/nginx/uwsgi;
    scgi_temp_path $out/nginx/scgi;
    server {
        listen 127.0.0.1:$port backlog=4096 reuseport;
        location / { return 200 "ok"; }
    }
}
EOF
/usr/sbin/nginx -p "$out/nginx" -c "$out/nginx/nginx.conf" &
nginx_pid=$!
i=0
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
    i=$((i + 1))
    [ "$i" -lt 50 ] || { echo "nginx did not start:" >&2; cat "$out/nginx/logs/error.log" >&2
                         exit 1; }
    sleep 0.1
done

ips=$(seq 2 $((sources + 1)) | sed 's/.*/"127.0.0.&"/' | paste -sd, -)
cat > "$out/many.scenario" <<EOF
{targets, [{web, #{address => "127.0.0.1:$port"}}]}.
{phases, [{ramp, #{duration_s => $((ramp + 1)), rate => $rate, max_users => $users}}]}.
{sessions, [{s, #{steps => [{http, #{}}, {think, $think_ms}, {http, #{}},
                            {think, $think_ms}, {http, #{}}]}}]}.
{load_nodes, $nodes}.
{source_ips, [$ips]}.
{sample, []}.
{drain_s, $(( 2 * think_ms / 1000 + 30 ))}.
EOF
echo "nginx: $workers workers on 127.0.0.1:$port; $users users at $rate/s, $nodes load nodes," \
     "$sources source addresses, think ${think_ms} ms"
# The live lines go to a file (the last ones are shown if the run fails); the closing lines
# (memory, errors by reason) are printed.
if ! ./beamscale load "$out/many.scenario" --name run --out "$out" > "$out/live.log" 2>&1; then
    tail -n 15 "$out/live.log" >&2
    echo "errors by reason (errors.csv):" >&2
    awk -F, 'NR > 1 { n[$2] += $3 } END { for (r in n) print n[r], r }' \
        "$out/run/errors.csv" | sort -rn | head -n 5 >&2
    exit 1
fi
sed -n '/^Load run directory/,$p' "$out/live.log" | grep -v '^Load run directory\|index.html'
python3 - "$out/run/summary.json" "$ramp" "$rate" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
ramp, rate = float(sys.argv[2]), float(sys.argv[3])
m = s["memory"]
ramp_rows = [r for r in s["per_second"] if r["phase"] == "ramp"]
started = sum(r["sessions_started"] for r in ramp_rows)
print("users in flight at the peak: %d" % m["users_in_flight"])
print("memory per user: %.1f KB (load node RSS %.1f MB in %d processes), %.1f KB above the "
      "memory before the load" % (m["bytes_per_user"] / 1024, m["rss_bytes"] / 1e6,
                                   m["processes"], m["marginal_bytes_per_user"] / 1024))
print("errors: %d of %d requests %s" % (s["errors"], s["requests"], s["errors_by_reason"]))
full = [r for r in ramp_rows if r["t_s"] <= int(ramp) - 1]
if full:
    got = sum(r["sessions_started"] for r in full) / len(full)
    print("arrival rate over the first %d s (before max_users): %.1f/s offered %.0f/s "
          "(%.2f %%)" % (len(full), got, rate, 100 * (got - rate) / rate))
EOF
# What nginx complained of (worker_connections, files), most frequent first, without times.
sed 's/^[^]]*] [0-9#]*: [*0-9]* *//; s/, client: .*//' "$out/nginx/logs/error.log" \
    | grep -v 'signal\|start worker\|exited with\|gracefully\|using the' | sort | uniq -c \
    | sort -rn | head -n 5 | sed 's/^/nginx: /'
