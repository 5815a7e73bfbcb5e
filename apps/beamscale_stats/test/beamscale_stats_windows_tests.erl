%% The highest and lowest window means: weighted, windows cut at the width, empty ones skipped.
-module(beamscale_stats_windows_tests).
-include_lib("eunit/include/eunit.hrl").

rate_test() ->
    %% 10 s at 5/s then 10 s at 20/s, and a last short window of 2 s at 8/s.
    Points = [{T, 1, 5} || T <- lists:seq(1, 10)] ++ [{T, 1, 20} || T <- lists:seq(11, 20)]
        ++ [{21, 1, 8}, {22, 1, 8}],
    ?assertEqual(#{highest => 20.0, lowest => 5.0},
                 beamscale_stats_windows:extremes(10, Points)).

weighted_test() ->
    %% Window 1: 9 requests of 1 ms and 1 of 11 ms: 2 ms, not the mean of the seconds' means.
    Points = [{1, 9, 9}, {2, 1, 11}, {11, 4, 12}, {25, 0, 0}],
    ?assertEqual(#{highest => 3.0, lowest => 2.0}, beamscale_stats_windows:extremes(10, Points)).

none_test() ->
    ?assertEqual(none, beamscale_stats_windows:extremes(10, [])),
    ?assertEqual(none, beamscale_stats_windows:extremes(10, [{1, 0, 0}])).
