# Shared by the bench/ scripts (sourced): small helpers for side-by-side timings.

# The median of the numbers in FILE, one a line.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END {
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# A free TCP port on 127.0.0.1 (none listening on it), printed.
free_port() {
    for p in $(shuf -i 20000-32000 -n 50); do
        if ! ss -ltnH "sport = :$p" | grep -q .; then echo "$p"; return 0; fi
    done
    echo "no free port found" >&2; return 1; }

# nginx_start DIR USERS: nginx on a free port of 127.0.0.1 for USERS keep-alive connections, its
# config and logs in DIR/nginx; sets nginx_pid and port (stop it with nginx_stop). Workers hold
# the server side: at most 20 000 files each here, and connections do not spread evenly over
# them: a worker per 10 000 users, plus one, each with its own listening socket (reuseport: the
# kernel spreads the connections).
nginx_start() {
    nginx_dir=$1/nginx
    nginx_workers=$(( ($2 + 9999) / 10000 + 1 ))
    port=$(free_port)
    mkdir -p "$nginx_dir/logs"
    cat > "$nginx_dir/nginx.conf" <<NGINX
daemon off;
master_process on;
worker_processes $nginx_workers;
worker_rlimit_nofile 20000;
error_log $nginx_dir/logs/error.log warn;
pid $nginx_dir/nginx.pid;
events { worker_connections 19500; }
http {
    access_log off;
    keepalive_timeout 600s;
    keepalive_requests 1000000;
    client_body_temp_path $nginx_dir/body;
    proxy_temp_path $nginx_dir/proxy;
    fastcgi_temp_path $nginx_dir/fastcgi;
    uwsgi_temp_path $nginx_dir/uwsgi;
    scgi_temp_path $nginx_dir/scgi;
    server {
        listen 127.0.0.1:$port backlog=4096 reuseport;
        location / { return 200 "ok"; }
    }
}
NGINX
    /usr/sbin/nginx -p "$nginx_dir" -c "$nginx_dir/nginx.conf" &
    nginx_pid=$!
    i=0
    until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
        i=$((i + 1))
        [ "$i" -lt 50 ] || { echo "nginx did not start:" >&2
                             cat "$nginx_dir/logs/error.log" >&2; return 1; }
        sleep 0.1
    done; }

# Stops the nginx of nginx_start (its master, by pid; the workers follow it).
nginx_stop() {
    if [ -n "${nginx_pid:-}" ]; then
        kill -QUIT "$nginx_pid" 2>/dev/null || true
        wait "$nginx_pid" 2>/dev/null || true
        nginx_pid=
    fi; }

# What nginx complained of (worker_connections, files), most frequent first, without times.
nginx_complaints() {
    sed 's/^[^]]*] [0-9#]*: [*0-9]* *//; s/, client: .*//' "$nginx_dir/logs/error.log" \
        | grep -v 'signal\|start worker\|exited with\|gracefully\|using the' | sort | uniq -c \
        | sort -rn | head -n 5 | sed 's/^/nginx: /'; }

# rabbit_start DIR: Debian's RabbitMQ as a node of its own (name, ports, database, logs, cookie
# in DIR/rabbit) on a free port of 127.0.0.1; sets port (AMQP) and rabbit_sh (the script's pid,
# which stops the broker on SIGTERM). Stop it with rabbit_stop.
rabbit_start() {
    rabbit_dir=$1/rabbit
    mkdir -p "$rabbit_dir/home" "$rabbit_dir/mnesia" "$rabbit_dir/log"
    port=$(free_port)
    rabbit_node=bsbench$$@localhost
    echo "[]." > "$rabbit_dir/enabled_plugins"
    # channel_max 0 (no limit): Tsung 1.7 asks for it, which RabbitMQ 3.10's default 2047 refuses.
    printf 'listeners.tcp.default = 127.0.0.1:%s\nchannel_max = 0\n' "$port" \
        > "$rabbit_dir/rabbitmq.conf"
    HOME=$rabbit_dir/home RABBITMQ_NODENAME=$rabbit_node RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
        RABBITMQ_NODE_PORT=$port RABBITMQ_DIST_PORT=$(free_port) \
        RABBITMQ_MNESIA_BASE=$rabbit_dir/mnesia RABBITMQ_LOG_BASE=$rabbit_dir/log \
        RABBITMQ_CONFIG_FILE=$rabbit_dir/rabbitmq \
        RABBITMQ_ENABLED_PLUGINS_FILE=$rabbit_dir/enabled_plugins \
        RABBITMQ_PID_FILE=$rabbit_dir/pid RABBITMQ_CONF_ENV_FILE=/dev/null \
        /usr/lib/rabbitmq/bin/rabbitmq-server > "$rabbit_dir/out" 2>&1 &
    rabbit_sh=$!
    i=0
    until ss -ltnH "sport = :$port" | grep -q .; do
        i=$((i + 1))
        [ "$i" -lt 1200 ] || { echo "rabbitmq did not start:" >&2; cat "$rabbit_dir/out" >&2
                               return 1; }
        sleep 0.1
    done; }

# rabbitmqctl ARGS against the broker of rabbit_start.
rabbit_ctl() {
    HOME=$rabbit_dir/home /usr/lib/rabbitmq/bin/rabbitmqctl -q -n "$rabbit_node" "$@"; }

# The messages in queue NAME.
rabbit_queued() {
    rabbit_ctl list_queues name messages | awk -v q="$1" '$1 == q { print $2 }'; }

# Stops the broker of rabbit_start: the script on SIGTERM stops it and waits for it.
rabbit_stop() {
    if [ -n "${rabbit_sh:-}" ]; then
        kill "$rabbit_sh" 2>/dev/null || true
        wait "$rabbit_sh" 2>/dev/null || true
        rabbit_sh=
    fi; }

# ---- Client CPU per operation against Tsung (amqp_vs_tsung.sh, mqtt_vs_tsung.sh) ----
# cpu_vs_tsung DIR ROUNDS: both tools on the same Tsung file, twice each: the start and the
# connections alone (`tsung_xml 0', a function of the caller), then with the work (`tsung_xml
# ROUNDS'). After each run the caller's `counted' prints what the server counted of that run
# (messages, publishes). CPU (user + system, GNU time) per operation is the difference over
# what the server counted, so neither tool's start counts. BEFORE=ESCRIPT adds a third tool, an
# earlier beamscale's built escript, for a before/after figure in the same invocation; a
# caller's function `floor_cmd RUN' (base or full) adds the command of a hand-written floor
# client. Prints the figures, the ratios and the load average.
cpu_vs_tsung() {
    tools=bs; [ -z "${BEFORE:-}" ] || tools="$tools bs0"
    ! command -v floor_cmd >/dev/null || tools="$tools fl"
    tools="$tools ts"
    tsung_xml 0 > "$1/base.xml"
    tsung_xml "$2" > "$1/full.xml"
    for run in base full; do
        for t in $tools; do
            cpu_vs_tsung_run "$1" "$run" "$t"
            counted > "$1/$run.$t.n"
        done
    done
    for t in $tools; do
        awk -v t="$t" '{ c[FILENAME ~ /full/] = $1 + $2 }
            END { printf "%s %.4f %.4f\n", t, c[0], c[1] }' "$1/base.$t" "$1/full.$t"
    done > "$1/cpu"
    awk -v la="$(cut -d' ' -f1-3 /proc/loadavg)" -v dir="$1" '
        { name[$1] = ($1 == "ts" ? "tsung" : $1 == "bs0" ? "beamscale before" :
                      $1 == "fl" ? "floor" : "beamscale")
          getline n < (dir "/full." $1 ".n"); done[$1] = n
          us[$1] = (n > 0 ? 1e6 * ($3 - $2) / n : 0); base[$1] = $2; full[$1] = $3; t[NR] = $1 }
        END { for (i = 1; i <= NR; i++) { k = t[i]
                printf "%s: %d done (counted by the server), CPU s %.2f alone, %.2f with the " \
                       "work: %.1f us per operation\n", name[k], done[k], base[k], full[k], us[k] }
              for (i = 1; i < NR; i++) if (us["ts"] > 0)
                printf "%s/tsung: %.2f (goal <= 0.5)\n", name[t[i]], us[t[i]] / us["ts"]
              if (us["fl"] > 0) printf "beamscale/floor: %.2f\n", us["bs"] / us["fl"]
              printf "load average: %s\n", la }' "$1/cpu"; }

# One tool's run of DIR/RUN.xml, its CPU seconds (user, system) in DIR/RUN.TOOL.
cpu_vs_tsung_run() {
    case $3 in
        bs) cmd="./beamscale load $1/$2.xml --name bs$2 --out $1 --quiet" ;;
        bs0) cmd="$BEFORE load $1/$2.xml --name bs0$2 --out $1 --quiet" ;;
        ts) cmd="tsung -i bs$$ -n -f $1/$2.xml -l $1/tsung$2 start" ;;
        fl) cmd=$(floor_cmd "$2") ;;
    esac
    # shellcheck disable=SC2086
    /usr/bin/time -o "$1/$2.$3" -f "%U %S" $cmd >"$1/$2.$3.out" 2>&1 || true; }

# ---- Compare gates (bench/ci_gate.sh, bench/compare_load_gate.sh): pairs of runs, gated. ----

# gate_out DIR NAME: sets out to DIR (made; kept) or, DIR empty, to a temporary directory
# removed on exit, and bs to a copy of the built command there: a source edited (and rebuilt)
# meanwhile changes no measurement.
gate_out() {
    if [ -n "$1" ]; then
        out=$1
        mkdir -p "$out"
    else
        out=$(mktemp -d "/tmp/beamscale-$2.XXXXXX")
        trap 'rm -rf "$out"' EXIT
    fi
    ./beamscale list >/dev/null
    cp _build/default/bin/beamscale "$out/beamscale"
    bs=$out/beamscale; }

# hogs_start: one CPU hog (`yes') per core, beside what is measured, their pids in hogs;
# hogs_stop stops them by pid (call it from the script's EXIT trap).
hogs=()
hogs_start() { for _ in $(seq 1 "$(nproc)"); do yes > /dev/null & hogs+=($!); done; }
hogs_stop() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; hogs=(); }

# gate A B FLAG...: `compare A B FLAG...' of the runs in $out, its text in $out/A-B.txt.
# Returns 0: passed, 1: the gate failed; anything else (2: nothing in common) stops the script.
gate() {
    local a=$1 b=$2 code=0
    shift 2
    "$bs" compare "$out/$a" "$out/$b" "$@" --out "$out/$a-$b.html" >"$out/$a-$b.txt" 2>&1 \
        || code=$?
    case $code in 0|1) return $code ;; *) cat "$out/$a-$b.txt" >&2; exit "$code" ;; esac; }

# gate_pairs PAIRS SAME SLOWER FLAG...: PAIRS times, three runs by the caller's `run NAME same'
# or `run NAME slow' (A and B the same, S slower), then `gate A B' failing is a false alarm and
# `gate A S' failing a caught slowdown. Prints a line a pair (SAME and SLOWER name the sides,
# the caller's `ratio A B' says by how much), then both counts.
gate_pairs() {
    local pairs=$1 same=$2 slower=$3 alarms=0 caught=0 i a s
    shift 3
    for i in $(seq 1 "$pairs"); do
        # One after the other, so a slow spell of the host falls on all three alike.
        run "a$i" same
        run "b$i" same
        run "s$i" slow
        if gate "a$i" "b$i" "$@"; then a=pass; else a=FAIL; alarms=$((alarms + 1)); fi
        if gate "a$i" "s$i" "$@"; then s=missed; else s=caught; caught=$((caught + 1)); fi
        echo "pair $i: $same $a ($(ratio "a$i" "b$i")), $slower $s ($(ratio "a$i" "s$i"))"
    done
    echo "false alarms: $alarms of $pairs"
    echo "slowdowns caught: $caught of $pairs"; }

# ---- A Tsung file of keep-alive HTTP users (many_users.sh, tsung_client_cpu.sh) ----
# tsung_keepalive_xml HOST CPU MAXUSERS FIRST_IP SOURCES PORT PHASE_S USERS RATE THINK_S GETS:
# one client (HOST, CPU emulators, SOURCES addresses from 127.0.0.FIRST_IP), nginx's PORT, one
# phase of USERS arriving at RATE/s, a session of GETS requests with THINK_S seconds between.
tsung_keepalive_xml() {
    local ips req think body i
    ips=$(seq "$4" $(($4 + $5 - 1)) | sed 's/.*/<ip value="127.0.0.&"\/>/' | paste -sd' ' -)
    req='<request><http url="/" method="GET" version="1.1"/></request>'
    think="<thinktime value=\"${10}\" random=\"false\"/>"
    body=$req
    for i in $(seq 2 "${11}"); do body="$body $think $req"; done
    cat <<XML
<?xml version="1.0"?>
<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
<tsung loglevel="error" version="1.0">
<clients><client host="$1" cpu="$2" maxusers="$3">$ips</client></clients>
<servers><server host="127.0.0.1" port="$6" type="tcp"/></servers>
<load><arrivalphase phase="1" duration="$7" unit="second">
  <users maxnumber="$8" arrivalrate="$9" unit="second"/></arrivalphase></load>
<sessions><session name="s" probability="100" type="ts_http">
 $body
</session></sessions>
</tsung>
XML
}
