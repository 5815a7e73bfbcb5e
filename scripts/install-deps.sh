#!/bin/sh
# Installs the Debian packages beamscale needs, only those missing. Needs root (apt-get);
# otherwise names the packages to install.
#   scripts/install-deps.sh run   what building and the default `make run' need (Erlang/OTP's
#                                 libraries and rebar3: `make run', `make build')
#   scripts/install-deps.sh       that and the real servers the tests start (`make test', `ct')
set -e
# One package a line. Building and running: OTP's libraries the code and the benchmarks call.
run_packages="
erlang-dialyzer
erlang-eunit
erlang-proper
erlang-proper-dev
erlang-tools
erlang-dev
erlang-crypto
erlang-p1-mysql
erlang-xmerl
erlang-eldap
erlang-snmp
erlang-mnesia
erlang-os-mon
erlang-inets
erlang-ssl
erlang-edoc
erlang-parsetools
"
# `bench --clock instructions': Valgrind counts where the CPU's counter is not exposed (a VM),
# gcc builds its small NIF on first use.
run_packages="$run_packages
valgrind
gcc
"
# rebar3, and Common Test for `rebar3 ct'. Debian's rebar3 depends on erlang-common-test, whose
# debugger and observer pull in wx, GTK 3, WebKit and Mesa: 233 of the 260 packages `run'
# installed on a fresh bookworm. So `run' unpacks rebar3's package (one escript) into
# $rebar3_dir instead, unless rebar3 is installed; the Makefile and ./beamscale look there too.
# What rebar3 itself loads without Common Test (inets, ssl, edoc, parsetools) is in run_packages.
tool_packages="
rebar3
erlang-common-test
"
rebar3_dir=$HOME/.cache/beamscale/rebar3
# The servers and clients the tests start or compare with (CONTRIBUTING.md says which suite
# needs which); the default run uses none of them.
test_packages="
mariadb-server
chromium
openssh-client
openssh-server
nginx
libnginx-mod-http-dav-ext
nghttp2-server
nghttp2-client
python3-grpcio
protobuf-compiler
websocketd
postgresql
tsung
wrk
linux-perf
elixir
mosquitto
ejabberd
rabbitmq-server
slapd
ldap-utils
munin-node
snmpd
prometheus
curl
debootstrap
"
# What `beamscale otp install' needs to build an OTP release from Debian's sources.
otp_packages="
dpkg-dev
build-essential
autoconf
libncurses-dev
libssl-dev
"
mode=${1:-test}
case "$mode" in
    # Without Recommends: they pulled in the `erlang' metapackage, wx, GTK, WebKit and Java (485
    # packages, 382 MB on a fresh bookworm); the OTP libraries used are listed above.
    run) packages="$run_packages"; recommends=--no-install-recommends ;;
    test) packages="$run_packages $tool_packages $test_packages $otp_packages" ;;
    *) echo "usage: $0 [run|test]" >&2; exit 2 ;;
esac
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing="$missing $p"
done
unpack=""
if [ "$mode" = run ] && ! command -v rebar3 >/dev/null && [ ! -x "$rebar3_dir/usr/bin/rebar3" ]
then
    unpack=rebar3
fi
[ -z "$missing$unpack" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    missing="$missing${unpack:+ rebar3}"
    echo "beamscale needs these Debian packages: $missing" >&2
    echo "install them with: sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "installing:$missing${unpack:+ (rebar3 unpacked into $rebar3_dir)}"
apt-get update -q
# The tests start their own mariadbd, sshd, nginx, PostgreSQL, websocketd, mosquitto, ejabberd,
# RabbitMQ, slapd, munin-node, snmpd and Prometheus
# (throwaway data, loopback, stopped by pid): the packages' system services are not started
# (policy-rc.d, for this install only).
policy=/usr/sbin/policy-rc.d
status=0
if [ ! -e "$policy" ]; then
    trap 'rm -f "$policy"' EXIT INT TERM
    printf '#!/bin/sh\nexit 101\n' > "$policy"
    chmod +x "$policy"
fi
if [ -n "$missing" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${recommends:-} $missing || status=$?
fi
if [ -n "$unpack" ] && [ "$status" = 0 ]; then
    deb=$(mktemp -d)
    chmod 755 "$deb"  # apt downloads as its user _apt
    mkdir -p "$rebar3_dir"
    (cd "$deb" && apt-get download -q rebar3) && dpkg-deb -x "$deb"/rebar3_*.deb "$rebar3_dir" \
        || status=$?
    rm -rf "$deb"
fi
exit "$status"
