-module(beamscale_stats_levels_tests).
-include_lib("eunit/include/eunit.hrl").

base() ->
    #{stopped => done, started => 100, done => 100, requests => 100, errors => 0,
      started_per_s => 10.0, achieved_per_s => 9.5}.

held_test_() ->
    B = base(),
    [?_assertEqual({true, ok}, beamscale_stats_levels:held(B)),
     ?_assertEqual({false, no_sessions}, beamscale_stats_levels:held(B#{started := 0, done := 0})),
     ?_assertEqual({false, unfinished}, beamscale_stats_levels:held(B#{stopped := time_limit})),
     ?_assertEqual({false, unfinished}, beamscale_stats_levels:held(B#{done := 99})),
     %% 1 % of the requests may fail; 2 % may not.
     ?_assertEqual({true, ok}, beamscale_stats_levels:held(B#{errors := 1})),
     ?_assertEqual({false, errors}, beamscale_stats_levels:held(B#{errors := 2})),
     %% Finishing at 80 % of the start rate is enough, below it is not.
     ?_assertEqual({true, ok}, beamscale_stats_levels:held(B#{achieved_per_s := 8.0})),
     ?_assertEqual({false, slow}, beamscale_stats_levels:held(B#{achieved_per_s := 7.9}))].

hist(Micros) ->
    H = beamscale_stats_hist:new(),
    [beamscale_stats_hist:record(H, M) || M <- Micros],
    beamscale_stats_hist:take(H).

cell() -> #{target => "mnesia", op => "write", config => "smp_1", level => 2}.

row_test() ->
    Total = #{sessions_started => 20, sessions_done => 20, requests => 20, errors => 0,
              session => hist([10000, 20000, 30000]), latency => hist([10000, 20000, 30000])},
    Run = #{total => Total, duration_s => 4.0, stopped => done},
    Samples = #{os_cpu_all_pct => 12.5, util_pct => 40.0, busy_wait_all_pct => -1.25,
                host_cpu_pct => undefined},
    Row = maps:from_list(lists:zip(beamscale_stats_levels:columns(),
                                   beamscale_stats_levels:row(cell(), level(), Run, Samples))),
    ?assertMatch(#{target := "mnesia", level := 2, offered_per_s := 5.0, started := 20,
                   achieved_per_s := 5.0, held := true, why := ok, cpu_pct := 12.5,
                   util_pct := 40.0, busy_wait_pct := -1.25, host_cpu_pct := <<>>}, Row),
    ?assert(abs(maps:get(mean_session_ms, Row) - 20.0) < 0.5),
    ?assert(maps:get(p99_session_ms, Row) >= 29.0).

%% Sessions that finish only long after the hold: achieved falls below the start rate.
row_slow_test() ->
    Total = #{sessions_started => 20, sessions_done => 20, requests => 20, errors => 0,
              session => hist([2000000]), latency => hist([2000000])},
    Row = beamscale_stats_levels:row(cell(), level(),
                                   #{total => Total, duration_s => 8.0, stopped => done},
                                   undefined),
    M = maps:from_list(lists:zip(beamscale_stats_levels:columns(), Row)),
    ?assertMatch(#{held := false, why := slow, cpu_pct := <<>>}, M).

skipped_test() ->
    Row = beamscale_stats_levels:skipped(cell(), {level(), below_not_held}),
    M = maps:from_list(lists:zip(beamscale_stats_levels:columns(), Row)),
    ?assertMatch(#{held := false, why := below_not_held, mean_session_ms := <<>>}, M),
    ?assertNot(beamscale_stats_levels:is_held(#{held => <<"false">>})),
    ?assert(beamscale_stats_levels:is_held(#{held => <<"true">>})).

level() -> #{rate => 5, hold_s => 4, ops => 100}.

%% A cell's capacity row: the bracket, why the level at its high end was not held, the levels
%% run.
capacity_row_test() ->
    Cell = #{target => "mnesia", op => "write", config => "smp_1"},
    ?assertEqual(["mnesia", "write", "smp_1", 20.0, 20.0, 40.0, slow, converged, 3],
                 beamscale_stats_levels:capacity_row(Cell, #{low => 20.0, high => 40.0,
                                                             why => converged},
                                                     [{10.0, true, ok}, {40.0, false, slow},
                                                      {20.0, true, ok}])),
    ?assertMatch([_, _, _, <<>>, <<>>, 10.0, unfinished, below_start, 1],
                 beamscale_stats_levels:capacity_row(Cell, #{low => none, high => 10.0,
                                                             why => below_start},
                                                     [{10.0, false, unfinished}])),
    %% The climb overshot to 40; the edge is at 30, where the level was slow.
    ?assertMatch([_, _, _, 20.0, 20.0, 30.0, slow, converged, 4],
                 beamscale_stats_levels:capacity_row(Cell, #{low => 20.0, high => 30.0,
                                                             why => converged},
                                                     [{10.0, true, ok}, {40.0, false, errors},
                                                      {20.0, true, ok}, {30.0, false, slow}])),
    %% Levels of another search (no level at the high end): the first one not held.
    ?assertMatch([_, _, _, _, _, _, errors, budget, 2],
                 beamscale_stats_levels:capacity_row(Cell, #{low => 20.0, high => 25.0,
                                                             why => budget},
                                                     [{40.0, false, errors},
                                                      {30.0, false, slow}])).
