#!/bin/bash
# What a profile (`run --profile', docs/profiles.md) costs a benchmark's calls, in instructions
# retired per call (`bench --clock instructions --counter valgrind': counted in the node, around
# the calls only, so the host's load does not move them). Sides, each in a node of its own:
#   plain    the node as a run's measured nodes start (a profiled run's too: its profile runs
#            on fresh nodes after the measured iterations);
#   jpperf   with the profile's node flag (beamscale_profile:node_flags/0, `+JPperf true');
#   plain2   plain again: the A/A control.
# perf itself is not a side: it samples from the kernel and runs no instruction in the node's
# user space, which is all this clock counts. The expressions: mbrot's iteration at 1/64 of the
# short size at one core (its output sent to a sink, not the terminal) and two library calls.
#   bench/profile_overhead_instr.sh [COUNT_SAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
out=$(mktemp -d /tmp/beamscale-profile-instr.XXXXXX)
trap 'rm -rf "$out"' EXIT
./beamscale list >/dev/null
flag=$(erl -noshell -pa _build/default/lib/*/ebin \
    -eval 'io:format("~s~n", [beamscale_profile:node_flags()]), halt().')
exprs=('beamscale_bench_mbrot:run([40, 8], [], #{}).' 'lists:seq(1, 100).'
       'erlang:phash2({a, [1, 2, 3], <<"bin">>}).')
# The caller's output goes to a process that answers every request (a run's nodes print to it).
sink='group_leader(spawn(fun S() -> receive {io_request, F, R, _} -> F ! {io_reply, R, ok},
S() end end), self())'
echo "load $(cut -d' ' -f1 /proc/loadavg), $(nproc) cores; profile's node flag: $flag"
side() {
    local name=$1; shift
    ./beamscale bench --json --clock instructions --counter valgrind --launches 1 \
        --count-samples "$count" --time 0.2 --samples 5 --warmup 0.05 --expr-time-limit 900 \
        --code-path _build/default/lib/beamscale_bench/ebin --init-runner "$sink" "$@" \
        "${exprs[@]}" 2>"$out/$name.err" >"$out/$name.json" \
        || { cat "$out/$name.err" >&2; exit 1; }
}
side plain
side jpperf --flags "$flag"
side plain2
echo "load $(cut -d' ' -f1 /proc/loadavg)"
python3 - "$out" "${exprs[@]}" <<'PY'
import json, sys
d = sys.argv[1]
rows = {s: json.load(open("%s/%s.json" % (d, s)))["results"] for s in ("plain", "jpperf", "plain2")}
print("instructions per call (least of the counted samples less the empty loop's; valgrind)")
fmt = "%-46s %13s %13s %13s %8s %8s"
print(fmt % ("expression", "plain", "+JPperf true", "plain A/A", "flag", "A/A"))
for i, e in enumerate(sys.argv[2:]):
    p, j, a = (rows[s][i]["instructions"] for s in ("plain", "jpperf", "plain2"))
    print(fmt % (e, "%.1f" % p, "%.1f" % j, "%.1f" % a, "%.4f" % (j / p), "%.4f" % (a / p)))
PY
