#!/bin/sh
# Makes the screenshots of issue 39's page parts in docs/screens/: compare-load.png (compare of
# two short loads of beamscale_target_workers, the second 20 % slower), ctl-live.png (the live
# page of a load steered by `beamscale ctl': its buttons and the marks) and load-flow.png (that
# load's final page: users in flight, the ctl marks). A few minutes; needs ./beamscale (make
# build) and chromium (scripts/install-deps.sh).
set -e
out=$(mktemp -d /tmp/beamscale-around-screens.XXXXXX)
scenario() { # FILE SERVICE_MS SECONDS
    cat > "$1" <<SCENARIO
{targets, [{sut, #{start => #{erl => "erl", flags => "+sbwt none",
                              init => {beamscale_target_workers, start, [64, $2]}}}}]}.
{phases, [{main, #{duration_s => $3, rate => 50}}]}.
{sessions, [{one, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []}}},
                              {think, 200},
                              {rpc, #{call => {beamscale_target_workers, request, []}}}]}}]}.
{drain_s, 2}.
SCENARIO
}
scenario "$out/a.scenario" 100 6
scenario "$out/b.scenario" 120 6
scenario "$out/steer.scenario" 100 120
./beamscale load "$out/a.scenario" --name a --out "$out" --quiet
./beamscale load "$out/b.scenario" --name b --out "$out" --quiet
./beamscale compare "$out/a" "$out/b" --fail-if-p99-above 5 > /dev/null || true
shot() { # URL FILE HEIGHT
    # As root Chromium needs --no-sandbox; its complaints (no D-Bus) are not ours.
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$out/profile" --window-size=1300,"$3" --virtual-time-budget=2000 \
        --screenshot="docs/screens/$2" "$1" 2>/dev/null
}
shot "file://$out/b/compare.html" compare-load.png 1300
./beamscale load "$out/steer.scenario" --name steer --out "$out" --quiet --web 0 \
    > "$out/output" 2>&1 &
load=$!
tries=0
until [ -f "$out/steer/ctl.json" ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 120 ] || { echo "no ctl.json in $out/steer" >&2; exit 1; }
    sleep 0.5
done
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$out/output")
sleep 3
./beamscale ctl "$out/steer" rate 100 > /dev/null
sleep 3
./beamscale ctl "$out/steer" users +40 > /dev/null
sleep 3
shot "$url" ctl-live.png 1600
./beamscale ctl "$out/steer" stop > /dev/null
wait "$load" || true
shot "file://$out/steer/index.html" load-flow.png 2600
echo "docs/screens: compare-load.png ctl-live.png load-flow.png (runs kept in $out)"
