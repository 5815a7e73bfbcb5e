%% @doc ehb: hackbench in Erlang. Groups of 20 senders and 20 receivers; every sender sends each
%% receiver of its group the same number of messages, all groups at once.
-module(beamscale_bench_ehb).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).

%% hackbench's group: 20 senders and 20 receivers.
-define(GROUP, 20).
%% hackbench's messages carry 100 bytes.
-define(PAYLOAD, <<0:800>>).

%% @doc `[Groups, GroupSize, MessagesPerPair]', groups scaled with the logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    {PerCore, Loops} = beamscale_bench_util:sized(Version, {{2, 40}, {4, 400}, {16, 1500}}),
    [[PerCore * beamscale_bench_util:cores(Conf), ?GROUP, Loops]].

%% @doc Prints the messages received and the sum, over them, of the sender's number in its group.
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Groups, ?GROUP, Loops | _], _Peers, _Conf) ->
    Parent = self(),
    Receivers = [[spawn_link(fun() -> receiver(Parent, ?GROUP * Loops, 0) end)
                  || _ <- lists:seq(1, ?GROUP)] || _ <- lists:seq(1, Groups)],
    Senders = [spawn_link(fun() -> receive go -> sender(I, Rs, Loops) end end)
               || Rs <- Receivers, I <- lists:seq(1, ?GROUP)],
    _ = [S ! go || S <- Senders],
    Sums = [receive {done, R, Sum} -> Sum end || Rs <- Receivers, R <- Rs],
    io:format("ehb: ~b messages, checksum ~b~n",
              [Groups * ?GROUP * ?GROUP * Loops, lists:sum(Sums)]).

-spec description() -> string().
description() -> "hackbench: groups of senders and receivers exchanging messages (scheduling)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

sender(_I, _Receivers, 0) -> ok;
sender(I, Receivers, Loops) ->
    _ = [R ! {data, I, ?PAYLOAD} || R <- Receivers],
    sender(I, Receivers, Loops - 1).

receiver(Parent, 0, Sum) -> Parent ! {done, self(), Sum};
receiver(Parent, Left, Sum) ->
    receive {data, I, _} -> receiver(Parent, Left - 1, Sum + I) end.
