%% @doc bang: many-to-one message passing. Senders flood one receiver (the benchmark's own
%% process) with messages; the receiver takes them in whatever order they come.
-module(beamscale_bench_bang).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).

%% @doc `[Senders, MessagesEach]', senders scaled with the logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    {PerCore, Messages} = beamscale_bench_util:sized(Version, {{32, 400}, {128, 2000},
                                                               {1024, 5000}}),
    [[PerCore * beamscale_bench_util:cores(Conf), Messages]].

%% @doc Prints the messages received and the sum of `I * J' over message `J' of sender `I'.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Senders, Messages | _], _Peers, _Conf) ->
    Receiver = self(),
    Pids = [spawn_link(fun() -> receive go -> send(Receiver, I, 1, Messages) end end)
            || I <- lists:seq(1, Senders)],
    _ = [P ! go || P <- Pids],
    {Count, Sum} = collect(Senders * Messages, 0, 0),
    io:format("bang: ~b messages, checksum ~b~n", [Count, Sum]).

-spec description() -> string().
description() -> "many-to-one message passing: senders flood one receiver (message queues)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

send(_To, _I, J, Max) when J > Max -> ok;
send(To, I, J, Max) -> To ! {bang, I, J}, send(To, I, J + 1, Max).

collect(0, Count, Sum) -> {Count, Sum};
collect(Left, Count, Sum) ->
    receive {bang, I, J} -> collect(Left - 1, Count + 1, Sum + I * J) end.
