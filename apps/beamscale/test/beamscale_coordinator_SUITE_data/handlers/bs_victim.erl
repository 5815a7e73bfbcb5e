%% A bencherl handler whose node is killed from outside: on its first call it leaves its node's
%% OS pid in the data directory and waits; later calls return at once.
-module(bs_victim).
-export([bench_args/2, run/3]).

bench_args(_Vrsn, _Conf) -> [[1]].

run([_ | _], _Slaves, Conf) ->
    {datadir, Dir} = lists:keyfind(datadir, 1, Conf),
    File = filename:join(Dir, "victim.pid"),
    case filelib:is_regular(File) of
        false ->
            ok = file:write_file(File, os:getpid()),
            timer:sleep(20000);
        true ->
            io:format("survived~n")
    end.
