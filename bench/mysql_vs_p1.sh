#!/bin/sh
# Client CPU per query of beamscale's mysql kind against a loop of the same query through
# Debian's erlang-p1-mysql driver (p1_mysql_conn), on the same number of connections, against
# the throwaway MariaDB of `beamscale db start' (started here in a temporary directory, stopped
# by `beamscale db stop' at the end). Both sides run in one emulator (bench/mysql_vs_p1.escript),
# rounds alternating which goes first; prints every round, the medians of CPU microseconds per
# query (user + system of that emulator) and the ratio beamscale/p1_mysql (goal: at most 1.0).
#   bench/mysql_vs_p1.sh [ROUNDS] [CONNS] [COUNT] [QUERY]
#   (defaults 5, 20, 2000, "SELECT seq, 'beamscale' FROM seq_1_to_10": ten rows of two columns
#   from MariaDB's Sequence engine, no table to make)
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-5}
conns=${2:-20}
count=${3:-2000}
query=${4:-"SELECT seq, 'beamscale' FROM seq_1_to_10"}
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-mysqlbench.XXXXXX)
cleanup() { ./beamscale db stop --dir "$out/db" >/dev/null 2>&1 || true; rm -rf "$out"; }
trap cleanup EXIT
./beamscale db start --dir "$out/db" >/dev/null
cnf() { sed -n "s/^$1=//p" "$out/db/client.cnf"; }
escript bench/mysql_vs_p1.escript "$(cnf host)" "$(cnf port)" "$(cnf user)" "$(cnf password)" \
    "$(cnf database)" "$conns" "$count" "$rounds" "$(getconf CLK_TCK)" "$query"
