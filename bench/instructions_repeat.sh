#!/bin/bash
# Is the instruction clock exact beside a loaded host? `bench --clock instructions EXPR' run RUNS
# times (default 5) in a row, each run a fresh node, beside one CPU hog (`yes') per core that this
# script starts and stops by pid: prints each run's instructions per call and its time-clock twin
# (ns per call, measured in the same run on a node without Valgrind), then the spread of each
# over the runs, (max - min) / median (goal: instructions within 0.5 %).
#   bench/instructions_repeat.sh [RUNS [EXPR]]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
runs=${1:-5}
expr=${2:-lists:seq(1,100).}
gate_out "" instr-repeat
trap 'hogs_stop; rm -rf "$out"' EXIT
hogs_start
echo "$(nproc) hogs beside; load $(cut -d' ' -f1 /proc/loadavg)"
start=$(date +%s)
for r in $(seq 1 "$runs"); do
    "$bs" bench --json --clock instructions "$expr" 2>"$out/err.$r" >"$out/run.$r" \
        || { cat "$out/err.$r" >&2; exit 1; }
done
echo "$runs runs in $(( $(date +%s) - start )) s; load $(cut -d' ' -f1 /proc/loadavg)"
python3 - "$out" "$runs" <<'PY'
import json, sys
out, runs = sys.argv[1], int(sys.argv[2])
rows = [json.load(open("%s/run.%d" % (out, r)))["results"][0] for r in range(1, runs + 1)]
ins = [r["instructions"] for r in rows]
ns = [r["ns"] for r in rows]
def spread(xs):
    s = sorted(xs)
    return (s[-1] - s[0]) / s[len(s) // 2] * 100
print("%s, counter %s, %d calls a counted sample" % (rows[0]["label"], rows[0]["counter"],
                                                      rows[0]["counted_calls"]))
print("run  instr/call  ns/call")
for i, (a, b) in enumerate(zip(ins, ns), 1):
    print("%3d  %10.1f  %7.1f" % (i, a, b))
print("spread over the runs: instructions %.2f %% (goal 0.5 %%), time %.1f %%"
      % (spread(ins), spread(ns)))
PY
