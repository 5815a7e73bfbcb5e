# beamscale: `make run` runs the default study and writes its report; `make test` runs every test.
# rebar3, or the one `scripts/install-deps.sh run' unpacked (looked up when used: after deps).
REBAR ?= $(or $(shell command -v rebar3),$(HOME)/.cache/beamscale/rebar3/usr/bin/rebar3)
RUN_NAME ?= default
RUN_OUT ?= runs
# One fresh emulator per environment keeps `make run' on a fresh machine near a minute; the
# full study (3 launches, as the embedded default) is `./beamscale run' (printed at the end).
RUN_FLAGS ?= --launches 1

.PHONY: all deps test-deps build run test eunit ct dialyzer xref clean otp-test-release

all: build

# What building and the default run need (OTP's libraries, rebar3): `make run' on a fresh
# machine installs no test server (MariaDB, Chromium, PostgreSQL, nginx...).
deps:
	@scripts/install-deps.sh run

# That and the real servers the tests start.
test-deps:
	@scripts/install-deps.sh test

build: deps
	$(REBAR) escriptize

run: build
	./beamscale run --name $(RUN_NAME) --out $(RUN_OUT) $(RUN_FLAGS)
	@echo "make run: one launch per environment; the full study: ./beamscale run --launches 3"

# The test runners' emulators (rebar3's own, and a node a test starts without flags of its own)
# do not busy-wait. Beside one `yes' per core, spinning schedulers made `rebar3 eunit' take 432 s
# against 67 s without (quiet: 31 s). ERL_AFLAGS comes first on the command line, so explicit
# flags win, and the nodes beamscale measures empty it (beamscale_node).
test eunit ct: export ERL_AFLAGS := +sbwt none +sbwtdcpu none +sbwtdio none $(ERL_AFLAGS)

test: test-deps
	$(REBAR) compile
	$(REBAR) escriptize  # the escript ./beamscale runs; CT drives it as a user does
	@# beamscale_otp_SUITE's emulator (CPU-bound, 2.5 min when alone) builds niced in the
	@# background beside xref, dialyzer (one core) and EUnit; only CT waits for it. Its own
	@# session, so a failed step or Ctrl-C stops it by its process group.
	@mkdir -p _build; setsid sh -c "$(otp_test_release)" > _build/otp-test-release.log 2>&1 & \
	otp=$$!; trap 'kill -- -$$otp 2>/dev/null' EXIT; trap 'exit 130' INT TERM; \
	echo "make otp-test-release (in the background: _build/otp-test-release.log)"; \
	$(REBAR) xref && $(REBAR) dialyzer && $(REBAR) eunit || exit 1; \
	echo "waiting for make otp-test-release"; \
	wait $$otp || { cat _build/otp-test-release.log; exit 1; }
	$(REBAR) ct
	@echo "make test: all checks passed"

# One EUnit module or several: `make eunit MODULE=m1,m2' (all of them without MODULE).
eunit: test-deps
	$(REBAR) eunit $(if $(MODULE),--module=$(MODULE))

# One suite: `make ct SUITE=beamscale_load_errors_SUITE [CASE=c1,c2]' (the _SUITE suffix may be
# left out; a path works too). Without SUITE, every suite.
ct: test-deps
	$(REBAR) escriptize
	$(if $(SUITE),$(if $(findstring otp,$(SUITE)),$(MAKE) otp-test-release),$(MAKE) otp-test-release)
	$(REBAR) ct $(if $(SUITE),--suite=$(call suite_path,$(SUITE))) $(if $(CASE),--case=$(CASE))

# The second emulator beamscale_otp_SUITE runs on: OTP 25's interpreter, only its emulator built
# from bookworm's source (docs/otp.md), once per machine (cached under ~/.cache/beamscale/otp);
# `make ct SUITE=x' builds it only for the otp suite.
otp-test-release:
	@$(otp_test_release)
otp_test_release = ./beamscale otp list | grep -q '^25-emu ' || nice ./beamscale otp install 25-emu

dialyzer: deps
	$(REBAR) dialyzer

xref: deps
	$(REBAR) xref

# A suite's name (with or without _SUITE, or a path) to its path under apps/*/test, without
# `.erl', as rebar3 ct takes it.
suite_name = $(patsubst %_SUITE,%,$(basename $(notdir $(1))))_SUITE
suite_path = $(basename $(or $(firstword $(wildcard apps/*/test/$(call suite_name,$(1)).erl)),\
                             $(error make ct: no suite $(call suite_name,$(1)) under apps/*/test)))

clean:
	rm -rf _build
