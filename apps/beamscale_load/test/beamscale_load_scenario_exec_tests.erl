-module(beamscale_load_scenario_exec_tests).
-include_lib("eunit/include/eunit.hrl").

-define(X, beamscale_load_scenario_exec).

phase(P) ->
    try ?X:phase(main, P)
    catch throw:{bad, Path, Msg} -> {bad, Path, Msg}
    end.

checked_test() ->
    ?assertMatch(#{duration_s := 3, rate := 40.0, max_users := infinity,
                   executor := #{kind := constant_arrival_rate, max_in_flight := 5,
                                 start_rate := 40.0, stages := [{3.0, 40.0}]}},
                 phase(#{executor => constant_arrival_rate, rate => 40, duration_s => 3,
                         pre_allocated => 5})),
    #{duration_s := D, rate := Mean, executor := #{max_in_flight := 9}} =
        phase(#{executor => ramping_arrival_rate, start_rate => 0, pre_allocated => 2,
                max_users => 9, stages => [{4, 100}, {2, 100}]}),
    ?assertEqual(6.0, D),
    ?assert(abs(Mean - 400 / 6) < 1.0e-9),
    ?assertMatch(#{rate := 0.0, executor := #{kind := per_user_iterations, users := 4,
                                              iterations := 5}},
                 phase(#{executor => per_user_iterations, users => 4, iterations => 5,
                         duration_s => 10})),
    ?assertEqual([<<"offered_iterations">>, <<"dropped_iterations">>],
                 ?X:count_keys([phase(#{executor => constant_arrival_rate, rate => 1,
                                        duration_s => 1, pre_allocated => 1})])),
    ?assertMatch(#{duration_s := 4.0, executor := #{start_users := 2.0,
                                                    stages := [{3.0, 8.0}, {1.0, 8.0}]}},
                 phase(#{executor => ramping_users, start_users => 2,
                         stages => [{3, 8}, {1, 8}]})),
    ?assertMatch({bad, [stages], _}, phase(#{executor => ramping_users,
                                              stages => [{3, 2.5}]})),
    ?assertEqual([], ?X:count_keys([phase(#{executor => constant_users, users => 1,
                                            duration_s => 1})])),
    %% externally_controlled: max_users defaults to users; users may be 0 beside a max.
    ?assertMatch(#{duration_s := 30, rate := 0.0,
                   executor := #{kind := externally_controlled, users := 4,
                                 max_in_flight := 4}},
                 phase(#{executor => externally_controlled, users => 4, duration_s => 30})),
    ?assertMatch(#{executor := #{users := 0, max_in_flight := 50}},
                 phase(#{executor => externally_controlled, users => 0, max_users => 50,
                         duration_s => 30})).

refused_test_() ->
    [?_assertMatch({bad, [K], _}, phase(P))
     || {K, P} <- [{executor, #{executor => warp}},
                   {rate, #{executor => constant_arrival_rate, duration_s => 1,
                            pre_allocated => 1}},
                   {max_users, #{executor => constant_arrival_rate, rate => 1, duration_s => 1,
                                 pre_allocated => 5, max_users => 2}},
                   {users, #{executor => constant_users, users => 0, duration_s => 1}},
                   {iterations, #{executor => shared_iterations, users => 1, duration_s => 1}},
                   {stages, #{executor => ramping_arrival_rate, start_rate => 0,
                              pre_allocated => 1, stages => [{0, 5}]}},
                   {duration_s, #{executor => constant_users, users => 2}},
                   {max_users, #{executor => externally_controlled, users => 5,
                                 max_users => 4, duration_s => 1}},
                   {max_users, #{executor => externally_controlled, users => 0,
                                 duration_s => 1}},
                   {users, #{executor => externally_controlled, users => -1,
                             duration_s => 1}},
                   %% A key of another executor.
                   {users, #{executor => constant_arrival_rate, rate => 1, duration_s => 1,
                             pre_allocated => 1, users => 3}}]].
