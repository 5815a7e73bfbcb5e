%% A handler written as for bencherl: bench_args/2 reads number_of_cores, run/3 uses the
%% multi-phase protocol (an untimed set-up call, then two timed phases) and the slave nodes.
-module(bencherl_style).
-export([bench_args/2, run/3]).

bench_args(Vrsn, Conf) ->
    {_, Cores} = lists:keyfind(number_of_cores, 1, Conf),
    Base = case Vrsn of short -> 1000; intermediate -> 10000; long -> 100000 end,
    [[Base * Cores]].

run([N], Slaves, _Conf) ->
    {{continue, ignore}, {lists:seq(1, N), Slaves}};
run([{List, Slaves}, _N], Slaves, _Conf) ->
    {{continue, sum}, lists:sum(List)};
run([Sum, _State, N], Slaves, Conf) ->
    {_, Master} = lists:keyfind(master, 1, Conf),
    Master = node(),
    Pongs = [net_adm:ping(S) || S <- Slaves],
    io:format("sum ~p of ~p, ~p pongs~n", [Sum, N, length([P || P <- Pongs, P =:= pong])]),
    {{done, report}, ok}.
