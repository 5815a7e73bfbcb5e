%% A bencherl handler kept outside the application: it calls the application's code, which the
%% node under test finds on its code path (--code-path).
-module(fibapp_bench).
-export([bench_args/2, run/3]).

bench_args(_Version, Conf) ->
    {_, Cores} = lists:keyfind(number_of_cores, 1, Conf),
    [[20, Cores]].

run([N, Workers], _Peers, _Conf) ->
    Self = self(),
    Pids = [spawn_link(fun() -> Self ! {self(), fibapp:fib(N)} end) || _ <- lists:seq(1, Workers)],
    Results = [receive {P, R} -> R end || P <- Pids],
    io:format("fib(~b) = ~b~n", [N, hd(lists:usort(Results))]).
