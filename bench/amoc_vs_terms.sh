#!/bin/sh
# Client CPU per request of an amoc scenario against a terms scenario making the same load
# (issue 51): starts nginx on 127.0.0.1 (bench/lib.sh), then USERS users arriving at RATE/s,
# each making REQS keep-alive GETs one after the other, in beamscale's own node: first as a terms
# scenario (`{loop, REQS, [{http, #{}}]}`), then as an amoc module whose start/1 calls
# beamscale_amoc:request/3 REQS times; each also with 3 x REQS, ROUNDS rounds interleaved. The
# CPU of a `beamscale load' (user + system, its whole process) includes its start-up, which
# differs (an amoc run compiles its module: about 0.7 s measured); the CPU per request is the
# slope between the two sizes, (CPU(3 REQS) - CPU(REQS)) / (their requests' difference), which
# leaves the start-up out. Prints each round's, the medians and the ratio amoc/terms (goal: at
# most 1.2), and the start-up each run's slope leaves (CPU less requests x slope).
#   bench/amoc_vs_terms.sh [USERS] [REQS] [RATE] [ROUNDS]
# Defaults: 1000 users, 20 requests each, 200 users/s, 3 rounds.
set -e
cd "$(dirname "$0")/.."
users=${1:-1000}
reqs=${2:-20}
rate=${3:-200}
rounds=${4:-3}
out=$(mktemp -d /tmp/beamscale-amoc.XXXXXX)
. bench/lib.sh
cleanup() { nginx_stop; rm -rf "$out"; }
trap cleanup EXIT INT TERM
nginx_start "$out" "$users"
phase_s=$(( users / rate + 2 ))
for n in "$reqs" $((3 * reqs)); do
    cat > "$out/terms$n.scenario" <<EOF
{targets, [{web, #{address => "127.0.0.1:$port"}}]}.
{phases, [{p, #{duration_s => $phase_s, rate => $rate, max_users => $users}}]}.
{sessions, [{s, #{steps => [{loop, $n, [{http, #{}}]}]}}]}.
{sample, []}.
EOF
done
cat > "$out/amoc_bench_http.erl" <<'EOF'
-module(amoc_bench_http).
-behaviour(amoc_scenario).
-required_variable(#{name => port, description => "nginx's port"}).
-required_variable(#{name => requests, description => "requests per user"}).
-export([init/0, start/1]).

init() -> ok.

start(_Id) ->
    Target = #{address => "127.0.0.1:" ++ integer_to_list(amoc_config:get(port))},
    [ok = beamscale_amoc:request(http, Target, #{}) || _ <- lists:seq(1, amoc_config:get(requests))],
    ok.
EOF
echo "nginx: $nginx_workers workers on 127.0.0.1:$port; $users users at $rate/s, $reqs GETs each"
# One load's CPU (s, its process and children) and requests, as "CPU REQUESTS".
cpu_of() {
    name=$1; shift
    python3 - "$out/$name.cpu" ./beamscale load "$@" --name "$name" --out "$out" --quiet <<'PY'
import resource, subprocess, sys
rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%f\n" % (r.ru_utime + r.ru_stime))
sys.exit(rc)
PY
    python3 -c "import json,sys; print(open('$out/$name.cpu').read().strip(),
                json.load(open('$out/$name/summary.json'))['requests'])"
}
i=1
while [ "$i" -le "$rounds" ]; do
    for n in "$reqs" $((3 * reqs)); do
        printf "%s " "$i" >> "$out/terms.txt"
        cpu_of "terms$i-$n" "$out/terms$n.scenario" >> "$out/terms.txt"
        printf "%s " "$i" >> "$out/amoc.txt"
        cpu_of "amoc$i-$n" --amoc "$out/amoc_bench_http.erl" --users "$users" --rate "$rate" \
            --set "port=$port" --set "requests=$n" >> "$out/amoc.txt"
    done
    i=$((i + 1))
done
echo "runs (round, CPU s, requests): terms"; cat "$out/terms.txt"; echo "amoc"; cat "$out/amoc.txt"
python3 - "$out/terms.txt" "$out/amoc.txt" <<'PY'
import statistics, sys
med = {}
for name, f in (("terms", sys.argv[1]), ("amoc", sys.argv[2])):
    rounds = {}
    for line in open(f):
        r, c, n = line.split()
        rounds.setdefault(r, []).append((float(c), int(n)))
    slopes, fixed = [], []
    for (c1, n1), (c3, n3) in rounds.values():
        slope = (c3 - c1) / (n3 - n1)
        slopes.append(1e6 * slope)
        fixed.append(c1 - n1 * slope)
    med[name] = statistics.median(slopes)
    print("%-5s CPU per request (us): %s; median %.1f; start-up %s s"
          % (name, ", ".join("%.1f" % p for p in slopes), med[name],
             ", ".join("%.2f" % x for x in fixed)))
print("amoc / terms: %.2f (goal <= 1.2)" % (med["amoc"] / med["terms"]))
PY
nginx_complaints
