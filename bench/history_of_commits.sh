#!/bin/bash
# A history of beamscale itself over a range of its own commits: each commit checked out in a
# temporary git worktree, built (rebar3 escriptize), a short run of BENCH on the CPU clock
# (LAUNCHES fresh emulators, ITERATIONS each), recorded with `history record --repo' (commit,
# date, branch from git), then `history show' and `history page' of the store, and `history
# check' on the newest. The recording is done by this checkout's ./beamscale, so that old
# commits without `history' can be measured too. Builds take minutes each on a shared host.
#   bench/history_of_commits.sh RANGE [STORE] [BENCH] [LAUNCHES] [ITERATIONS]
#   e.g. bench/history_of_commits.sh HEAD~3..HEAD /tmp/self-history big 3 3
set -euo pipefail
cd "$(dirname "$0")/.."
range=${1:?usage: bench/history_of_commits.sh RANGE [STORE] [BENCH] [LAUNCHES] [ITERATIONS]}
store=${2:-history-self}
bench=${3:-big}
launches=${4:-3}
iterations=${5:-3}
rebar=${REBAR:-$(command -v rebar3 || echo "$HOME/.cache/beamscale/rebar3/usr/bin/rebar3")}
./beamscale help >/dev/null   # this checkout's escript, built if needed
here=$PWD
work=$(mktemp -d /tmp/beamscale-self-history.XXXXXX)
cleanup() {
    for wt in "$work"/wt-*; do [ -d "$wt" ] && git worktree remove --force "$wt"; done
    rm -rf "$work"; }
trap cleanup EXIT
export ERL_AFLAGS="+sbwt none +sbwtdcpu none +sbwtdio none"
for commit in $(git rev-list --reverse "$range"); do
    wt=$work/wt-$commit
    git worktree add --detach --quiet "$wt" "$commit"
    (cd "$wt" && "$rebar" escriptize >"$work/build-$commit.log" 2>&1) || {
        echo "$commit: build failed ($work/build-$commit.log kept no longer); skipped"; continue; }
    (cd "$wt" && _build/default/bin/beamscale run --bench "$bench" --schedulers 1 \
        --iterations "$iterations" --launches "$launches" --warmups 1 --clock cpu \
        --no-sample --quiet --name "run-$commit" --out "$work/runs" >/dev/null)
    "$here/beamscale" history record "$work/runs/run-$commit" --store "$store" --repo "$wt"
    git worktree remove --force "$wt"
done
./beamscale history show --store "$store"
./beamscale history page --store "$store"
status=0
./beamscale history check --store "$store" || status=$?
exit "$status"
