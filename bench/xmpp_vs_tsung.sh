#!/bin/sh
# XMPP chat against an ejabberd of its own (the test suites' beamscale_load_xmpp_server: its own
# config, spool and ports on 127.0.0.1, USERS users made up front), by beamscale and by Tsung one
# after the other, on the same Tsung file: jabber.xml's chat session (connect, legacy auth,
# presence, roster, chats to online users, close) with USERS users, SECONDS of arrivals and
# think times of THINK seconds (jabber.xml's are 2 and 30). Prints, side by side: chats sent
# and delivered per second, each tool's client CPU (user + system, GNU time, start included)
# per delivered chat, and beamscale's delivery-time percentiles (the body's stamp read by the
# receiver; Tsung reports no delivery time for chats). Issue 33's goal: beamscale's CPU per
# delivered chat at most half of Tsung's at 1000 users.
#   bench/xmpp_vs_tsung.sh [USERS] [SECONDS] [THINK]      (defaults 1000, 30, 2)
# Tsung counts no delivered chats: its CPU is per chat sent (10 per finished session), which
# flatters it when chats are lost.
# Most of a short run's CPU is not the chats: start-up, the per-second figures, the closing
# report and each session's connect, auth, presence and roster. So each tool also runs the same
# file with the chats taken out, and the difference over the chats is each tool's CPU per
# chat itself (start-up and sessions subtracted the same way for both). NOCHAT=0 skips it.
# BEFORE=ESCRIPT also runs another build of beamscale (say the main branch's
# _build/default/bin/beamscale) on both files, for before/after figures in one invocation.
# The floor: the same session by the simplest hand-written client (bench/xmpp_floor: a process
# a user, plain gen_tcp, stanzas built once, nothing parsed), in a plain erl twice: with the
# flags of beamscale's node (no busy-waiting schedulers) and with the emulator's defaults (as
# Tsung runs, whose schedulers busy-wait). Its CPU per delivered chat, and per chat itself, is
# the least a BEAM client spends on this work: a goal below floor/Tsung is out of reach.
# FLOOR=0 skips it.
# CLOCK=instructions counts instructions instead of CPU time (issue 54: a clock the host's load
# does not move): every tool's emulators run under Valgrind (cachegrind, no cache simulation,
# from start to end), none busy-waiting (+sbwt none...: a spinning scheduler's instructions grow
# with wall time), and the figures are instructions of the beam.smp processes: "M instr" where
# CPU seconds are printed, "instr" where microseconds are. Keep USERS small (Valgrind runs the
# clients some 50 times slower): `CLOCK=instructions bench/xmpp_vs_tsung.sh 20 10 2`.
# COUNTED_ERL=ERL runs every client on that erl instead of the host's (beamscale through
# ESCRIPT_EMULATOR, Tsung through a copy of its start script naming it, the floor directly),
# the server staying on the host's: e.g. the interpreter `beamscale otp install 25-emu`
# builds, which Valgrind runs correctly where it breaks OTP's JIT on maps.
# SEED (default 1) seeds both tools' arrivals (beamscale's --seed, Tsung's seed option): a run
# and its run without chats start the same users (unseeded, 15 and 19 of 20 were seen), whose
# sessions would otherwise be counted as chats. Under CLOCK=instructions the last lines are
# bench/cg_work.py's: per chat, each run less its run without chats function by function, idle
# schedulers' functions left out (the figure docs/load-measurements.md reports).
# MARGINAL=1 (with CLOCK=instructions) also runs each tool on the session with MULT chats
# (default 2) after each think, and prints per extra chat that run less the run with one,
# function by function: the cost of one more chat, without the run's fixed costs that come with
# its first chats.
set -eu
cd "$(dirname "$0")/.."
seed=${SEED:-1}
users=${1:-1000}
secs=${2:-30}
think=${3:-2}
if ! command -v tsung >/dev/null || [ ! -x /usr/bin/time ]; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q tsung time >/dev/null
fi
cpu() { awk '/^cpu / { print $2 + $3 }' "$1"; }
clock=${CLOCK:-cpu}
nowait="+sbwt none +sbwtdcpu none +sbwtdio none"
# Flags the counted emulators add. Under Valgrind 3.19 beamscale's load node goes wrong (a
# HAMT updated key by key: bench/valgrind/vg_hashmap.erl, docs/load-measurements.md), Tsung's
# and the floor's do not; no flag of OTP 25 avoids it (it has no +JMsingle).
single=${COUNTED_FLAGS:-}
counted_erl=${COUNTED_ERL:-erl}
# NAME COMMAND...: run it, its cost in $out/NAME.time as "cpu A B" (A + B: CPU seconds, or
# millions of instructions under CLOCK=instructions).
measured() {
    name=$1; shift; rc=0
    if [ "$clock" = instructions ]; then
        ERL_AFLAGS="$nowait $single" valgrind -q --tool=cachegrind --cache-sim=no --smc-check=all \
            --trace-children=yes --fair-sched=yes \
            --trace-children-skip='*/erl_child_setup,*/inet_gethost,*/epmd,*/ssh' \
            --cachegrind-out-file="$out/$name.cg.%p" --log-file="$out/$name.vg.%p" "$@" || rc=$?
        # Only the emulators' counts: the shells and escript launchers around them are no client
        # (their command lines name $out, /tmp/beamscale-xmpp.*: match the program alone).
        for f in "$out/$name".cg.*; do
            grep -q '^cmd: [^ ]*/beam\.smp ' "$f" && awk '/^summary:/ { print $2 }' "$f"
        done | awk '{ s += $1 } END { printf "cpu %.3f 0\n", s / 1e6 }' > "$out/$name.time"
    else
        /usr/bin/time -o "$out/$name.time" -f "cpu %U %S" "$@" || rc=$?
    fi
    return $rc
}
rebar3 as test compile >/dev/null
./beamscale list >/dev/null
out=$(mktemp -d /tmp/beamscale-xmpp.XXXXXX)
ej=
cleanup() { [ -z "$ej" ] || kill "$ej" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$out"; }
trap cleanup EXIT
# ejabberd, started by the suites' helper in a throwaway erl that exits once it is ready.
erl -noshell -pa _build/test/lib/*/ebin -pa _build/test/lib/beamscale_load/test -eval "
    {Port, _, _} = beamscale_load_xmpp_server:start(\"$out\", $users, #{}),
    ok = file:write_file(\"$out/port\", integer_to_list(Port)), halt()." >"$out/ej.log" 2>&1
ej=$(cat "$out/ejabberd.pid")
port=$(cat "$out/port")
# The session both tools run: jabber.xml's first session, its chat destinations online.
xml() { # ARRIVAL-SECONDS -> Tsung file on stdout
    cat <<EOF
<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="error" version="1.0">
<clients><client host="localhost" use_controller_vm="true" maxusers="$((users * 2))"/></clients>
<servers><server host="127.0.0.1" port="$port" type="tcp"/></servers>
<load><arrivalphase phase="1" duration="$1" unit="second">
  <users maxnumber="$users" interarrival="$(awk -v s="$1" -v u="$users" 'BEGIN { printf "%.4f", s / u }')" unit="second"/>
</arrivalphase></load>
<options>
  <option type="ts_jabber" name="global_number" value="$users"/>
  <option type="ts_jabber" name="userid_max" value="$users"/>
  <option type="ts_jabber" name="domain" value="bs.test"/>
  <option type="ts_jabber" name="username" value="user"/>
  <option type="ts_jabber" name="passwd" value="pass"/>
  <option name="seed" value="$seed"/>
</options>
<sessions><session probability="100" name="chat" type="ts_jabber" bidi="true">
  <request><jabber type="connect" ack="local"/></request>
  <request><jabber type="auth_get" ack="local"/></request>
  <request><jabber type="auth_set_plain" ack="local"/></request>
  <request><jabber type="presence:initial" ack="no_ack"/></request>
  <request><jabber type="iq:roster:get" ack="local"/></request>
  <for from="1" to="10" var="i">
    <thinktime value="$think"/>
    <request><jabber type="chat" ack="no_ack" size="16" destination="online"/></request>
  </for>
  <thinktime value="$think"/>
  <request><jabber type="close" ack="no_ack"/></request>
</session></sessions>
</tsung>
EOF
}
xml "$secs" > "$out/chat.xml"
grep -v '<request><jabber type="chat"' "$out/chat.xml" > "$out/nochat.xml"
bs_run() { # FILE NAME [COMMAND]
    measured "$2" env ESCRIPT_EMULATOR="$counted_erl" ${3:-_build/default/bin/beamscale} \
        load "$out/$1.xml" --seed "$seed" \
        --name "$2" --out "$out" --quiet >/dev/null 2>"$out/$2.err" || true
}
# A controller id of its own: another Tsung on the host would hold the default one.
tsung=$(command -v tsung)
if [ -n "${COUNTED_ERL:-}" ]; then
    # Not $out/tsung: that is Tsung's log directory.
    sed "s|^ERL=.*|ERL=$COUNTED_ERL|" "$tsung" > "$out/tsung-start" && chmod +x "$out/tsung-start"
    tsung=$out/tsung-start
fi
ts_run() { # FILE NAME
    measured "$2" "$tsung" -n -i "xmpp$$$2" -f "$out/$1.xml" -l "$out/$2" start \
        >/dev/null 2>&1 || true
}
# The floor: FLAGS empty for the emulator's defaults; ERL_*FLAGS of the caller left out.
erlc -o "$out" bench/xmpp_floor/xmpp_floor.erl
fl_run() { # NAME SEND(true|false) FLAGS
    measured "$1" env ERL_FLAGS= ERL_AFLAGS= ERL_ZFLAGS= \
        "$counted_erl" $3 -noshell -pa "$out" -eval "xmpp_floor:main($port, $users, $secs, \
        $((think * 1000)), 10, $2), halt()." >"$out/$1.counts" 2>"$out/$1.err" \
        || echo "0 0 $users" >"$out/$1.counts"
}
floor=${FLOOR:-1}
bs_run chat bs
read_counts() { python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s.get("counts", {})
print(c.get("xmpp_chat_sent", 0), c.get("xmpp_chat_delivered", 0))
d = s.get("transactions", {}).get("xmpp_delivery", {})
print(" ".join(str(d.get(k, "?")) for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")))
PY
}
read_counts "$out/bs/summary.json" > "$out/bs.counts" || echo "0 0
? ? ? ?" > "$out/bs.counts"
ts_run chat tsung
# The emulator's defaults busy-wait: instructions that grow with wall time, not with the work.
[ "$clock" = instructions ] && floord=0 || floord=1
[ "$floor" = 1 ] && { fl_run floor true "$nowait $single";
                      [ "$floord" = 0 ] || fl_run floord true ""; }
nochat=${NOCHAT:-1}
if [ "$nochat" = 1 ]; then
    bs_run nochat bs0; ts_run nochat tsung0
    [ "$floor" = 1 ] && { fl_run floor0 false "$nowait $single";
                          [ "$floord" = 0 ] || fl_run floord0 false ""; }
fi
if [ -n "${BEFORE:-}" ]; then
    bs_run chat before "$BEFORE"
    read_counts "$out/before/summary.json" > "$out/before.counts" || echo "0 0" > "$out/before.counts"
    [ "$nochat" = 1 ] && bs_run nochat before0 "$BEFORE"
fi
# The marginal cost of a chat: the same session with two chats after each think, less the run
# with one. A run's fixed costs that come with its first chats (the page's delivery chart, the
# summary's figures of the chats' histograms, per-second takes of histograms only chats fill)
# cancel, as they do at the user counts and lengths real runs have.
marginal=${MARGINAL:-0}
mult=${MULT:-2}
awk -v k="$mult" '/<request><jabber type="chat"/ { for (i = 1; i < k; i++) print } { print }' \
    "$out/chat.xml" > "$out/chat2.xml"
if [ "$marginal" = 1 ]; then
    bs_run chat2 bs2
    read_counts "$out/bs2/summary.json" > "$out/bs2.counts" || echo "0 0" > "$out/bs2.counts"
    ts_run chat2 tsung2
    [ "$floor" = 1 ] && fl_run floor2 "$mult" "$nowait $single"
    if [ -n "${BEFORE:-}" ]; then
        bs_run chat2 before2 "$BEFORE"
        read_counts "$out/before2/summary.json" > "$out/before2.counts" \
            || echo "0 0" > "$out/before2.counts"
    fi
fi
report() {
# Tsung's chats sent: its per-request count for the chat requests is not apart, so the
# sessions' fixed 10 chats each are counted from its finished sessions.
ts_sessions=$(grep -h '^stats: session ' "$out"/tsung/*/tsung.log | awk '{ s += $3 } END { print s + 0 }')
set -- $(head -1 "$out/bs.counts")
bs_sent=$1; bs_del=$2
set -- $(sed -n 2p "$out/bs.counts")
load=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v u="$users" -v s="$secs" -v t="$think" -v bsc="$(cpu "$out/bs.time")" \
    -v tsc="$(cpu "$out/tsung.time")" -v nc="$nochat" \
    -v bs0="$( [ "$nochat" = 1 ] && cpu "$out/bs0.time" || echo 0)" \
    -v ts0="$( [ "$nochat" = 1 ] && cpu "$out/tsung0.time" || echo 0)" \
    -v bss="$bs_sent" -v bsd="$bs_del" -v tss="$ts_sessions" \
    -v p50="$1" -v p90="$2" -v p99="$3" -v pmax="$4" -v la="$load" 'BEGIN {
    printf "%d users over %d s, think %d s, 10 chats each, load average %s\n", u, s, t, la
    printf "beamscale: %d chats sent, %d delivered (%.0f%%), client CPU %.2f s, %.1f us per delivered chat\n",
        bss, bsd, (bss > 0 ? 100 * bsd / bss : 0), bsc, (bsd > 0 ? 1e6 * bsc / bsd : 0)
    printf "beamscale delivery time (ms): p50 %s, p90 %s, p99 %s, max %s\n", p50, p90, p99, pmax
    tsd = tss * 10
    printf "tsung: %d sessions done, about %d chats sent, client CPU %.2f s, %.1f us per sent chat\n",
        tss, tsd, tsc, (tsd > 0 ? 1e6 * tsc / tsd : 0)
    if (bsd > 0 && tsd > 0)
        printf "client CPU per chat beamscale/tsung: %.2f (goal <= 0.5)\n", (bsc / bsd) / (tsc / tsd)
    if (nc == 1 && bsd > 0 && tsd > 0) {
        printf "without chats: beamscale CPU %.2f s, tsung %.2f s\n", bs0, ts0
        bm = 1e6 * (bsc - bs0) / bsd; tm = 1e6 * (tsc - ts0) / tsd
        printf "CPU per chat itself (run minus its run without chats): beamscale %.1f us, " \
            "tsung %.1f us, ", bm, tm
        # The Tsung node spins and idles differently run to run: its difference can drown.
        if (tm > 0) printf "ratio %.2f\n", bm / tm
        else printf "ratio none (tsung'"'"'s difference is inside its run-to-run spread)\n" } }'
# A row against Tsung's: LABEL, its CPU files (with and without chats), chats delivered.
vs_tsung() {
    awk -v l="$1" -v c="$(cpu "$2")" -v c0="$( [ "$nochat" = 1 ] && cpu "$3" || echo 0)" \
        -v d="$4" -v nc="$nochat" -v tsc="$(cpu "$out/tsung.time")" \
        -v ts0="$( [ "$nochat" = 1 ] && cpu "$out/tsung0.time" || echo 0)" \
        -v tsd="$((ts_sessions * 10))" 'BEGIN {
        if (d == 0 || tsd == 0) { printf "%s: no chats delivered\n", l; exit }
        printf "%s: client CPU %.2f s, %.1f us per delivered chat, ratio to tsung %.2f\n",
            l, c, 1e6 * c / d, (c / d) / (tsc / tsd)
        if (nc == 1 && tsc > ts0)
            printf "%s: without chats %.2f s, per chat itself %.1f us, ratio to tsung %.2f\n",
                l, c0, 1e6 * (c - c0) / d, ((c - c0) / d) / ((tsc - ts0) / tsd) }'
}
[ -z "${BEFORE:-}" ] || vs_tsung "before ($BEFORE)" "$out/before.time" "$out/before0.time" \
    "$(cut -d' ' -f2 "$out/before.counts" | head -1)"
if [ "$floor" = 1 ]; then
    for f in floor $([ "$floord" = 0 ] || echo floord); do
        set -- $(cat "$out/$f.counts")
        label=$([ $f = floor ] && echo "floor (+sbwt none)" || echo "floor (defaults)")
        echo "$label: $1 chats sent, $2 delivered, $3 users failed"
        vs_tsung "$label" "$out/$f.time" "$out/${f}0.time" "$2"
    done
    # beamscale against the floor with the same flags.
    set -- $(cat "$out/floor.counts")
    awk -v b="$(cpu "$out/bs.time")" -v b0="$( [ "$nochat" = 1 ] && cpu "$out/bs0.time" \
        || echo 0)" -v bd="$bs_del" -v f="$(cpu "$out/floor.time")" -v fd="$2" \
        -v f0="$( [ "$nochat" = 1 ] && cpu "$out/floor0.time" || echo 0)" -v nc="$nochat" 'BEGIN {
        if (bd == 0 || fd == 0) exit
        printf "beamscale/floor (+sbwt none): per delivered chat %.2f", (b / bd) / (f / fd)
        if (nc == 1 && f > f0) printf ", per chat itself %.2f", ((b - b0) / bd) / ((f - f0) / fd)
        printf "\n" }'
fi
}
# Sessions started by a run (beamscale's summary), done (Tsung's log).
bs_sessions() { python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['sessions_started'])" \
    "$out/$1/summary.json" 2>/dev/null || echo "?"; }
ts_done() { grep -h '^stats: session ' "$out"/$1/*/tsung.log | awk '{ s += $3 } END { print s + 0 }'; }
# Per chat, function by function less the run without chats, idle left out.
work() {
    [ "$nochat" = 1 ] || return 0
    echo "sessions (with chats / without): beamscale $(bs_sessions bs) / $(bs_sessions bs0)," \
        "tsung $(ts_done tsung) / $(ts_done tsung0)"
    python3 bench/cg_work.py "$out" bs bs0 "$(head -1 "$out/bs.counts" | cut -d' ' -f2)" 8
    [ -z "${BEFORE:-}" ] || python3 bench/cg_work.py "$out" before before0 \
        "$(head -1 "$out/before.counts" | cut -d' ' -f2)" 8
    python3 bench/cg_work.py "$out" tsung tsung0 "$(( $(ts_done tsung) * 10 ))" 8
    [ "$floor" = 1 ] || return 0
    python3 bench/cg_work.py "$out" floor floor0 "$(cut -d' ' -f2 "$out/floor.counts")" 8
}
delivered() { head -1 "$out/$1.counts" | cut -d' ' -f2; }
# Per extra chat: the run with two chats a think less the run with one.
margin() {
    [ "$marginal" = 1 ] || return 0
    echo "marginal, per extra chat ($mult chats a think less one): sessions beamscale" \
        "$(bs_sessions bs2) / $(bs_sessions bs), tsung $(ts_done tsung2) / $(ts_done tsung)"
    python3 bench/cg_work.py "$out" bs2 bs "$(( $(delivered bs2) - $(delivered bs) ))" 8
    [ -z "${BEFORE:-}" ] || python3 bench/cg_work.py "$out" before2 before \
        "$(( $(delivered before2) - $(delivered before) ))" 8
    python3 bench/cg_work.py "$out" tsung2 tsung \
        "$(( $(ts_done tsung2) * 10 * mult - $(ts_done tsung) * 10 ))" 8
    [ "$floor" = 1 ] || return 0
    python3 bench/cg_work.py "$out" floor2 floor \
        "$(( $(delivered floor2) - $(delivered floor) ))" 8
}
# Under the instruction clock the same figures, in their unit.
if [ "$clock" = instructions ]; then
    report | sed -e 's/client CPU \([0-9.]*\) s/client \1 M instructions/g' \
        -e 's/CPU \([0-9.]*\) s/\1 M instructions/g' -e 's/ us per/ instructions per/g' \
        -e 's/ us,/ instructions,/g' -e 's/chats \([0-9.]*\) s/chats \1 M instructions/g' \
        -e 's/ us$/ instructions/' -e 's/CPU per/instructions per/g' \
        -e 's/tsung \([0-9.]*\) s$/tsung \1 M instructions/'
    work
    margin
else
    report
fi
