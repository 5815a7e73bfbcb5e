# The instructions mode of bench/micro_vs_bare_loop.sh (sourced by it, after its setup: $out,
# $exprs, bare_erl): `instructions COUNT_SAMPLES'.
instructions() {
    local count=$1 so side
    # The instruction clock's NIF, built (or found in its cache) as bench builds it.
    so=$(bare_erl -pa _build/default/lib/*/ebin -eval '
        {ok, So} = beamscale_icount:build(code:root_dir(), erlang:system_info(otp_release)),
        io:format("~s~n", [So]), halt().')
    echo "load $(cut -d' ' -f1 /proc/loadavg), $(nproc) cores; counting (each count a Valgrind boot)"
    "$out/beamscale" bench --json --clock instructions --counter valgrind --launches 1 \
        --count-samples "$count" "${exprs[@]}" 2>"$out/bench.err" >"$out/bench.json" \
        || { cat "$out/bench.err" >&2; exit 1; }
    local calls
    calls=$(python3 -c 'import json, sys
print(",".join(str(r["counted_calls"]) for r in json.load(open(sys.argv[1]))["results"]))' \
        "$out/bench.json")
    # As bench's counted node: one scheduler, no busy wait, few dirty threads, the counted
    # heaps in carriers of their own, under callgrind with collection off
    # (beamscale_icount:node_spec/3).
    for side in bare aa; do
        mkdir -p "$out/cg.$side"
        ERL_FLAGS='' ERL_AFLAGS='' ERL_ZFLAGS='' valgrind -q --tool=callgrind \
            --collect-atstart=no --smc-check=all --trace-children=yes --fair-sched=yes \
            --trace-children-skip='*/erl_child_setup,*/inet_gethost,*/epmd' \
            --callgrind-out-file="$out/cg.$side/cg.%p" \
            --log-file="$out/cg.$side/valgrind.%p.log" \
            erl -noshell +S 1 +sbwt none +sbwtdcpu none +sbwtdio none +SDcpu 1:1 +SDio 1 \
            +MHsbct 32 \
            -pa "$out" -pa _build/default/lib/beamscale_bench/ebin \
            -eval "micro_bare:count(\"$so\", \"$out/cg.$side\", [$calls], $count), halt()." \
            | sed "s/^/$side /" >>"$out/figures"
    done
    echo "load $(cut -d' ' -f1 /proc/loadavg)"
    python3 - "$out/bench.json" "$out/figures" "${exprs[@]}" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
fig = {}
for line in open(sys.argv[2]):
    side, i, x = line.split()
    fig[(side, int(i))] = float(x)
print("instructions per call (counter %s), each side less its own empty loop's;"
      " A/A: the bare loops counted again in another emulator" % rows[0]["counter"])
fmt = "%-44s %10s %10s %10s %10s %8s %6s"
print(fmt % ("expression", "bench", "bare", "bare A/A", "bench/bare", "A/A", "calls"))
worst = 0.0
for i, (e, r) in enumerate(zip(sys.argv[3:], rows), 1):
    b, bare, aa = r["instructions"], fig[("bare", i)], fig[("aa", i)]
    worst = max(worst, abs(b / bare - 1))
    print(fmt % (e, "%.1f" % b, "%.1f" % bare, "%.1f" % aa, "%.4f" % (b / bare),
                 "%.4f" % (aa / bare), r["counted_calls"]))
print("largest |bench/bare - 1|: %.2f %% (goal: within 2 %%)" % (worst * 100))
PY
}
