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

%% Two launches a side: each launch's least count is its figure; keys of one run only are left
%% out.
compare_runs_launches_test() ->
    A = #{k => [[100, 130], [101, 140]], only_a => [[1]]},
    B = #{k => [[110, 111], [112, 150]], only_b => [[1]]},
    [R] = beamscale_stats_instr:compare_runs(A, B),
    ?assertMatch(#{key := k, over := launches, launches_a := 2, launches_b := 2, n_a := 2,
                   verdict := more, median_a := 100.5, median_b := 111.0}, R),
    ?assert(abs(maps:get(ratio, R) - 111 / 100.5) < 1.0e-9),
    ?assert(abs(maps:get(floor, R) - 2 / 111) < 1.0e-9).

%% One launch on a side: its counted samples are the values, overlapping ranges say same.
compare_runs_samples_test() ->
    [R] = beamscale_stats_instr:compare_runs(#{k => [[100, 104, 102]]},
                                             #{k => [[103, 105], [101, 106]]}),
    ?assertMatch(#{over := samples, n_a := 3, n_b := 4, launches_b := 2, verdict := same}, R),
    [F] = beamscale_stats_instr:compare_runs(#{k => [[100, 101]]}, #{k => [[90, 91]]}),
    ?assertMatch(#{verdict := fewer}, F).

%% The gate: only a count higher by more than the percentage, ranges apart.
more_test() ->
    Rs = beamscale_stats_instr:compare_runs(#{a => [[100]], b => [[100]], c => [[100, 100.1]]},
                                            #{a => [[103]], b => [[101]], c => [[104, 106]]}),
    ?assertEqual([a, c], [K || #{key := K} <- beamscale_stats_instr:more(Rs, 2)]),
    ?assertEqual([c], [K || #{key := K} <- beamscale_stats_instr:more(Rs, 3.5)]).
