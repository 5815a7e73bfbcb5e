# beamscale: `make run` runs the default study and writes its report; `make test` runs every test.
REBAR ?= rebar3
RUN_NAME ?= default
RUN_OUT ?= runs

.PHONY: all deps build run test eunit ct dialyzer xref clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(REBAR) escriptize

run: build
	./beamscale run --name $(RUN_NAME) --out $(RUN_OUT)

# The test runners' emulators (rebar3's own, and a node a test starts without flags of its own)
# do not busy-wait. Beside one `yes' per core, spinning schedulers made `rebar3 eunit' take 432 s
# against 67 s without (quiet: 31 s). ERL_AFLAGS comes first on the command line, so explicit
# flags win, and the nodes beamscale measures empty it (beamscale_node).
test: export ERL_AFLAGS := +sbwt none +sbwtdcpu none +sbwtdio none $(ERL_AFLAGS)

test: deps
	$(REBAR) compile
	$(REBAR) escriptize  # the escript ./beamscale runs; CT drives it as a user does
	$(REBAR) xref
	$(REBAR) dialyzer
	$(REBAR) eunit
	$(REBAR) ct
	@echo "make test: all checks passed"

clean:
	rm -rf _build
