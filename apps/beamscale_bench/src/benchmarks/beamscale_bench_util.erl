%% @doc Small helpers the built-in benchmarks share: their size tables, the cores of the host and
%% a fork-join of processes. Not a benchmark itself (see `beamscale_bench').
-module(beamscale_bench_util).

-export([cores/1, sized/2, fork_join/1]).

%% @doc The host's logical cores from a `bench_args/2' configuration (1 when absent).
-spec cores(beamscale_bench:conf()) -> pos_integer().
cores(Conf) -> proplists:get_value(number_of_cores, Conf, 1).

%% @doc The element of `{Short, Intermediate, Long}' for a size.
-spec sized(beamscale_bench:version(), {T, T, T}) -> T.
sized(short, {S, _, _}) -> S;
sized(intermediate, {_, I, _}) -> I;
sized(long, {_, _, L}) -> L.

%% @doc Run each fun in its own linked process and return their results in the order of the funs.
%% A crash in one takes the caller down: the iteration fails with it.
-spec fork_join([fun(() -> T)]) -> [T].
fork_join(Funs) ->
    Parent = self(),
    Pids = [spawn_link(fun() -> Parent ! {self(), F()} end) || F <- Funs],
    [receive {P, Result} -> Result end || P <- Pids].
