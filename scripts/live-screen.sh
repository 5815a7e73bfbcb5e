#!/bin/sh
# Makes docs/screens/live.png: the live page (`--web') of examples/rpc_echo.scenario shot in
# headless Chromium 6 s into the run (its second phase), then waits for the run to end. About
# 20 s; needs ./beamscale (make build) and chromium (scripts/install-deps.sh).
set -e
out=$(mktemp -d /tmp/beamscale-live.XXXXXX)
./beamscale load examples/rpc_echo.scenario --name echo --out "$out" --quiet --web 0 \
    > "$out/output" 2>&1 &
load=$!
# The first line printed is the page's address.
tries=0
until url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$out/output" 2>/dev/null); do
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || { echo "no live page address in $out/output" >&2; exit 1; }
    sleep 0.5
done
sleep 6
# As root Chromium needs --no-sandbox; its complaints (no D-Bus) are not ours.
timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$out/profile" --window-size=1300,2400 --virtual-time-budget=2000 \
    --screenshot=docs/screens/live.png "$url" 2>/dev/null
wait "$load"
echo "docs/screens/live.png (the run kept in $out)"
