%% @doc parallel: processes each take a list of strictly increasing timestamps and check it.
%% bencherl's version called `erlang:now/0', whose global lock was the bottleneck; the strictly
%% monotonic timestamp of today, `erlang:unique_integer([monotonic])', is one counter shared by
%% every scheduler.
-module(beamscale_bench_parallel).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).

%% @doc `[Processes, Timestamps]', processes scaled with the logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    {PerCore, Stamps} = beamscale_bench_util:sized(Version, {{32, 20000}, {128, 40000},
                                                             {256, 100000}}),
    [[PerCore * beamscale_bench_util:cores(Conf), Stamps]].

%% @doc Prints how many processes found their timestamps strictly increasing (all should).
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Procs, Stamps | _], _Peers, _Conf) ->
    Oks = beamscale_bench_util:fork_join([fun() -> stamps(Stamps) end
                                          || _ <- lists:seq(1, Procs)]),
    io:format("parallel: ~b processes, ~b with ~b strictly increasing timestamps~n",
              [Procs, length([ok || true <- Oks]), Stamps]).

-spec description() -> string().
description() -> "processes taking strictly monotonic timestamps (a shared counter, scheduling)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

stamps(N) ->
    increasing(lists:reverse(take(N, []))).

take(0, Acc) -> Acc;
take(N, Acc) -> take(N - 1, [erlang:unique_integer([monotonic]) | Acc]).

increasing([A, B | Rest]) when A < B -> increasing([B | Rest]);
increasing([_, _ | _]) -> false;
increasing(_) -> true.
