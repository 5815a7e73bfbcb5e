%% @doc ran: processes each draw 10000 random integers, sort them and send the first half to the
%% parent. Each process seeds its own generator from its number, so the result is the same in
%% every environment.
-module(beamscale_bench_ran).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0, draw/2]).

%% Integers per process, as in bencherl.
-define(DRAWS, 10000).
%% They are drawn from 1 .. RANGE.
-define(RANGE, 1000000).

%% @doc `[Processes, Draws]', processes scaled with the logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    PerCore = beamscale_bench_util:sized(Version, {16, 128, 2048}),
    [[PerCore * beamscale_bench_util:cores(Conf), ?DRAWS]].

%% @doc Prints the integers received and their sum.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Procs, Draws | _], _Peers, _Conf) ->
    Halves = beamscale_bench_util:fork_join(
               [fun() -> lists:sublist(lists:sort(draw(I, Draws)), Draws div 2) end
                || I <- lists:seq(1, Procs)]),
    io:format("ran: ~b integers, sum ~b~n",
              [lists:sum([length(H) || H <- Halves]), lists:sum([lists:sum(H) || H <- Halves])]).

-spec description() -> string().
description() -> "processes drawing and sorting random integers (CPU, memory, garbage collection)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

%% @doc The `N' integers process `I' draws.
-spec draw(pos_integer(), non_neg_integer()) -> [pos_integer()].
draw(I, N) ->
    draw(N, rand:seed_s(exsss, {I, 7919, 104729}), []).

draw(0, _State, Acc) -> Acc;
draw(N, State, Acc) ->
    {X, State1} = rand:uniform_s(?RANGE, State),
    draw(N - 1, State1, [X | Acc]).
