%% A bencherl handler for bench/ci_gate.sh: a fixed amount of list building and hashing, made
%% N % longer by the environment variable CI_GATE_SLOWDOWN=N (the nodes under test inherit
%% beamscale's environment). The work is made of equal rounds, so N % more rounds is N % more
%% time: the known slowdown the gate has to catch.
-module(ci_work).
-export([bench_args/2, run/3]).

%% Rounds for `short' (about 60 ms on one scheduler of the shared 2-core host).
-define(ROUNDS, 600).
%% Elements per round: small enough that each round's list stays in the young heap.
-define(ROUND_LENGTH, 5000).

bench_args(Version, _Conf) ->
    Factor = case Version of short -> 1; intermediate -> 10; long -> 100 end,
    [[{rounds, ?ROUNDS * Factor}]].

run([{rounds, Rounds}], _Slaves, _Conf) ->
    Slowdown = list_to_integer(os:getenv("CI_GATE_SLOWDOWN", "0")),
    Total = Rounds * (100 + Slowdown) div 100,
    Sum = lists:foldl(fun(_, Acc) -> Acc + round_of_work() end, 0, lists:seq(1, Total)),
    io:format("~b rounds, ~b~n", [Total, Sum]),
    ok.

round_of_work() ->
    lists:foldl(fun(X, Acc) -> (Acc + erlang:phash2(X)) band 16#FFFFFF end, 0,
                lists:seq(1, ?ROUND_LENGTH)).
