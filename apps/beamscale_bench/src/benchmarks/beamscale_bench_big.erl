%% @doc big: many-to-many message passing. Every process pings every other one and answers each
%% ping with a pong; the iteration ends when all processes have had all their answers.
-module(beamscale_bench_big).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).

%% @doc Processes per logical core for each size.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    Cores = proplists:get_value(number_of_cores, Conf, 1),
    PerCore = case Version of
                  short -> 64;
                  intermediate -> 256;
                  long -> 1024
              end,
    [[PerCore * Cores]].

%% @doc Prints the number of messages exchanged, 2 N (N - 1).
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([N | _], _Peers, _Conf) ->
    Parent = self(),
    Pids = [spawn_link(fun() -> member(Parent) end) || _ <- lists:seq(1, N)],
    _ = [P ! {peers, Pids} || P <- Pids],
    Counts = [receive {done, P, Sent} -> Sent end || P <- Pids],
    io:format("~p~n", [lists:sum(Counts)]).

-spec description() -> string().
description() ->
    "many-to-many message passing: every process pings all others (messages, scheduling)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

member(Parent) ->
    Peers = receive {peers, Ps} -> Ps -- [self()] end,
    Me = self(),
    _ = [P ! {ping, Me} || P <- Peers],
    N = length(Peers),
    exchange(N, N),
    Parent ! {done, self(), 2 * N}.

%% Wait for N pings to answer and N pongs to collect.
exchange(0, 0) -> ok;
exchange(Pings, Pongs) ->
    receive
        {ping, From} -> From ! pong, exchange(Pings - 1, Pongs);
        pong -> exchange(Pings, Pongs - 1)
    end.
