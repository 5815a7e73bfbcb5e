-module(beamscale_stats_instr_tests).
-include_lib("eunit/include/eunit.hrl").

%% The empty loop's least per call is subtracted from each sample's per call.
per_call_test() ->
    Empty = [{100, 2000}, {100, 1800}, {100, 2500}],
    ?assertEqual([482.0, 500.0], beamscale_stats_instr:per_call([{100, 50000}, {100, 51800}],
                                                                Empty)).

%% The figure is the least sample (interference only adds); the spread is over all of them.
summary_test() ->
    S = beamscale_stats_instr:summary([{10, 1100}, {10, 1000}, {10, 1300}], [{10, 100}]),
    ?assertEqual(90.0, maps:get(instructions, S)),
    ?assertEqual(100.0, maps:get(instructions_median, S)),
    ?assertEqual(120.0, maps:get(instructions_max, S)),
    ?assertEqual(10, maps:get(counted_calls, S)),
    ?assertEqual(10.0, maps:get(empty_instructions, S)),
    ?assert(abs(maps:get(instructions_spread, S) - 0.3) < 1.0e-9).

spread_test() ->
    ?assertEqual(0.0, beamscale_stats_instr:spread([5, 5, 5])),
    ?assertEqual(0.0, beamscale_stats_instr:spread([0, 0])),
    ?assert(abs(beamscale_stats_instr:spread([99, 100, 101]) - 0.02) < 1.0e-9).

%% A difference is called only when the two sides' ranges do not overlap.
compare_test() ->
    #{ratio := R, verdict := V} = beamscale_stats_instr:compare([100, 101, 100.5], [102, 103]),
    ?assert(abs(R - 102.5 / 100.5) < 1.0e-9),
    ?assertEqual(more, V),
    ?assertMatch(#{verdict := same}, beamscale_stats_instr:compare([100, 103], [102, 104])),
    ?assertMatch(#{verdict := fewer}, beamscale_stats_instr:compare([100, 101], [90, 91])),
    ?assertMatch(#{ratio := undefined, verdict := same},
                 beamscale_stats_instr:compare([0, 0], [5, 5])).
