%% @doc serialmsg: messages proxied through one dispatcher. Each generator sends its receiver a
%% number of messages of a given length, every one by way of the dispatcher.
-module(beamscale_bench_serialmsg).
-behaviour(beamscale_bench).

-export([bench_args/2, run/3, description/0, tags/0]).

%% @doc `[Receivers, MessagesEach, Length]', receivers (one generator each) scaled with the
%% logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    {PerCore, Messages, Length} =
        beamscale_bench_util:sized(Version, {{16, 500, 20}, {64, 2000, 50}, {128, 8000, 20}}),
    [[PerCore * beamscale_bench_util:cores(Conf), Messages, Length]].

%% @doc Prints the messages delivered and the sum of all their elements (message elements of
%% generator `I' are all `I rem 256').
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Receivers, Messages, Length | _], _Peers, _Conf) ->
    Parent = self(),
    Dispatcher = spawn_link(fun dispatch/0),
    Rs = [spawn_link(fun() -> Parent ! {self(), receive_all(Messages, 0, 0)} end)
          || _ <- lists:seq(1, Receivers)],
    Gs = [spawn_link(fun() -> receive go -> generate(Dispatcher, R, I, Messages, Length) end end)
          || {I, R} <- lists:zip(lists:seq(1, Receivers), Rs)],
    _ = [G ! go || G <- Gs],
    Results = [receive {R, Result} -> Result end || R <- Rs],
    unlink(Dispatcher),
    exit(Dispatcher, kill),
    io:format("serialmsg: ~b messages, element sum ~b~n",
              [lists:sum([C || {C, _} <- Results]), lists:sum([S || {_, S} <- Results])]).

-spec description() -> string().
description() -> "generators send receivers messages through one dispatcher (message proxying)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

dispatch() ->
    receive {to, R, Msg} -> R ! {msg, Msg} end,
    dispatch().

generate(_Dispatcher, _R, _I, 0, _Length) -> ok;
generate(Dispatcher, R, I, Left, Length) ->
    Dispatcher ! {to, R, lists:duplicate(Length, I rem 256)},
    generate(Dispatcher, R, I, Left - 1, Length).

receive_all(0, Count, Sum) -> {Count, Sum};
receive_all(Left, Count, Sum) ->
    receive {msg, Msg} -> receive_all(Left - 1, Count + 1, Sum + lists:sum(Msg)) end.
