%% The A/A noise floor: its value, and that a difference inside it is never called.
-module(beamscale_stats_floor_tests).
-include_lib("eunit/include/eunit.hrl").

side_test() ->
    ?assertEqual(undefined, beamscale_stats_floor:side([10])),
    ?assertEqual(undefined, beamscale_stats_floor:side([0, 10])),
    ?assert(abs(beamscale_stats_floor:side([100, 110, 104]) - 0.1) < 1.0e-9),
    ?assertEqual(undefined, beamscale_stats_floor:floor([1], [2])),
    ?assert(abs(beamscale_stats_floor:floor([100, 102], [100, 120]) - 0.2) < 1.0e-9).

beyond_test() ->
    ?assert(beamscale_stats_floor:beyond(1.11, 0.1)),
    ?assertNot(beamscale_stats_floor:beyond(1.09, 0.1)),
    ?assert(beamscale_stats_floor:beyond(1 / 1.11, 0.1)),
    ?assertNot(beamscale_stats_floor:beyond(1 / 1.09, 0.1)),
    ?assert(beamscale_stats_floor:beyond(1.01, undefined)),
    ?assertNot(beamscale_stats_floor:beyond(null, 0.1)).

over_launches_test() ->
    #{median := M, low := L, high := H, cv := Cv, min := Min, max := Max, launches := 3} =
        beamscale_stats_floor:over_launches([110, 100, 105]),
    ?assertEqual({105.0, 100.0, 110.0}, {M, Min, Max}),
    ?assert(L < 100 andalso H > 110),
    ?assert(Cv > 0.04 andalso Cv < 0.06),
    ?assertMatch(#{low := 7.0, high := 7.0, cv := 0.0},
                 beamscale_stats_floor:over_launches([7])).

warnings_test() ->
    ?assertEqual([], beamscale_stats_floor:warnings(0.01, #{loadavg => 1.0, cores => 2})),
    ?assertEqual(2, length(beamscale_stats_floor:warnings(0.2, #{loadavg => 5.0, cores => 2}))),
    ?assertEqual(1, length(beamscale_stats_floor:warnings(0.06, none))).

%% Launches 8 % apart within each side, 7 % between the sides with a tight t: the test alone
%% would call it, the floor does not.
within_floor_not_called_test() ->
    A = [[100.0], [108.0], [104.0], [100.0], [108.0], [104.0]],
    B = [[X * 1.07 || X <- L] || L <- A],
    #{significant := false, floor := F, ratio := R} = beamscale_stats_compare:launches(A, B, #{}),
    ?assert(abs(F - 0.08) < 1.0e-9),
    ?assert(R > 1.06),
    C = [[X * 1.2 || X <- L] || L <- A],
    ?assertMatch(#{significant := true}, beamscale_stats_compare:launches(A, C, #{})).
