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
# neither tool's start counts. Prints them, the ratio and the load average.
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

# run_both NAME: both tools on NAME.xml, their CPU seconds in NAME.bs and NAME.ts, the
# publishes the broker received from each in NAME.bsn and NAME.tsn.
run_both() {
    n0=$(received)
    /usr/bin/time -o "$out/$1.bs" -f "%U %S" ./beamscale load "$out/$1.xml" --name "bs$1" \
        --out "$out" --quiet >"$out/$1.bs.out" 2>&1 || true
    n1=$(received)
    /usr/bin/time -o "$out/$1.ts" -f "%U %S" tsung -i "bs$$" -n -f "$out/$1.xml" \
        -l "$out/tsung$1" start >/dev/null 2>&1 || true
    n2=$(received)
    echo $((n1 - n0)) > "$out/$1.bsn"
    echo $((n2 - n1)) > "$out/$1.tsn"; }

tsung_xml 0 > "$out/base.xml"
tsung_xml "$pubs" > "$out/full.xml"
run_both base
run_both full
cpu() { awk '{ print $1 + $2 }' "$out/$1"; }

awk -v bsb="$(cpu base.bs)" -v tsb="$(cpu base.ts)" -v bsc="$(cpu full.bs)" \
    -v tsc="$(cpu full.ts)" -v bsn="$(cat "$out/full.bsn")" -v tsn="$(cat "$out/full.tsn")" \
    -v u="$users" -v p="$pubs" -v la="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
    printf "%d publishers x %d QoS 1 publishes, mosquitto\n", u, p
    printf "published (counted by the broker): beamscale %d, tsung %d\n", bsn, tsn
    printf "client CPU s, start and connections alone: beamscale %.2f, tsung %.2f\n", bsb, tsb
    printf "client CPU s, with the publishes: beamscale %.2f, tsung %.2f\n", bsc, tsc
    bcpu = (bsn > 0 ? 1e6 * (bsc - bsb) / bsn : 0); tcpu = (tsn > 0 ? 1e6 * (tsc - tsb) / tsn : 0)
    printf "client CPU per publish (us, start excluded): beamscale %.1f, tsung %.1f\n", bcpu, tcpu
    printf "beamscale/tsung: %.2f (goal <= 0.5)\n", (tcpu > 0 ? bcpu / tcpu : 0)
    printf "load average: %s\n", la }'
