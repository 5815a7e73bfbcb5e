%% Why beamscale's load node cannot be counted under Valgrind 3.19 with OTP 25's JIT (issue 54,
%% docs/load-measurements.md): a map of more than 32 keys (a HAMT) updated key by key, each
%% key read first, goes wrong under Valgrind (SIGSEGV, or a lookup answering another key's
%% value) and never natively. `t(update, 300)' shows it; the other shapes run clean there.
%%   erlc -o /tmp bench/valgrind/vg_hashmap.erl
%%   valgrind --tool=none --smc-check=all --trace-children=yes erl -pa /tmp -noshell \
%%       -eval 'vg_hashmap:t(update, 300), halt().'
-module(vg_hashmap).
-export([t/2]).

%% Runs `What' `N' times on a 60-key map; prints how many rounds gave a wrong map.
-spec t(update | fold_update | lookup | merge, pos_integer()) -> ok.
t(What, N) ->
    Keys = [{tx, I} || I <- lists:seq(1, 40)] ++ [list_to_atom("k" ++ integer_to_list(I))
                                                 || I <- lists:seq(1, 20)],
    M0 = maps:from_list([{K, 1} || K <- Keys]),
    Bad = length([R || R <- lists:seq(1, N), not round(What, Keys, M0, R)]),
    io:format("~p: ~b of ~b rounds wrong~n", [What, Bad, N]).

%% Each key read, then updated: the shape of beamscale_load_metrics:merge/2.
round(update, Keys, M0, R) ->
    M = lists:foldl(fun(K, Acc) -> Acc#{K => maps:get(K, Acc, 0) + R} end, M0, Keys),
    lists:all(fun(K) -> maps:get(K, M) =:= R + 1 end, Keys);
round(fold_update, Keys, M0, R) ->
    M = maps:fold(fun(K, V, Acc) -> Acc#{K => V + R} end, M0, M0),
    lists:all(fun(K) -> maps:get(K, M) =:= R + 1 end, Keys);
round(lookup, Keys, M0, _R) ->
    lists:all(fun(K) -> case M0 of #{K := 1} -> true; #{} -> false end end, Keys);
round(merge, Keys, M0, R) ->
    M = maps:merge(M0, maps:from_list([{K, R} || K <- Keys])),
    lists:all(fun(K) -> maps:get(K, M) =:= R end, Keys).
