#!/bin/sh
# Releases side by side (docs/otp.md, docs/studies/ets.md): every benchmark of the quick preset
# on each release, then the ETS study at its short size, each printed as the page's "Releases
# compared" in Markdown (bench/otp_releases.escript). The releases must be installed
# (`beamscale otp install 27'); each run says so in one line otherwise.
#   bench/otp_releases.sh [RELEASES] [OUT]      (default: 25,27 into /tmp/beamscale-otp)
set -e
cd "$(dirname "$0")/.."
releases=${1:-25,27}
out=${2:-/tmp/beamscale-otp}
./beamscale otp list
time ./beamscale run --preset quick --otp "$releases" --name quick --out "$out"
escript bench/otp_releases.escript "$out/quick"
time ./beamscale study ets --otp "$releases" --version short --name ets --out "$out"
escript bench/otp_releases.escript "$out/ets" ets_bench
