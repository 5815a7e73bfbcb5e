#!/bin/sh
# Makes the profile screens of docs/profiles.md in docs/screens/: ets_hammer (one ETS set
# without write_concurrency, a writer per scheduler: the profile suite's benchmark) and mbrot
# at 1 and 2 schedulers with --profile, the pollset study's keep-alive server (2 schedulers)
# profiled at each load level, and `saturate --profile' against that server's node; each page
# cut to the part shown (scripts/screen-cut.py) and shot in headless Chromium. About eight
# minutes on a busy 2-core host; needs ./beamscale, perf and chromium (scripts/install-deps.sh).
#   scripts/profile-screens.sh [all|saturate]    (saturate: only the saturate screen)
set -e
part=${1:-all}
out=$(mktemp -d /tmp/beamscale-profile-screens.XXXXXX)
shots=docs/screens
mkdir -p "$shots" "$out/bench"
cut() { python3 scripts/screen-cut.py "$@"; }
shot() {
    # As root Chromium needs --no-sandbox; its complaints (no D-Bus) are not ours.
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$out/chromium" --window-size=1300,"$3" \
        --screenshot="$shots/$2" "file://$1" 2>/dev/null
}
if [ "$part" = all ]; then
    cp apps/beamscale/test/beamscale_profile_SUITE_data/bench/ets_hammer.erl.src \
        "$out/bench/ets_hammer.erl"
    ./beamscale run --bench-path "$out/bench" --bench ets_hammer --schedulers 1,2 \
        --iterations 3 --profile --name ets --out "$out" --quiet
    ./beamscale run --bench mbrot --schedulers 1,2 --iterations 3 --profile --name mbrot \
        --out "$out" --quiet
    ./beamscale study pollset --schedulers 2 --profile --name pollset --out "$out" --quiet
    cut "$out/ets/index.html" "$out/search.html" "<h3>ets_hammer @ default/default/2/1" \
        "<section>" --search flame2 rwmutex
    cut "$out/mbrot/index.html" "$out/mbrot.html" "<section><h2>What grew" \
        "<section><h2>Graphs"
    cut "$out/pollset/index.html" "$out/pollset-grew.html" "<section><h2>What grew" \
        "<section><h2>Profiles of each"
    cut "$out/pollset/index.html" "$out/pollset-level.html" "<section><h2>Profiles of each"
    shot "$out/search.html" profile-search.png 1100
    shot "$out/mbrot.html" profile-mbrot.png 900
    shot "$out/pollset-grew.html" profile-pollset-grew.png 1500
    shot "$out/pollset-level.html" profile-pollset-level.png 1500
    echo "$shots: profile-search.png profile-mbrot.png profile-pollset-grew.png" \
        "profile-pollset-level.png"
fi
# saturate: the keep-alive HTTP server on a node the scenario starts (the node is profiled at
# each level), loaded through its address: sessions of 20 GETs on one connection.
port=$(awk 'BEGIN { srand(); print 20000 + int(rand() * 20000) }')
cat > "$out/http.scenario" <<EOT
{targets, [{node, #{start => #{erl => "erl", flags => "",
                               init => {beamscale_target_http, start, [#{port => $port}]}}}},
           {sut, #{address => "127.0.0.1:$port"}}]}.
{phases, [{p, #{duration_s => 1, rate => 1}}]}.
{sessions, [{s, #{steps => [{loop, 20, [{http, #{target => sut, path => "/"}}]}]}}]}.
EOT
./beamscale saturate "$out/http.scenario" --slo "p99<500ms,errors<1%,achieved>95%" \
    --level 4s --warmup 1s --budget 60s --start 50 --profile --profile-window 2000 \
    --name saturate --out "$out" --quiet
cut "$out/saturate/index.html" "$out/saturate-grew.html" "<section><h2>Capacity" \
    "<section><h2>Against offered load"
shot "$out/saturate-grew.html" profile-saturate-grew.png 1500
echo "$shots: profile-saturate-grew.png (pages kept in $out)"
