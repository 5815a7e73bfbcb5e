%% @doc timer_wheel: every process pings every other one and waits for the pongs, answering the
%% pings it gets meanwhile; with `wheel' each wait has a timeout (a timer set and cancelled per
%% message), with `no_wheel' it has none. A timeout is a failure: the process exits and takes
%% the iteration down, so a finished run has had no timeout.
-module(beamscale_bench_timer_wheel).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).

%% The wait of the `wheel' variant: long enough never to expire in a healthy run.
-define(WAIT_MS, 60000).

%% @doc `[Kind, Processes]' for `Kind' `wheel' and `no_wheel', processes scaled with the
%% logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    PerCore = beamscale_bench_util:sized(Version, {128, 512, 2048}),
    [[Kind, PerCore * beamscale_bench_util:cores(Conf)] || Kind <- [wheel, no_wheel]].

%% @doc Prints the pongs received: `N (N - 1)'.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Kind, N | _], _Peers, _Conf) ->
    Wait = case Kind of
               wheel -> ?WAIT_MS;
               no_wheel -> infinity
           end,
    Parent = self(),
    Pids = [spawn_link(fun() -> member(Parent, Wait) end) || _ <- lists:seq(1, N)],
    _ = [P ! {peers, Pids} || P <- Pids],
    Pongs = lists:sum([receive {done, P, Got} -> Got end || P <- Pids]),
    io:format("timer_wheel: ~b processes, ~b pongs, no timeouts~n", [N, Pongs]).

-spec description() -> string().
description() -> "ping-pong among all processes, waits with or without timeouts (timers)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

member(Parent, Wait) ->
    Peers = receive {peers, Ps} -> Ps -- [self()] end,
    Me = self(),
    _ = [P ! {ping, Me} || P <- Peers],
    N = length(Peers),
    Parent ! {done, self(), exchange(N, N, Wait, 0)}.

%% Answer N pings and collect N pongs; the pongs collected.
exchange(0, 0, _Wait, Got) -> Got;
exchange(Pings, Pongs, Wait, Got) ->
    receive
        {ping, From} -> From ! pong, exchange(Pings - 1, Pongs, Wait, Got);
        pong -> exchange(Pings, Pongs - 1, Wait, Got + 1)
    after Wait ->
        exit(timeout)
    end.
