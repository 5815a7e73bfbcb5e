#!/bin/sh
# Tsung's <match> on <jabber> counted as Tsung counts it (issue 48): jabber_register.xml as
# shipped, with a user's rewrites only (the server, bs.test, 1 s of arrivals at 20/s, a user
# count), run by beamscale and by Tsung 1.7, each against an ejabberd of its own started fresh
# (bench/xmpp_vs_tsung.sh's helper: USERS users user1..userN made up front). Two cases, so that
# the counts do not hang on how either tool numbers its users: "existing" (username user,
# userid_max USERS: every registration meets a user that exists, ejabberd answers an iq error,
# the file's <match when="match">error</match> matches and aborts the session) and "new"
# (username fresh, userid_max 1000000: every registration succeeds, nomatch). Prints per case
# and tool: sessions started, match and nomatch counts, and the share of sessions matched; and,
# from Tsung's traffic dump, what the packet that acknowledged each of its registrations was.
# Tsung's ack="local" takes the next packet received as the reply: where ejabberd sends its
# stream features apart from the stream header, that packet is the features, and the match
# tests it instead of the registration's answer.
#   bench/xmpp_register_vs_tsung.sh [USERS]      (default 100)
set -eu
cd "$(dirname "$0")/.."
users=${1:-100}
rebar3 as test compile >/dev/null
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-xmpp-register.XXXXXX)
ej=
stop_ej() { [ -z "$ej" ] || kill "$ej" 2>/dev/null || true; ej=; }
cleanup() { stop_ej; if [ -n "${KEEP:-}" ]; then echo "kept $out"; else rm -rf "$out"; fi; }
trap cleanup EXIT
start_ej() { # DIR: a fresh ejabberd, its c2s port in DIR/port
    mkdir -p "$1"
    erl -noshell -pa _build/test/lib/*/ebin -pa _build/test/lib/beamscale_load/test -eval "
        {Port, _, _} = beamscale_load_xmpp_server:start(\"$1\", $users, #{}),
        ok = file:write_file(\"$1/port\", integer_to_list(Port)), halt()." >"$1/ej.log" 2>&1
    ej=$(cat "$1/ejabberd.pid")
}
xml() { # PORT USERNAME USERID_MAX -> the rewritten file on stdout
    sed -e "s/<server host='[^']*' port='5222'/<server host='127.0.0.1' port='$1'/" \
        -e 's/duration="15" unit="minute"/duration="1" unit="second"/' \
        -e 's/maxnumber="200000" interarrival="0.0025"/maxnumber="20" interarrival="0.05"/' \
        -e 's/name="domain" value="[^"]*"/name="domain" value="bs.test"/' \
        -e "s/name=\"username\" value=\"[^\"]*\"/name=\"username\" value=\"$2\"/" \
        -e "s/name=\"passwd\" value=\"[^\"]*\"/name=\"passwd\" value=\"pass\"/" \
        -e "s/name=\"userid_max\" value=\"[0-9]*\"/name=\"userid_max\" value=\"$3\"/" \
        /usr/share/doc/tsung/examples/jabber_register.xml
}
bs_counts() { python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s.get("counts", {})
print(s.get("sessions_started", 0), c.get("match.-", 0), c.get("nomatch.-", 0))
PY
}
# Tsung's log: `stats: NAME COUNT TOTAL ...` lines, the second figure the run's total.
ts_counts() {
    awk '$1 == "stats:" && $2 == "users_count" { u = $4 }
         $1 == "stats:" && $2 == "match" { m = $4 }
         $1 == "stats:" && $2 == "nomatch" { n = $4 }
         END { print u + 0, m + 0, n + 0 }' "$1"/*/tsung.log
}
acks() { python3 - "$1" <<'PY'
import re, sys
after, seen = {}, {"stream features": 0, "iq error": 0, "iq result": 0, "other": 0}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(Send|Recv):[0-9.]+:(<[^>]*>):(.*)", line)
    if not m:
        continue
    way, pid, data = m.groups()
    if way == "Send":
        after[pid] = "jabber:iq:register" in data
    elif after.pop(pid, False):
        kind = ("stream features" if "stream:features" in data else "iq error"
                if "type='error'" in data else "iq result" if "type='result'" in data else "other")
        seen[kind] += 1
print("         tsung's registrations acknowledged by: " +
      ", ".join("%s %d" % kv for kv in seen.items()))
PY
}
row() { # CASE TOOL SESSIONS MATCH NOMATCH
    awk -v c="$1" -v t="$2" -v s="$3" -v m="$4" -v n="$5" 'BEGIN {
        printf "%-8s %-9s sessions %3d, match %3d, nomatch %3d, matched %5.1f %%\n",
            c, t, s, m, n, (m + n > 0 ? 100 * m / (m + n) : 0) }'
}
for case in existing new; do
    if [ $case = existing ]; then name=user; max=$users; else name=fresh; max=1000000; fi
    start_ej "$out/$case-bs"
    xml "$(cat "$out/$case-bs/port")" $name $max > "$out/$case-bs.xml"
    ./beamscale load "$out/$case-bs.xml" --name "$case" --out "$out" --quiet \
        >"$out/$case-bs.out" 2>&1 || true
    stop_ej
    set -- $(bs_counts "$out/$case/summary.json")
    row $case beamscale "$@"
    start_ej "$out/$case-ts"
    xml "$(cat "$out/$case-ts/port")" $name $max |
        sed 's/dumptraffic="false"/dumptraffic="true"/' > "$out/$case-ts.xml"
    tsung -n -i "reg$$$case" -f "$out/$case-ts.xml" -l "$out/$case-tslog" start \
        >"$out/$case-ts.out" 2>&1 || true
    stop_ej
    set -- $(ts_counts "$out/$case-tslog")
    row $case tsung "$@"
    acks "$out"/$case-tslog/*/tsung.dump
done
