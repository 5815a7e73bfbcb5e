#!/bin/bash
# The "make test never flakes" check of issue 14: `make test' N times in a row (default 3) in a
# fresh clone of this repository's HEAD, one CPU-bound process per core running beside it. The
# first run is CI's own `.ci/run' (CI=true, no stdin); the others are `make test' in the same
# clone. Stops at the first failure. The hogs are stopped by pid. A loaded run takes 35 to 50
# minutes on a 2-core host.
# Usage: scripts/loaded-make-test.sh [RUNS] [LOG_DIR]
set -u
runs=${1:-3}
logs=${2:-$(mktemp -d /tmp/loaded-make-test.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
git clone -q "$root" "$work/clone"
# CI lays shared/ beside the clone.
[ -d "$root/../shared" ] && cp -r "$root/../shared" "$work/shared"
log="$logs/loop.log"
echo "clone $work/clone at $(git -C "$work/clone" rev-parse --short HEAD)" | tee -a "$log"
hogs=""
for _ in $(seq "$(nproc)"); do yes > /dev/null & hogs="$hogs $!"; done
trap 'kill $hogs 2>/dev/null' EXIT
cd "$work/clone" || exit 1
status=0
for run in $(seq "$runs"); do
    start=$(date +%s)
    echo "run $run start $(date +%T)" | tee -a "$log"
    if [ "$run" = 1 ]; then
        CI=true bash .ci/run < /dev/null > "$logs/run$run.out" 2>&1; status=$?
    else
        make test < /dev/null > "$logs/run$run.out" 2>&1; status=$?
    fi
    echo "run $run exit $status after $(( $(date +%s) - start )) s" | tee -a "$log"
    [ "$status" = 0 ] || break
done
echo "logs in $logs" | tee -a "$log"
exit "$status"
