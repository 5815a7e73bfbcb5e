#!/bin/sh
# `beamscale saturate` against the project's HTTP, Mnesia and MariaDB targets, each on a node
# started under two scheduler configurations, `+S 1:1` and `+S N:N` (N the host's cores, the
# default), side by side in one run (the two configurations of a target one after the other).
# Prints each capacity with its bracket and the ratio N:N / 1:1 against what the cores predict
# for that target: HTTP (the node's own work, one process per connection, over all schedulers):
# N:N above 1:1, the ratio above 1.1 and at most N (below N as the load generator shares the
# host's cores); Mnesia writes (each transaction commits through Mnesia's one transaction manager
# and one log writer) and MariaDB (the statements run in mariadbd, outside the node): the ratio
# near 1 (0.8 to 1.25) whatever the node's schedulers.
#   bench/saturate_smp.sh [BUDGET] [LEVEL] [TARGETS]
# BUDGET: each search's budget (default 120s); LEVEL: a level's length (default 6s); TARGETS:
# some of "http mnesia mariadb" (default all three). The objective: p99<500ms, errors<1%,
# achieved>95% (loose on latency: the capacity is where throughput gives out).
# The command is a copy of the built escript, so editing the sources meanwhile changes nothing.
# SATURATE_SMP_KEEP=DIR copies each search's levels.csv there as TARGET-sS.csv (the run
# directories are removed at the end). SATURATE_SMP_FLAGS adds emulator flags to both
# configurations (for example "+sbwt none" to turn the schedulers' busy wait off).
set -eu
cd "$(dirname "$0")/.."
budget=${1:-120s}
level=${2:-6s}
targets=${3:-http mnesia mariadb}
cores=$(nproc)
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-satsmp.XXXXXX)
db_up=no
cleanup() {
    [ "$db_up" = yes ] && "$out/beamscale" db stop --dir "$out/db" >/dev/null 2>&1
    rm -rf "$out"
}
trap cleanup EXIT
cp _build/default/bin/beamscale "$out/beamscale"
slo='{slo, "p99<500ms,errors<1%,achieved>95%"}.'

# scenario TARGET FLAGS: the scenario file of a target on a node started with FLAGS.
scenario() {
    f="$out/$1-$(echo "$2" | tr -c 'a-z0-9\n' '_').scenario"
    case $1 in
    http)
        # The server listens on a port chosen here; the node's init starts it.
        port=$(awk 'BEGIN { srand(); print 20000 + int(rand() * 20000) }')
        cat > "$f" <<EOT
{targets, [{node, #{start => #{erl => "erl", flags => "$2",
                               init => {beamscale_target_http, start, [#{port => $port}]}}}},
           {sut, #{address => "127.0.0.1:$port"}}]}.
{phases, [{p, #{duration_s => 1, rate => 1}}]}.
{sessions, [{s, #{steps => [{loop, 20, [{http, #{target => sut, path => "/"}}]}]}}]}.
EOT
        ;;
    mnesia)
        cat > "$f" <<EOT
{targets, [{sut, #{start => #{erl => "erl", flags => "$2",
                              init => {beamscale_target_mnesia, start,
                                       [#{dir => "$out/mnesia-$$-$(date +%s%N)"}]}}}}]}.
{phases, [{p, #{duration_s => 1, rate => 1}}]}.
{sessions, [{s, #{steps => [{rpc, #{target => sut, timeout_ms => 10000,
                                    call => {beamscale_target_mnesia, write,
                                             [20, transaction]}}}]}}]}.
EOT
        ;;
    mariadb)
        cat > "$f" <<EOT
{targets, [{sut, #{start => #{erl => "erl", flags => "$2",
                              init => {beamscale_target_mysql, start,
                                       [#{db_file => "$out/db/connection.config",
                                          reset => true}]}}}}]}.
{phases, [{p, #{duration_s => 1, rate => 1}}]}.
{sessions, [{s, #{steps => [{rpc, #{target => sut, timeout_ms => 10000,
                                    call => {beamscale_target_mysql, write, [10]}}}]}}]}.
EOT
        ;;
    esac
    echo "$slo" >> "$f"
    echo "$f"
}

# start rate per target (sessions/s): well below the capacity, so the climb brackets it.
start_rate() {
    case $1 in http) echo 50 ;; mnesia) echo 40 ;; mariadb) echo 20 ;; esac
}

get() { sed -n "s/.*\"$1\": *\([^,}]*\).*/\1/p" "$2/summary.json"; }

# waits DIR: the seconds the search's levels waited for the target node to be idle (calls
# abandoned by an overloaded level still running there), and how many started it still busy.
waits() {
    # The last two columns (errors_by_reason before them may hold quoted commas).
    awk -F, 'NR > 1 { w += $(NF - 1); if ($NF == "true") t++ }
             END { printf "waited %.1f s for idle, %d levels started busy", w, t }' \
        "$1/levels.csv"
}

case " $targets " in *" mariadb "*)
    "$out/beamscale" db start --dir "$out/db" >/dev/null
    db_up=yes ;;
esac
echo "host: $cores cores; load average $(cut -d' ' -f1-3 /proc/loadavg); budget $budget," \
     "level $level; extra flags: ${SATURATE_SMP_FLAGS:-none}"
for t in $targets; do
    for s in 1 "$cores"; do
        name="$t-s$s"
        t0=$(date +%s)
        "$out/beamscale" saturate "$(scenario "$t" "+S $s:$s ${SATURATE_SMP_FLAGS:-}")" --out "$out" --name "$name" \
            --budget "$budget" --level "$level" --start "$(start_rate "$t")" --tolerance 10 \
            --quiet >/dev/null
        t1=$(date +%s)
        d="$out/$name"
        printf '%s +S %s:%s: capacity %s/s [%s, %s) limited by %s, %s levels, stopped %s, %s s' \
            "$t" "$s" "$s" "$(get capacity_per_s "$d")" "$(get capacity_low_per_s "$d")" \
            "$(get capacity_high_per_s "$d")" "$(get limited_by "$d")" "$(get levels "$d")" \
            "$(get stopped "$d")" $((t1 - t0))
        printf ' (%s)\n' "$(waits "$d")"
        [ -z "${SATURATE_SMP_KEEP:-}" ] || cp "$d/levels.csv" "$SATURATE_SMP_KEEP/$name.csv"
    done
    c1=$(get capacity_per_s "$out/$t-s1")
    cn=$(get capacity_per_s "$out/$t-s$cores")
    awk -v t="$t" -v a="$c1" -v b="$cn" -v n="$cores" \
        -v ha="$(get capacity_high_per_s "$out/$t-s1")" \
        -v hb="$(get capacity_high_per_s "$out/$t-s$cores")" 'BEGIN {
        if (a + 0 <= 0 || b == "null" || a == "null") {
            printf "%s: no ratio (a capacity is missing)\n", t; exit }
        if (ha == "null" || hb == "null") {
            printf "%s: no ratio (a search found no rate not held)\n", t; exit }
        r = b / a
        if (t == "http") { lo = 1.1; hi = n } else { lo = 0.8; hi = 1.25 }
        printf "%s: ratio +S %d:%d / +S 1:1 = %.2f (predicted %.2f to %.2f: %s)\n", t, n, n, r,
               lo, hi, (r >= lo && r <= hi) ? "as predicted" : "NOT as predicted" }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
