%% The folding of sub-second intervals into seconds (`beamscale_load_intervals'): where a report
%% waits, when a second is complete, and a second's figures the sum of its intervals'.
-module(beamscale_load_intervals_tests).
-include_lib("eunit/include/eunit.hrl").

resolutions_test() ->
    ?assertEqual([10, 5, 4, 2, 1],
                 [beamscale_load_intervals:per_second(Ms)
                  || Ms <- beamscale_load_intervals:resolutions()]),
    ?assertEqual(0.3, beamscale_load_intervals:end_s(3, 100)),
    ?assertEqual(0.25, beamscale_load_intervals:mid_s(3, 100)).

%% While second 2 (intervals 11..20) is collected, a late report of interval 4 counts in 11, one
%% of 15 or of second 3 waits where it is.
key_test() ->
    ?assertEqual([11, 11, 15, 23],
                 [beamscale_load_intervals:key(K, 2, 10) || K <- [4, 11, 15, 23]]),
    %% At a second's resolution, as a late second always did.
    ?assertEqual(5, beamscale_load_intervals:key(3, 5, 1)).

complete_test() ->
    Seen = #{a => 20, b => 19},
    ?assertNot(beamscale_load_intervals:complete(2, 10, [a, b], Seen)),
    ?assert(beamscale_load_intervals:complete(2, 10, [a], Seen)),
    ?assert(beamscale_load_intervals:complete(1, 10, [a, b], Seen)),
    ?assertNot(beamscale_load_intervals:complete(1, 10, [c], Seen)),
    ?assert(beamscale_load_intervals:complete(3, 10, [], Seen)).

%% A second's intervals in order, those nobody reported empty, later ones left pending.
take_test() ->
    P = #{11 => [x], 13 => [y, z], 21 => [w]},
    {Taken, Left} = beamscale_load_intervals:take(2, 10, P),
    ?assertEqual(lists:seq(11, 20), [K || {K, _} <- Taken]),
    ?assertEqual([[x], [], [y, z]], [Rs || {_, Rs} <- lists:sublist(Taken, 3)]),
    ?assertEqual(#{21 => [w]}, Left).

%% Ten intervals of real metrics, recorded and taken in turn: their fold is the second, whose
%% counts are the sums and whose latencies are all of theirs.
fold_test() ->
    M = beamscale_load_metrics:new([]),
    Fine = [begin
                [ok = beamscale_load_metrics:incr(M, requests) || _ <- lists:seq(1, I)],
                ok = beamscale_load_metrics:record(M, latency, I * 1000000),
                [ok = beamscale_load_metrics:status(M, 200) || I rem 2 =:= 0],
                ok = beamscale_load_metrics:error(M, timeout),
                beamscale_load_metrics:take(M)
            end || I <- lists:seq(1, 10)],
    Empty = beamscale_load_metrics:empty([]),
    Second = beamscale_load_intervals:fold(Fine, Empty),
    ?assertEqual(55, maps:get(requests, Second)),
    ?assertEqual(lists:sum([maps:get(requests, F) || F <- Fine]), maps:get(requests, Second)),
    ?assertEqual(10, maps:get(timeouts, Second)),
    ?assertEqual(#{200 => 5}, maps:get(statuses, Second)),
    ?assertEqual(#{<<"timeout">> => 10}, maps:get(reasons, Second)),
    L = maps:get(latency, Second),
    ?assertEqual(10, beamscale_stats_hist:count(L)),
    ?assertEqual(lists:sum([beamscale_stats_hist:sum(maps:get(latency, F)) || F <- Fine]),
                 beamscale_stats_hist:sum(L)),
    %% Folding nothing is the empty interval.
    ?assertEqual(Empty, beamscale_load_intervals:fold([], Empty)).
