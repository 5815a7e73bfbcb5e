# beamscale: `make run` runs the default study and writes its report; `make test` runs every test.
# rebar3, or the one `scripts/install-deps.sh run' unpacked (looked up when used: after deps).
REBAR ?= $(or $(shell command -v rebar3),$(HOME)/.cache/beamscale/rebar3/usr/bin/rebar3)
RUN_NAME ?= default
RUN_OUT ?= runs
# One fresh emulator per environment keeps `make run' on a fresh machine near a minute; the
# full study (3 launches, as the embedded default) is `./beamscale run' (printed at the end).
RUN_FLAGS ?= --launches 1

.PHONY: all deps test-deps build run test eunit ct dialyzer xref clean otp-test-release \
	options-doc

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
	@# background, and CT's stream 2 (scripts/ct-streams.sh: the suites that do not measure)
	@# runs, beside xref and EUnit; then stream 1 beside dialyzer (one core; its first run
	@# on a fresh machine builds the PLT: 11 min, the longest step before stream 1 when it
	@# ran first). Each in its own session, so a failed step or Ctrl-C stops them by their
	@# process groups.
	@mkdir -p _build; \
	setsid sh -c "$(otp_test_release)" > _build/otp-test-release.log 2>&1 & otp=$$!; \
	$(ct_stream2_start); dia=; \
	trap 'kill -- -$$otp 2>/dev/null; [ -z "$$dia" ] || kill -- -$$dia 2>/dev/null; \
	  $(ct_stream2_stop)' EXIT; \
	trap 'exit 130' INT TERM; \
	echo "make otp-test-release and CT stream 2 in the background: _build/otp-test-release.log,"\
	  "$(ct_log2)"; \
	$(REBAR) xref && $(REBAR) eunit || exit 1; \
	setsid $(REBAR) dialyzer > $(dialyzer_log) 2>&1 & dia=$$!; \
	echo "dialyzer in the background: $(dialyzer_log)"; \
	echo "waiting for make otp-test-release"; \
	wait $$otp || { cat _build/otp-test-release.log; exit 1; }; \
	$(ct_stream1_then_wait); ct=$$?; \
	trap '[ -z "$$dia" ] || kill -- -$$dia 2>/dev/null' EXIT; \
	echo "waiting for dialyzer"; wait $$dia; d=$$?; dia=; \
	if [ $$d = 0 ]; then tail -n 1 $(dialyzer_log); else cat $(dialyzer_log); fi; \
	echo "dialyzer: exit $$d"; [ $$ct = 0 ] && [ $$d = 0 ]
	@echo "make test: all checks passed"

# One EUnit module or several: `make eunit MODULE=m1,m2' (all of them without MODULE).
eunit: test-deps
	$(REBAR) eunit $(if $(MODULE),--module=$(MODULE))

# One suite: `make ct SUITE=beamscale_load_errors_SUITE [CASE=c1,c2]' (the _SUITE suffix may be
# left out; a path works too). Without SUITE, every suite, in make test's two streams at once.
ct: test-deps
	$(REBAR) escriptize
	$(if $(SUITE),$(if $(findstring otp,$(SUITE)),$(MAKE) otp-test-release),$(MAKE) otp-test-release)
	$(if $(SUITE),$(REBAR) ct --suite=$(call suite_path,$(SUITE)) $(if $(CASE),--case=$(CASE)),\
	  $(ct_stream2_start); trap '$(ct_stream2_stop)' EXIT; trap 'exit 130' INT TERM; \
	  $(ct_stream1_then_wait))

# The second emulator beamscale_otp_SUITE runs on: OTP 25's interpreter, only its emulator built
# from bookworm's source (docs/otp.md), once per machine (cached under ~/.cache/beamscale/otp);
# `make ct SUITE=x' builds it only for the otp suite.
otp-test-release:
	@$(otp_test_release)
otp_test_release = ./beamscale otp list | grep -q '^25-emu ' || nice ./beamscale otp install 25-emu

# docs/options.md's table, rendered from the commands' option declarations
# (beamscale_cli_doc; beamscale_docs_options_tests fails until it is written again).
options-doc: build
	erl -noshell -pa _build/default/lib/*/ebin \
	  -eval 'ok = beamscale_cli_doc:write("docs/options.md"), halt().'

dialyzer: deps
	$(REBAR) dialyzer

xref: deps
	$(REBAR) xref

# A suite's name (with or without _SUITE, or a path) to its path under apps/*/test, without
# `.erl', as rebar3 ct takes it.
suite_name = $(patsubst %_SUITE,%,$(basename $(notdir $(1))))_SUITE
suite_path = $(basename $(or $(firstword $(wildcard apps/*/test/$(call suite_name,$(1)).erl)),\
                             $(error make ct: no suite $(call suite_name,$(1)) under apps/*/test)))

# CT in two streams (scripts/ct-streams.sh): stream 2 in the background, in a session of its own
# (its pid in ct2: the caller's trap stops its process group), its output in a file printed at
# its end; stream 1 in the foreground. A failure in one lets the other end: one run names all.
ct_log2 = _build/ct-stream2.log
dialyzer_log = _build/dialyzer.log
ct_stream2_start = mkdir -p _build; \
	REBAR="$(REBAR)" setsid scripts/ct-streams.sh 2 > $(ct_log2) 2>&1 & ct2=$$!
# Stream 2 stopped early (Ctrl-C, a failed step): SIGTERM to its script, which has CT abort
# the running case and skip the rest, so that end_per_suite stops the suite's servers by pid (a
# port's program runs in a session of its own: a signal to the group never reaches it); what is
# left of the group after 30 s is killed.
ct_stop_s = 30
ct_stream2_stop = kill $$ct2 2>/dev/null && { echo "stopping CT stream 2 (end_per_suite)"; \
	i=0; while kill -0 -- -$$ct2 2>/dev/null && [ $$i -lt $(ct_stop_s) ]; do \
	sleep 1; i=$$((i + 1)); done; kill -KILL -- -$$ct2 2>/dev/null; }; true
# Stream 1 runs beside stream 2: its measuring cases hold beside it (the squeeze's serial server
# does 1 ms a call; hostwatch counts its own nginx by pid), and one after the other took 25 min.
# A failed stream's cases and reasons come last (scripts/ct-failures.sh): a CI log shows a tail.
ct_stream1_then_wait = REBAR="$(REBAR)" scripts/ct-streams.sh 1; one=$$?; \
	echo "waiting for CT stream 2"; wait $$ct2; two=$$?; trap - EXIT; \
	if [ $$two = 0 ]; then tail -n 3 $(ct_log2); else cat $(ct_log2); fi; \
	echo "CT stream 1: exit $$one, stream 2: exit $$two"; \
	[ $$one = 0 ] || scripts/ct-failures.sh _build/test/logs; \
	[ $$two = 0 ] || scripts/ct-failures.sh _build/ct2+test/logs; [ $$one = 0 ] && [ $$two = 0 ]

clean:
	rm -rf _build
