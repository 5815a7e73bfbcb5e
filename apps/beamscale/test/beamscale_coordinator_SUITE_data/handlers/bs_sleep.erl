%% A bencherl handler that sleeps: slow enough for a run to be killed in the middle.
-module(bs_sleep).
-export([bench_args/2, run/3]).

bench_args(_Vrsn, _Conf) -> [[200]].

run([Ms | _], _Slaves, _Conf) ->
    timer:sleep(Ms),
    io:format("slept ~p~n", [Ms]).
