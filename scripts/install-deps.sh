#!/bin/sh
# Installs the Debian packages beamscale needs, only those missing. Needs root (apt-get);
# otherwise names the packages to install.
set -e
# One package a line.
packages="
rebar3
erlang-common-test
erlang-dialyzer
erlang-eunit
erlang-proper
erlang-proper-dev
erlang-tools
erlang-dev
erlang-crypto
erlang-p1-mysql
erlang-xmerl
mariadb-server
chromium
openssh-client
openssh-server
nginx
websocketd
postgresql
tsung
wrk
elixir
"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "beamscale needs these Debian packages: $missing" >&2
    echo "install them with: sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "installing:$missing"
apt-get update -q
# The tests start their own mariadbd, sshd, nginx, PostgreSQL and websocketd (throwaway data, loopback, stopped by pid): the
# packages' system services are not started (policy-rc.d, for this install only).
policy=/usr/sbin/policy-rc.d
status=0
if [ ! -e "$policy" ]; then
    trap 'rm -f "$policy"' EXIT INT TERM
    printf '#!/bin/sh\nexit 101\n' > "$policy"
    chmod +x "$policy"
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing || status=$?
exit "$status"
