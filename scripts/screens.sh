#!/bin/sh
# Makes the screenshots in docs/screens/: a suite run page, a compare page (two small runs of
# `big' and `ran' at 1 and 2 schedulers) and a load page (examples/rpc_echo.scenario: two
# phases, a transaction), each shot in headless Chromium. About two minutes; needs ./beamscale
# (make build) and chromium (scripts/install-deps.sh).
set -e
out=$(mktemp -d /tmp/beamscale-screens.XXXXXX)
shots=docs/screens
mkdir -p "$shots"
run() {
    ./beamscale run --bench big,ran --schedulers 1,2 --iterations 5 --warmups 1 \
        --name "$1" --out "$out" --quiet
}
run a
run b
./beamscale compare "$out/a" "$out/b" > /dev/null || true
./beamscale load examples/rpc_echo.scenario --name echo --out "$out" --quiet
shot() {
    # As root Chromium needs --no-sandbox; its complaints (no D-Bus) are not ours.
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$out/profile" --window-size=1300,"$3" \
        --screenshot="$shots/$2" "file://$1" 2>/dev/null
}
shot "$out/a/index.html" run.png 2600
shot "$out/b/compare.html" compare.png 1400
shot "$out/echo/index.html" load.png 2600
echo "$shots: run.png compare.png load.png (pages kept in $out)"
