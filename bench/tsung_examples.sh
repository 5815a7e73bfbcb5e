#!/bin/bash
# Tsung 1.7's 24 shipped examples (/usr/share/doc/tsung/examples), each run by beamscale and by
# Tsung on the same rewritten file against the same servers on 127.0.0.1 (issue 48), one table:
# per example and tool, sessions done, requests, errors, match / nomatch, the protocol counters
# each reports (Tsung's from its tsung.log, beamscale's from summary.json), and the warnings
# beamscale puts on the run's page (run.json). An example a tool refuses prints its reason.
#   bench/tsung_examples.sh [NAME...]      (names without .xml; default all 24)
# The servers are the CT suites' own (bench/tsung_examples/tsung_examples_servers.erl calls the
# suites' helpers in an erl of its own, which also writes each rewritten file), except RabbitMQ,
# started here with channel_max 0 (Tsung asks for it). The rewrites, once per example and the
# same for both tools: the servers, every client this host's controller VM, 2 s phases of about
# 2 users a second, 1 s think times (Tsung reads whole seconds), credentials and CSV paths, the
# monitors dropped. Each tool run is bounded by `timeout 120`; Tsung runs under a controller id
# of its own (-i) with no web GUI (-n). KEEP=1 keeps the directory and names it.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
all="amqp bosh fs-nfs http-digest http-oauth http_distributed http_setdynvars http_simple
     http_tag jabber jabber_muc jabber_node jabber_privacy jabber_register jabber_roster
     jabber_starttls ldap mqtt mysql pgsql raw thinks thinks2 websocket"
names=${*:-$all}
limit=${LIMIT:-120}
rebar3 as test compile >/dev/null
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-tsung-examples.XXXXXX)
srv_pid=
cleanup() {
    if [ -n "$srv_pid" ]; then
        touch "$out/stop"
        # The servers' node stops them by OS pid, then halts; it is killed if it does not.
        for _ in $(seq 1 150); do kill -0 "$srv_pid" 2>/dev/null || break; sleep 0.2; done
        kill "$srv_pid" 2>/dev/null || true
    fi
    rabbit_stop
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi; }
trap cleanup EXIT

amqp_port=0
case " $(echo $names) " in *" amqp "*) rabbit_start "$out"; amqp_port=$port ;; esac
erlc -o "$out" bench/tsung_examples/tsung_examples_servers.erl
# shellcheck disable=SC2086
erl -noshell -pa "$out" -pa _build/test/lib/*/ebin -pa _build/test/lib/*/test \
    -eval "tsung_examples_servers:main([\"$out\", \"$amqp_port\" | string:lexemes(\"$(echo $names)\", \" \")])" \
    > "$out/servers.log" 2>&1 &
srv_pid=$!
until [ -f "$out/ready" ]; do
    kill -0 "$srv_pid" 2>/dev/null || { echo "the servers' node ended:" >&2
                                        tail -20 "$out/servers.log" >&2; exit 1; }
    sleep 0.5
done

for n in $names; do
    [ ! -f "$out/$n.skip" ] || continue
    mkdir -p "$out/fs"
    timeout "$limit" nice -n 10 ./beamscale load "$out/$n.xml" --name "bs-$n" --out "$out" \
        --quiet >"$out/bs-$n.out" 2>"$out/bs-$n.err" || echo "exit $?" >>"$out/bs-$n.err"
    timeout "$limit" nice -n 10 tsung -n -i "bsex$$" -f "$out/$n.xml" -l "$out/ts-$n" start \
        >"$out/ts-$n.out" 2>&1 || echo "exit $?" >>"$out/ts-$n.out"
done
python3 bench/tsung_examples/report.py "$out" $names
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
