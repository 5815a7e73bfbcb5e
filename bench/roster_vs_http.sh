#!/bin/sh
# Issue 55's goal for XMPP: a 20 000-item roster (1.96 MB in 1 460-byte TCP segments) read
# within 2x the HTTP kind's time for the same bytes in the same segments. Runs the CT case
# beamscale_load_big_reply_SUITE:xmpp_roster ROUNDS times; each round times 10 roster gets
# over one XMPP stream and 10 GETs of the same body over one HTTP connection, from the same
# kind of server in the test's node. Prints each round's line and the median ratio of means.
#   bench/roster_vs_http.sh [ROUNDS]      (default 5)
set -e
cd "$(dirname "$0")/.."
rounds=${1:-5}
ratios=""
i=0
while [ "$i" -lt "$rounds" ]; do
    i=$((i + 1))
    make ct SUITE=beamscale_load_big_reply_SUITE CASE=xmpp_roster > /dev/null 2>&1 ||
        { echo "round $i: the CT case failed (make ct SUITE=beamscale_load_big_reply_SUITE" \
               "CASE=xmpp_roster)" >&2; exit 1; }
    line=$(grep -h "roster get of" _build/test/logs/last/*big_reply*/run.*/*xmpp_roster*.html |
           grep -v "ct:pal" | head -1)
    echo "round $i: $line (load $(cut -d' ' -f1 /proc/loadavg))"
    ratios="$ratios $(echo "$line" | sed 's/.*ratio of means \([0-9.]*\).*/\1/')"
done
echo "$ratios" | tr ' ' '\n' | grep . | sort -n |
    awk '{ r[NR] = $1 } END { printf "median ratio of means over %d rounds: %s (goal: at most 2)\n",
                                   NR, (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }'
