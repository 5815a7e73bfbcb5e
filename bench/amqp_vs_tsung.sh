#!/bin/sh
# Client CPU per AMQP publish, beamscale against Tsung, side by side in one invocation: the same
# Tsung file (ts_amqp: USERS publishers, each opening a connection and a channel in confirm mode
# and publishing PUBLISHES persistent 100-byte messages to a durable queue, waitForConfirms
# after each 100) against the same RabbitMQ, started here as a node of its own on 127.0.0.1 in a
# temporary directory and stopped by pid. The broker counts the messages each tool published
# (rabbitmqctl list_queues, the queue purged between the tools). Goal (issue 34): beamscale's
# CPU per publish at most half of Tsung's.
#   bench/amqp_vs_tsung.sh [USERS] [PUBLISHES]     (defaults 20 and 1000)
# Tsung runs under a controller id of its own (-i): another Tsung on the machine keeps its
# default node name.
# Each tool runs twice: the connections alone, then with the publishes; CPU seconds (user +
# system, GNU time) per publish is the difference over the messages the broker received, so
# neither tool's start counts (bench/lib.sh, cpu_vs_tsung). Prints them, the ratio and the load
# average. BEFORE=ESCRIPT measures an earlier beamscale build beside them.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
users=${1:-20}
pubs=${2:-1000}
# CONFIRMS=0: no confirm.select nor waitForConfirms, on both sides (Tsung reads each confirm
# but times none; beamscale times each): the publish path alone.
confirms=${CONFIRMS:-1}
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-amqp.XXXXXX)
rabbit_sh=
# KEEP=1 keeps the runs' directory (both tools' logs) and names it.
cleanup() { rabbit_stop; if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -rf "$out"; fi; }
trap cleanup EXIT

rabbit_start "$out"

# The queue, durable, declared once (by beamscale, outside the timed runs).
cat > "$out/declare.scenario" <<EOF
{targets, [{r, #{address => "127.0.0.1:$port"}}]}.
{phases, [{p, #{duration_s => 1, rate => 2, max_users => 1}}]}.
{sessions, [{s, #{steps => [{amqp, #{type => 'connection.open'}},
  {amqp, #{type => 'channel.open'}},
  {amqp, #{type => 'queue.declare', queue => <<"bench_q">>, durable => true}},
  {amqp, #{type => 'connection.close'}}]}}]}.
EOF
./beamscale load "$out/declare.scenario" --name declare --out "$out" --quiet >/dev/null

# tsung_xml ROUNDS: the Tsung file, ROUNDS rounds of 100 publishes (0: the start alone).
tsung_xml() {
    cat <<EOF
<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="error" version="1.0">
<clients><client host="localhost" use_controller_vm="true" maxusers="$((users * 2))"/></clients>
<servers><server host="127.0.0.1" port="$port" type="tcp"/></servers>
<load duration="300" unit="second"><arrivalphase phase="1" duration="5" unit="second">
  <users maxnumber="$users" arrivalrate="$users" unit="second"/></arrivalphase></load>
<options><option type="ts_amqp" name="heartbeat" value="30"/></options>
<sessions><session name="pub" probability="100" type="ts_amqp">
 <request><amqp type="connection.open" vhost="/"/></request>
 <request><amqp type="channel.open"/></request>
 $([ "$confirms" = 0 ] || echo '<request><amqp type="confirm.select" channel="1"/></request>')
EOF
    [ "$1" -eq 0 ] || cat <<EOF
 <for from="1" to="$1" var="round">
  <for from="1" to="100" var="i">
   <request><amqp type="basic.publish" channel="1" exchange="" routing_key="bench_q"
     persistent="true" payload_size="100"/></request>
  </for>
  $([ "$confirms" = 0 ] || echo '<request><amqp type="waitForConfirms" timeout="1"/></request>')
 </for>
EOF
    cat <<EOF
 <request><amqp type="channel.close" channel="1"/></request>
 <request><amqp type="connection.close"/></request>
</session></sessions>
</tsung>
EOF
}

# What the broker received since the last call (the queue purged after it).
# Read until two reads a second apart agree: without confirms a publish may still be on its
# way into the queue when its client is done.
counted() {
    a=-1; b=$(rabbit_queued bench_q)
    while [ "$a" != "$b" ]; do sleep 1; a=$b; b=$(rabbit_queued bench_q); done
    echo "$b"; rabbit_ctl purge_queue bench_q >/dev/null; }

printf "%d publishers x %d persistent 100-byte publishes, confirms %s, RabbitMQ\n" \
    "$users" "$pubs" "$([ "$confirms" = 0 ] && echo off || echo on)"
cpu_vs_tsung "$out" $((pubs / 100))
