#!/bin/bash
# Does squeeze name a serialising gen_server call's peak right beside one CPU hog per core
# (`yes', stopped by pid)? RUNS times `bench --callers squeeze' of a call to one busy server
# (about 1 ms of work a call: its callers serialise on it, the peak is 1 caller), each squeeze
# over LAUNCHES fresh emulators; prints each verdict, then how many said 1 caller, no clear
# peak, or a wrong peak. Goal (issue 54): 1 caller or "no clear peak" in 10 of 10, never wrong.
#   bench/squeeze_serial.sh [RUNS] [LAUNCHES]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
runs=${1:-10}
launches=${2:-3}
dir=$(mktemp -d /tmp/beamscale-squeeze.XXXXXX)
trap 'hogs_stop; rm -rf "$dir"' EXIT
cat > "$dir/bs_serial.erl" <<'ERL'
-module(bs_serial).
-behaviour(gen_server).
-export([start/0, call/0, init/1, handle_call/3, handle_cast/2]).
start() -> gen_server:start({local, ?MODULE}, ?MODULE, [], []).
call() -> gen_server:call(?MODULE, work).
init([]) -> {ok, lists:seq(1, 300000)}.
handle_call(work, _From, L) -> {reply, lists:sum(L), L}.
handle_cast(_, S) -> {noreply, S}.
ERL
erlc -o "$dir" "$dir/bs_serial.erl"
./beamscale list >/dev/null
hogs_start
one=0 unclear=0 wrong=0
for i in $(seq 1 "$runs"); do
    line=$(./beamscale bench 'bs_serial:call().' --init 'bs_serial:start().' --callers squeeze \
               --max-callers 4 --time 1 --launches "$launches" --code-path "$dir" --quiet \
               2>/dev/null | grep -E '^(peak|no clear peak)')
    case "$line" in
        "peak: "*" at 1 concurrent"*) one=$((one + 1)) ;;
        "no clear peak"*) unclear=$((unclear + 1)) ;;
        *) wrong=$((wrong + 1)) ;;
    esac
    echo "run $i (load $(cut -d' ' -f1 /proc/loadavg)): $line"
done
echo "peak at 1 caller: $one, no clear peak: $unclear, wrong peak: $wrong (of $runs)"
