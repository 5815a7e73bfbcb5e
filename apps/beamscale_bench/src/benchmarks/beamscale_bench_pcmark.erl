%% @doc pcmark: five ETS tables of different kinds, filled with counters, read and updated by a
%% stream of processes: a number of them run at a time and each one that ends is replaced by a
%% fresh one until the total has run.
-module(beamscale_bench_pcmark).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0, tables/0]).

%% Counters per table.
-define(KEYS, 100).

%% @doc `[Initial, Total]': processes at a time and in all, scaled with the logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    {Initial, Total} = beamscale_bench_util:sized(Version, {{8, 300}, {32, 4000}, {64, 40000}}),
    Cores = beamscale_bench_util:cores(Conf),
    [[Initial * Cores, Total * Cores]].

%% @doc Prints, per table, the sum of its counters: process `P' adds `P rem 7 + 1' to each.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Initial, Total | _], _Peers, _Conf) ->
    Tabs = [ets:new(?MODULE, [public | Opts]) || Opts <- tables()],
    _ = [ets:insert(T, [{K, 0} || K <- lists:seq(1, ?KEYS)]) || T <- Tabs],
    Started = start(1, min(Initial, Total), Tabs),
    stream(Started, Total, Tabs, Started),
    Sums = [lists:sum([V || {_, V} <- ets:tab2list(T)]) || T <- Tabs],
    _ = [ets:delete(T) || T <- Tabs],
    io:format("pcmark: ~b processes, counter sums ~w~n", [Total, Sums]).

-spec description() -> string().
description() -> "a stream of processes reading and updating five ETS tables (ETS, spawning)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

%% @doc The options of the five tables.
-spec tables() -> [[atom() | {atom(), boolean()}]].
tables() ->
    [[set], [set, {read_concurrency, true}], [set, {write_concurrency, true}], [ordered_set],
     [ordered_set, {write_concurrency, true}]].

%% Processes First .. Last; how many were started.
start(First, Last, Tabs) ->
    Parent = self(),
    _ = [spawn_link(fun() -> work(P, Tabs), Parent ! done end) || P <- lists:seq(First, Last)],
    Last - First + 1.

%% Each process that ends makes room for the next, until all `Total' have run and ended.
stream(Started, Total, Tabs, Running) when Running > 0 ->
    receive done -> ok end,
    case Started < Total of
        true -> stream(Started + start(Started + 1, Started + 1, Tabs), Total, Tabs, Running);
        false -> stream(Started, Total, Tabs, Running - 1)
    end;
stream(_Started, _Total, _Tabs, 0) -> ok.

%% Read every table whole, then add to each of its counters.
work(P, Tabs) ->
    Step = P rem 7 + 1,
    lists:foreach(fun(T) ->
                          _ = ets:tab2list(T),
                          _ = [ets:update_counter(T, K, Step) || K <- lists:seq(1, ?KEYS)]
                  end, Tabs).
