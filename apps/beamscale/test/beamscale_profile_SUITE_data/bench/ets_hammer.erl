%% A contended ETS table: one `set' without write_concurrency, every online scheduler a worker
%% inserting into it (docs/profiles.md). Its lock is what grows with schedulers.
-module(ets_hammer).
-export([bench_args/2, run/3]).

bench_args(_Version, _Conf) -> [[40000]].

run([N], _Slaves, _Conf) ->
    T = ets:new(hammer, [set, public]),
    W = erlang:system_info(schedulers_online),
    Self = self(),
    Pids = [spawn_link(fun() -> insert(T, N, I), Self ! {done, self()} end)
            || I <- lists:seq(1, W)],
    [receive {done, P} -> ok end || P <- Pids],
    ets:delete(T),
    io:format("~b inserts~n", [N]),
    ok.

insert(_T, 0, _I) -> ok;
insert(T, K, I) ->
    true = ets:insert(T, {K rem 64, I}),
    insert(T, K - 1, I).
