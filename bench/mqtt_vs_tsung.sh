#!/bin/sh
# Client CPU per MQTT publish, beamscale against Tsung, side by side in one invocation: the same
# Tsung file (ts_mqtt: USERS publishers, each connecting and publishing PUBLISHES QoS 1
# messages, each awaiting its PUBACK) against the same mosquitto, started here on a free port
# of 127.0.0.1 with its configuration and log in a temporary directory, stopped by pid. The
# broker counts the PUBLISH packets each tool sent (its debug log). Goal (issue 34): beamscale's
# CPU per publish at most half of Tsung's.
#   bench/mqtt_vs_tsung.sh [USERS] [PUBLISHES]     (defaults 20 and 10000)
# Tsung runs under a controller id of its own (-i): another Tsung on the machine keeps its
# default node name.
# Each tool runs twice: the connections alone, then with the publishes; CPU seconds (user +
# system, GNU time) per publish is the difference over the publishes the broker received, so
# neither tool's start counts (bench/lib.sh, cpu_vs_tsung). Prints them, the ratio and the load
# average. BEFORE=ESCRIPT measures an earlier beamscale build beside them.
# The floor: the same publishes by the simplest hand-written client (bench/mqtt_floor: plain
# gen_tcp, {active, true}, no figures kept) in a plain emulator with the beamscale command's
# scheduler flags (FLOOR_FLAGS to change them; FLOOR_ACTIVE=false, once or N its socket mode),
# measured the same way: what a BEAM client cannot go below.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
users=${1:-20}
pubs=${2:-10000}
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-mqtt.XXXXXX)
mq=
cleanup() { [ -z "$mq" ] || kill "$mq" 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT

port=$(free_port)
# The log goes to stdout, opened here: mosquitto started as root writes as its own user.
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$port" \
    > "$out/mosquitto.conf"
printf 'log_dest stdout\nlog_type debug\n' >> "$out/mosquitto.conf"
stdbuf -oL /usr/sbin/mosquitto -c "$out/mosquitto.conf" > "$out/mosquitto.log" 2>&1 &
mq=$!
i=0
until ss -ltnH "sport = :$port" | grep -q .; do
    i=$((i + 1)); [ "$i" -lt 100 ] || { echo "mosquitto did not start" >&2; exit 1; }; sleep 0.1
done
received() { sleep 1; grep -c 'Received PUBLISH' "$out/mosquitto.log" || true; }

# tsung_xml PUBLISHES: the Tsung file (0 publishes: the start and connections alone).
tsung_xml() {
    cat <<EOF
<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="error" version="1.0">
<clients><client host="localhost" use_controller_vm="true" maxusers="$((users * 2))"/></clients>
<servers><server host="127.0.0.1" port="$port" type="tcp"/></servers>
<load duration="300" unit="second"><arrivalphase phase="1" duration="5" unit="second">
  <users maxnumber="$users" arrivalrate="$users" unit="second"/></arrivalphase></load>
<sessions><session name="pub" probability="100" type="ts_mqtt">
 <request><mqtt type="connect" clean_start="true" keepalive="30"/></request>
EOF
    [ "$1" -eq 0 ] || cat <<EOF
 <for from="1" to="$1" var="i">
  <request><mqtt type="publish" topic="bench/t" qos="1">test_message</mqtt></request>
 </for>
EOF
    cat <<EOF
 <request><mqtt type="disconnect"/></request>
</session></sessions>
</tsung>
EOF
}

erlc -o "$out" bench/mqtt_floor/mqtt_floor.erl
# floor_cmd RUN: the floor's command for the run (base: the connections alone).
floor_cmd() {
    n=$pubs; [ "$1" = full ] || n=0
    echo "erl -noshell -pa $out ${FLOOR_FLAGS-+sbwt none +sbwtdcpu none +sbwtdio none}" \
         "-eval mqtt_floor:main($port,$users,$n,${FLOOR_ACTIVE:-true}),halt()."
}

# The PUBLISH packets the broker received since the last call.
last=0
counted() { n=$(received); echo $((n - last)); last=$n; }

printf "%d publishers x %d QoS 1 publishes, mosquitto\n" "$users" "$pubs"
cpu_vs_tsung "$out" "$pubs"
