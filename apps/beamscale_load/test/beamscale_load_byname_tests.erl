%% Figures by request name from many users at once (`beamscale_load_byname'): each name's array
%% made once however many users race to make it, no count lost, takes that add up.
-module(beamscale_load_byname_tests).
-include_lib("eunit/include/eunit.hrl").

-define(USERS, 8).
-define(EACH, 500).

racing_users_test() ->
    M = beamscale_load_metrics:new([]),
    Me = self(),
    Names = [<<"a">>, <<"b">>],
    Pids = [spawn_link(fun() ->
                               receive go -> ok end,
                               Name = lists:nth(1 + I rem 2, Names),
                               [user(M, Name, I) || _ <- lists:seq(1, ?EACH)],
                               Me ! {done, self()}
                       end) || I <- lists:seq(1, ?USERS)],
    [P ! go || P <- Pids],
    %% Takes while the users run: what lands meanwhile is in the next take.
    Takes = takes(M, Pids, []),
    ByName = lists:foldl(fun beamscale_load_byname:merge/2, #{}, Takes),
    ?assertEqual(lists:sort(Names), lists:sort(maps:keys(ByName))),
    [begin
         #{requests := R, errors := E, bytes_sent := S, latency := L} = maps:get(N, ByName),
         Half = ?USERS div 2 * ?EACH,
         ?assertEqual({N, Half, Half, 10 * Half, Half},
                      {N, R, E, S, beamscale_stats_hist:count(L)})
     end || N <- Names].

user(M, Name, I) ->
    ok = beamscale_load_metrics:start_request(M, Name),
    ok = beamscale_load_metrics:add(M, bytes_sent, 10),
    ok = beamscale_load_metrics:add(M, rows, 3),  % a database kind's count: not kept by name
    ok = beamscale_load_metrics:record(M, latency, erlang:convert_time_unit(I * 100, microsecond,
                                                                              native)),
    ok = beamscale_load_metrics:error(M, timeout),
    ok = beamscale_load_metrics:stop_request().

takes(M, [], Acc) -> [maps:get(by_name, beamscale_load_metrics:take(M)) | Acc];
takes(M, Pids, Acc) ->
    Acc1 = [maps:get(by_name, beamscale_load_metrics:take(M)) | Acc],
    receive {done, P} -> takes(M, lists:delete(P, Pids), Acc1)
    after 1 -> takes(M, Pids, Acc1)
    end.

%% The run's counter list says which counters are kept by name: each of them added during a
%% named request is in the name's figures, and no other counter is (a database's rows).
marked_counters_test() ->
    M = beamscale_load_metrics:new([]),
    ok = beamscale_load_metrics:start_request(M, <<"n">>),
    [ok = beamscale_load_metrics:add(M, K, 7) || K <- beamscale_load_metrics:counter_names()],
    ok = beamscale_load_metrics:stop_request(),
    #{<<"n">> := F} = maps:get(by_name, beamscale_load_metrics:take(M)),
    Kept = beamscale_format_load:by_name(),
    ?assertEqual(#{bytes_sent => 7, rows => none},
                 maps:with([bytes_sent, rows], maps:merge(#{rows => none}, F))),
    %% `requests' counts the start too.
    ?assertEqual(maps:from_list([{K, 7} || K <- Kept, K =/= requests] ++ [{requests, 8}]),
                 maps:without([latency], F)).
