#!/bin/bash
# The failed and auto-skipped cases of the newest Common Test run under LOGDIR, a line each,
# reasons on one line and cut short. `make test' prints it last when a CT stream failed: a CI
# log shows its tail, where rebar3's own summary only counts ("Failures occurred: 2").
# Usage: scripts/ct-failures.sh LOGDIR [MAX]  (MAX lines of failures, 8 unless given).
set -u
dir=${1:?usage: scripts/ct-failures.sh LOGDIR [MAX]}
max=${2:-8}
run=$(ls -td "$dir"/ct_run.* 2>/dev/null | head -n 1)
if [ -z "$run" ]; then echo "ct-failures.sh: no CT run under $dir"; exit 0; fi
logs=("$run"/*/run.*/suite.log)
[ -e "${logs[0]}" ] || { echo "ct-failures.sh: no suite log under $run"; exit 0; }
# A result runs from its `=result' line to the next `=' line; user skips (`skipped:') are the
# suites' own decisions and not failures. Auto-skips of one suite for one reason are counted.
awk -v max="$max" '
    function flush(   r) {
        if (res == "" || res ~ /^(ok|skipped)/ || name ~ /:end_per_(suite|group)$/) return
        gsub(/[ \t]+/, " ", res)
        if (res ~ /^auto_skipped/) {
            split(name, p, ":"); r = p[1] ": " res
            if (!(r in skips)) order[++n] = r
            skips[r]++
        } else if (++failed <= max) {
            print "FAILED " name ": " substr(res, 1, 600)
        }
    }
    /^=case / { flush(); name = $2; res = ""; inres = 0; next }
    /^=result / { sub(/^=result +/, ""); res = $0; inres = 1; next }
    /^=/ { inres = 0; next }
    inres { res = res " " $0 }
    END {
        flush()
        if (failed > max) print "... and " failed - max " more failed"
        for (i = 1; i <= n && i <= max; i++) print "SKIPPED " skips[order[i]] "x " order[i]
        if (n > max) print "... and " n - max " more kinds of auto-skip"
    }
' "${logs[@]}"
echo "(the logs: $run)"
