#!/bin/bash
# How long does the README's path take a new user on a fresh Debian bookworm machine (#30: goal
# under 2 min 30 s, install included)? Makes that machine with debootstrap (minbase, plus what
# a user has who cloned the repository: git, make, ca-certificates) in a temporary directory,
# clones this repository's HEAD into it (committed files only), and times inside a chroot, in
# a PID namespace of its own (everything it starts ends with it; no service is started):
#   install  scripts/install-deps.sh run   (what `make run' runs first: apt-get from the mirror)
#   build    make build                    (rebar3 escriptize from nothing)
#   run      make run                      (the default study and its report)
# Their sum is `make run' on a fresh machine. Prints the three phases and the total, then
# removes the chroot (unmounting its /proc by path first). Needs root and the Debian mirror.
#   bench/fresh_machine_make_run.sh [MIRROR]     KEEP=1 keeps the chroot and prints its path;
#                                                RUN=0 stops after the build (no run phase)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mirror=${1:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "$0: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "$0: run scripts/install-deps.sh first" >&2; exit 2; }
work=$(mktemp -d /tmp/beamscale-fresh.XXXXXX)
root=$work/root
cleanup() {
    if mountpoint -q "$root/proc"; then umount "$root/proc"; fi
    if [ "${KEEP:-0}" = 1 ]; then echo "kept: $work"; else rm -rf --one-file-system "$work"; fi; }
trap cleanup EXIT
echo "debootstrap bookworm into $root (not timed: the fresh machine itself)"
t0=$(date +%s)
debootstrap --variant=minbase --include=git,make,ca-certificates bookworm "$root" "$mirror" \
    > "$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
echo "debootstrap: $(( $(date +%s) - t0 )) s"
git clone -q --no-hardlinks "$repo" "$root/root/beamscale"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"

# phase NAME COMMAND: runs COMMAND in the repository inside the chroot, in a new PID namespace
# (what it leaves running is killed when it ends), its output in $work/NAME.log; prints seconds.
phase() {
    local name=$1 start end
    shift
    start=$(date +%s.%N)
    if ! unshare --pid --fork chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            /bin/sh -c "cd /root/beamscale && $*" < /dev/null > "$work/$name.log" 2>&1; then
        echo "$name failed:" >&2; tail -n 30 "$work/$name.log" >&2; exit 1
    fi
    end=$(date +%s.%N)
    awk -v n="$name" -v s="$start" -v e="$end" 'BEGIN { printf "%-8s %6.1f s\n", n, e - s }'
}
{
    phase install scripts/install-deps.sh run
    phase build make build
    if [ "${RUN:-1}" != 0 ]; then phase run make run; fi
} | tee "$work/phases"
awk '{ t += $2 } END { printf "total    %6.1f s (goal 150 s)\n", t }' "$work/phases"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
