%% @doc ets_test: readers and writers share one public ETS table; writers insert, readers look up.
-module(beamscale_bench_ets_test).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).

%% @doc `[Readers, Writers, OperationsEach]', workers scaled with the logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    Cores = proplists:get_value(number_of_cores, Conf, 1),
    Ops = case Version of
              short -> 20000;
              intermediate -> 200000;
              long -> 1000000
          end,
    [[4 * Cores, Cores, Ops]].

%% @doc Prints the final table size: every writer inserts its own `Ops' keys.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Readers, Writers, Ops | _], _Peers, _Conf) ->
    Tab = ets:new(?MODULE, [set, public, {read_concurrency, true}, {write_concurrency, true}]),
    Parent = self(),
    Work = [fun() -> write(Tab, W, Ops) end || W <- lists:seq(1, Writers)]
        ++ [fun() -> read(Tab, R, Ops, Writers) end || R <- lists:seq(1, Readers)],
    Pids = [spawn_link(fun() -> F(), Parent ! {done, self()} end) || F <- Work],
    [receive {done, P} -> ok end || P <- Pids],
    io:format("~p~n", [ets:info(Tab, size)]),
    ets:delete(Tab),
    ok.

-spec description() -> string().
description() -> "concurrent ETS lookups and inserts on one public table (ETS, locks)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

write(_Tab, _W, 0) -> ok;
write(Tab, W, I) -> ets:insert(Tab, {{W, I}, I}), write(Tab, W, I - 1).

%% Readers walk the key space of all writers; a miss is as much work as a hit.
read(_Tab, _R, 0, _Writers) -> ok;
read(Tab, R, I, Writers) ->
    _ = ets:lookup(Tab, {(R + I) rem Writers + 1, I}),
    read(Tab, R, I - 1, Writers).
