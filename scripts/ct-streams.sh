#!/bin/bash
# The Common Test suites in two streams that can run at once. Most suites wait on timers,
# servers and nodes rather than the CPU: beside one `yes' per core the one-stream CT took 1128 s
# against 1060 s quiet, so on a 2-core host two streams take little more than the longer one.
# Stream 1 holds the suites that measure CPU or time (benchmarks, samplers, profiles, studies)
# with saturate's timed levels, which use little CPU, and the one that needs the second
# emulator; stream 2 every other suite, so a new suite lands there. `make test' starts stream 2
# first, beside xref and EUnit, and stream 1 after them, beside dialyzer.
# Stream 2 builds and logs in _build/ct2+test (profile ct2): two rebar3 in one profile would
# copy the test data directories over each other while a suite reads them. A profile, not
# REBAR_BASE_DIR: the suites' own rebar3 builds (cmd_run's own_app) would inherit that.
# Usage: scripts/ct-streams.sh 1|2 [NAME...]  (NAMEs: only those suites, `saturate' for
# beamscale_saturate_SUITE); REBAR names the rebar3 to run. The Makefile runs both at once
# (`make test', `make ct' without SUITE).
set -u
cd "$(dirname "$0")/.." || exit 1
rebar=${REBAR:-rebar3}
which=${1:-}
shift
# Stream 1, by quiet duration (s, a fresh clone on 2026-11-26, 1040 s in all): saturate 240,
# profile 50, cmd_bench 28, study_smp_io 27, bencherl 20, hostwatch 19, sampler 17, bench_set 13,
# busywait 10, study_ets 8, otp 4, saturate_idle 4: 441 s; stream 2 599 s, started 5 min earlier.
# Since dialyzer runs beside stream 1 (after EUnit) stream 1 starts some 10 min sooner on a fresh
# machine, so four long suites that do not measure moved to it from stream 2 (a fresh clone on
# 2026-12-02, beside the PLT build: hostile_input 124, library 107, cmd_run 80, coordinator 65 s).
stream1="saturate saturate_idle profile cmd_bench cmd_bench_icount cmd_run_icount study_smp_io bencherl
         hostwatch sampler bench_set busywait study_ets otp bench_ets_bench bench_limit
         hostile_input library cmd_run coordinator"

# The suites of stream $1 (restricted to the NAMEs after it), comma-separated paths without
# .erl, as `rebar3 ct --suite' takes them.
suites() {
    local stream=$1 s name out=()
    shift
    for s in apps/*/test/*_SUITE.erl; do
        name=$(basename "$s" _SUITE.erl); name=${name#beamscale_}
        [ $# = 0 ] || [[ " $* " == *" $name "* ]] || continue
        if [[ " $(echo $stream1) " == *" $name "* ]]; then
            [ "$stream" = 1 ] && out+=("${s%.erl}")
        else
            [ "$stream" = 2 ] && out+=("${s%.erl}")
        fi
    done
    local IFS=,; echo "${out[*]}"
}

# `rebar3 ct' without --suite would run every suite: an empty stream runs nothing.
stream() {
    local list
    list=$(suites "$@")
    if [ -z "$list" ]; then echo "CT stream $1: no suite"; return 0; fi
    echo "CT stream $1: $(echo "$list" | tr , '\n' | wc -l) suites"
    if [ "$1" = 1 ]; then
        "$rebar" ct --suite="$list"
    else
        mkdir -p "_build/ct2+test/logs"
        "$rebar" as ct2 ct --logdir "_build/ct2+test/logs" --suite="$list" &
        stopped_by_term $!
    fi
}

# Waits for rebar3 (pid $1, the emulator itself: escript and erl exec it) and returns its
# status. SIGTERM here (`make test' stopped) becomes SIGUSR2 for it: CT's hook
# beamscale_test_interrupt aborts the running case, skips the rest and runs end_per_suite.
stopped_by_term() {
    local child=$1 status
    trap 'echo "CT stream 2: SIGTERM: stopping CT (end_per_suite)"; kill -USR2 $child' TERM
    wait "$child"; status=$?
    # A trapped signal ends `wait' early: wait again until rebar3 has ended.
    while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
    return $status
}

missing=$(for n in $stream1; do [ -e apps/*/test/beamscale_${n}_SUITE.erl ] || echo "$n"; done)
[ -z "$missing" ] || { echo "ct-streams.sh: stream 1 names no suite: $missing" >&2; exit 2; }

case $which in
    1|2) stream "$which" "$@" ;;
    *) echo "usage: scripts/ct-streams.sh 1|2 [NAME...]" >&2; exit 2 ;;
esac
