%% The file-limit check: the limit read from /proc, the users in flight estimated from the
%% phases, the sockets a user holds, and the load nodes a run needs.
-module(beamscale_loadtest_files_tests).

-include_lib("eunit/include/eunit.hrl").

-define(LIMITS, <<"Limit                     Soft Limit           Hard Limit           Units\n"
                  "Max cpu time              unlimited            unlimited            seconds\n"
                  "Max open files            20000                20000                files\n">>).

scenario(Phases, Steps) ->
    #{phases => [maps:merge(#{name => p, max_users => infinity}, P) || P <- Phases],
      sessions => [#{name => s, weight => 1, steps => Steps}]}.

http() -> {request, beamscale_load_http, web, #{}, 5000}.

parse_limits_test_() ->
    [?_assertEqual({ok, 20000}, beamscale_loadtest_files:parse_limits(?LIMITS)),
     ?_assertEqual({ok, infinity},
                   beamscale_loadtest_files:parse_limits(<<"Max open files  unlimited  unlimited  "
                                                       "files\n">>)),
     ?_assertMatch({error, _}, beamscale_loadtest_files:parse_limits(<<"nothing\n">>)),
     %% This machine's own file has the line.
     ?_assertMatch({ok, _}, beamscale_loadtest_files:limit(node()))].

peak_users_test_() ->
    Think = fun(S) -> [http(), {think, {constant, S * 1000}}, http()] end,
    [%% 100/s for 10 s, each staying 5 s: 500 at once.
     ?_assertEqual(500, beamscale_loadtest_files:peak_users(
                          scenario([#{duration_s => 10, rate => 100.0}], Think(5)))),
     %% Staying longer than the phase: everyone who arrived.
     ?_assertEqual(1000, beamscale_loadtest_files:peak_users(
                           scenario([#{duration_s => 10, rate => 100.0}], Think(60)))),
     %% max_users stops the arrivals.
     ?_assertEqual(300, beamscale_loadtest_files:peak_users(
                          scenario([#{duration_s => 10, rate => 100.0, max_users => 300}],
                                   Think(60)))),
     %% Two phases overlap while users of the first stay.
     ?_assertEqual(1500, beamscale_loadtest_files:peak_users(
                           scenario([#{duration_s => 10, rate => 100.0},
                                     #{duration_s => 10, rate => 50.0}], Think(60)))),
     %% Two scenarios side by side, each from its start: 100/s x 10 s, 50/s x 10 s from 5 s,
     %% each user staying 5 s: 500 + 250 at once from 10 s.
     ?_assertEqual(750, beamscale_loadtest_files:peak_users(
                          scenario([#{duration_s => 10, rate => 100.0, start_s => 0},
                                    #{duration_s => 10, rate => 50.0, start_s => 5}], Think(5)))),
     %% Loops multiply their think times.
     ?_assertEqual(1000, beamscale_loadtest_files:peak_users(
                           scenario([#{duration_s => 100, rate => 100.0}],
                                    [{loop, 10, [http(), {think, {constant, 1000}}]}]))),
     %% No think time: no estimate of users held.
     ?_assertEqual(0, beamscale_loadtest_files:peak_users(
                        scenario([#{duration_s => 10, rate => 100.0}], [http()])))].

sockets_test_() ->
    Rpc = {request, beamscale_load_rpc, sut, #{}, 5000},
    Tcp = {request, beamscale_load_tcp, echo, #{}, 5000},
    S = fun(Steps) -> beamscale_loadtest_files:sockets_per_user(scenario([], Steps)) end,
    [?_assertEqual(0, S([Rpc, {think, 1}])),
     ?_assertEqual(1, S([http(), http(), {loop, 2, [http()]}])),
     ?_assertEqual(2, S([http(), {transaction, t, [{loop, 3, [Tcp]}]}])),
     ?_assertEqual(1, S([{dyn, #{}, http()}]))].

check_test_() ->
    Sc = scenario([#{duration_s => 10, rate => 5000.0, max_users => 30000}],
                  [http(), {think, {constant, 60000}}]),
    [?_assertMatch({error, {beamscale_loadtest_files, {too_many, #{users := 30000, needed := 2,
                                                              limit := 20000}}}},
                   beamscale_loadtest_files:check(Sc, [{20000, 1}], 0)),
     ?_assertEqual(ok, beamscale_loadtest_files:check(Sc, [{20000, 1}, {20000, 1}], 2)),
     ?_assertMatch({error, {_, {too_many, #{needed := 4}}}},
                   beamscale_loadtest_files:check(Sc, [{10000, 1}, {10000, 1}], 2)),
     ?_assertEqual(ok, beamscale_loadtest_files:check(Sc, [{infinity, 1}], 0)),
     ?_assertMatch("about 30000 users in flight" ++ _,
                   lists:flatten(beamscale_loadtest_files:format_error(
                                   element(2, element(2, beamscale_loadtest_files:check(
                                                            Sc, [{20000, 1}], 0))))))].

%% Load nodes weighted 3 and 1 (hosts' weight): the heavier holds 3/4 of the 30 000 users, which
%% passes its limit although an even split would not; each node against its own limit.
check_weights_test_() ->
    Sc = scenario([#{duration_s => 10, rate => 5000.0, max_users => 30000}],
                  [http(), {think, {constant, 60000}}]),
    Check = fun(Holders) -> beamscale_loadtest_files:check(Sc, Holders, length(Holders)) end,
    {error, Heavy} = Check([{20000, 3}, {20000, 1}]),
    [?_assertMatch({beamscale_loadtest_files, {too_many, #{per_node := 22500, limit := 20000,
                                                       share := 0.75}}}, Heavy),
     ?_assertMatch("about 30000 users in flight at once (max_users and think times), 1 socket "
                   "each: 22500 open files in the busiest of 2 load nodes (its share of the "
                   "arrivals 75.0 %, by weight), above" ++ _,
                   lists:flatten(beamscale_loadtest_files:format_error(Heavy))),
     %% The heavy node with room enough, the light one's 7 500 under its smaller limit.
     ?_assertEqual(ok, Check([{30000, 3}, {10000, 1}])),
     %% The light node is the one over: named with its own figures.
     ?_assertMatch({error, {_, {too_many, #{per_node := 7500, limit := 5000, share := 0.25}}}},
                   Check([{30000, 3}, {5000, 1}])),
     %% A host's weight 2 split over its 2 nodes, beside a host of weight 2 and 1 node.
     ?_assertMatch({error, {_, {too_many, #{per_node := 15000, share := 0.5}}}},
                   Check([{20000, 1}, {20000, 1}, {14000, 2}]))].

emfile_line_test_() ->
    [?_assertEqual(none, beamscale_loadtest_files:emfile_line(#{<<"timeout">> => 3}, 20000)),
     ?_assertMatch("7 connects failed with emfile: a process may hold 20000 open files" ++ _,
                   lists:flatten(beamscale_loadtest_files:emfile_line(
                                   #{<<"connect: emfile (too many open files)">> => 7,
                                     <<"timeout">> => 1}, 20000)))].

memory_test() ->
    ?assertMatch(#{bytes_per_user := 2000.0, marginal_bytes_per_user := 1500.0},
                 beamscale_loadtest_memory:summary(1000, 2000000, 500000)),
    ?assert(beamscale_loadtest_memory:vm_rss(os:getpid()) > 1000000),
    ?assertEqual(0, beamscale_loadtest_memory:vm_rss("0")).
