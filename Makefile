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
