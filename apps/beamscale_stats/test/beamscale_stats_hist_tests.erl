%% Properties and examples for the latency histogram.
-module(beamscale_stats_hist_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(RUNS, 200).

value() ->
    %% Spread over the whole range: small, medium and huge values.
    oneof([range(0, 3000), range(0, 1000000), range(0, 3600000000)]).

snap(Values) ->
    H = beamscale_stats_hist:new(),
    [beamscale_stats_hist:record(H, V) || V <- Values],
    beamscale_stats_hist:take(H).

exact(Sorted, P) ->
    N = length(Sorted),
    lists:nth(max(1, ceil(P / 100 * N)), Sorted).

prop_percentile_within_error() ->
    ?FORALL({Values, P}, {non_empty(list(value())), range(0, 100)},
            begin
                Exact = exact(lists:sort(Values), P),
                Got = beamscale_stats_hist:percentile(snap(Values), P),
                Got >= Exact andalso Got - Exact =< Exact / 1000
            end).

%% Several percentiles at once, in the order asked, each within the error of the exact one.
prop_percentiles_each() ->
    ?FORALL({Values, Ps}, {non_empty(list(value())), list(range(0, 100))},
            begin
                Got = beamscale_stats_hist:percentiles(snap(Values), Ps),
                Sorted = lists:sort(Values),
                length(Got) =:= length(Ps) andalso
                    lists:all(fun({P, V}) -> E = exact(Sorted, P), V >= E andalso V - E =< E / 1000
                              end, lists:zip(Ps, Got))
            end).

prop_merge_associative_commutative() ->
    ?FORALL({A, B, C}, {list(value()), list(value()), list(value())},
            begin
                [SA, SB, SC] = [snap(L) || L <- [A, B, C]],
                M = fun beamscale_stats_hist:merge/2,
                M(M(SA, SB), SC) =:= M(SA, M(SB, SC)) andalso M(SA, SB) =:= M(SB, SA)
                    andalso M(SA, SB) =:= snap(A ++ B)
            end).

prop_count_mean_max() ->
    ?FORALL(Values, non_empty(list(range(0, 3600000000))),
            begin
                S = snap(Values),
                beamscale_stats_hist:count(S) =:= length(Values)
                    andalso beamscale_stats_hist:max(S) =:= lists:max(Values)
                    andalso lists:min(Values) - beamscale_stats_hist:min(S)
                            =< lists:min(Values) / 1000
                    andalso beamscale_stats_hist:mean(S) == lists:sum(Values) / length(Values)
            end).

proper_test_() ->
    [{atom_to_list(P), {timeout, 60, ?_assert(proper:quickcheck(?MODULE:P(),
                                                                 [{numtests, ?RUNS}, quiet]))}}
     || P <- [prop_percentile_within_error, prop_percentiles_each,
              prop_merge_associative_commutative,
              prop_count_mean_max]].

take_resets_test() ->
    H = beamscale_stats_hist:new(),
    ok = beamscale_stats_hist:record(H, 5),
    ?assertEqual(1, beamscale_stats_hist:count(beamscale_stats_hist:take(H))),
    ?assertEqual(beamscale_stats_hist:empty(), beamscale_stats_hist:take(H)).

clamp_test() ->
    S = snap([-3, 10000000000]),
    ?assertEqual(0, beamscale_stats_hist:min(S)),
    ?assertEqual(beamscale_stats_hist:highest(), beamscale_stats_hist:max(S)).

concurrent_records_test() ->
    H = beamscale_stats_hist:new(),
    Parent = self(),
    Pids = [spawn_link(fun() -> [beamscale_stats_hist:record(H, I) || I <- lists:seq(1, 10000)],
                                Parent ! {done, self()} end) || _ <- lists:seq(1, 8)],
    [receive {done, P} -> ok end || P <- Pids],
    S = beamscale_stats_hist:take(H),
    ?assertEqual(80000, beamscale_stats_hist:count(S)),
    ?assertEqual(10000, beamscale_stats_hist:max(S)).

empty_test() ->
    E = beamscale_stats_hist:empty(),
    ?assertEqual(0, beamscale_stats_hist:percentile(E, 99)),
    ?assertEqual(0.0, beamscale_stats_hist:mean(E)),
    ?assertEqual(0.0, beamscale_stats_hist:stddev(E)).

%% Below 2048 a bucket holds one value: the deviation is exact; above, within the bucket width.
stddev_test() ->
    Of = fun(Vs) ->
                 H = beamscale_stats_hist:new(),
                 [beamscale_stats_hist:record(H, V) || V <- Vs],
                 beamscale_stats_hist:stddev(beamscale_stats_hist:take(H))
         end,
    ?assertEqual(0.0, Of([700, 700, 700])),
    ?assert(abs(Of([100, 200, 300, 400]) - math:sqrt(12500)) < 1.0e-9),
    %% Population deviation of 1 000 000 and 3 000 000: 1 000 000.
    ?assert(abs(Of([1000000, 3000000]) - 1000000) < 1000).

%% Takes while recorders run lose no count (an idle take skips the scan: the reset maximum says
%% whether anything was recorded since); a value of 0 is a record too.
takes_during_records_test() ->
    H = beamscale_stats_hist:new(),
    ok = beamscale_stats_hist:record(H, 0),
    S0 = beamscale_stats_hist:take(H),
    ?assertEqual({1, 0}, {beamscale_stats_hist:count(S0), beamscale_stats_hist:max(S0)}),
    Parent = self(),
    Pids = [spawn_link(fun() -> [beamscale_stats_hist:record(H, I) || I <- lists:seq(0, 19999)],
                                Parent ! {done, self()} end) || _ <- lists:seq(1, 4)],
    Taken = takes(H, Pids, []),
    Total = beamscale_stats_hist:merge([beamscale_stats_hist:take(H) | Taken]),
    ?assertEqual(80000, beamscale_stats_hist:count(Total)),
    ?assertEqual(19999, beamscale_stats_hist:max(Total)).

%% A take scans only up to the maximum's slot: values in any order, above and below the
%% maximum of the moment, from racing recorders, are all in some take.
takes_scan_to_the_maximum_test() ->
    H = beamscale_stats_hist:new(),
    Parent = self(),
    Values = fun(Seed) -> [X || {_, X} <- lists:sort([{rand:uniform(), X * Seed rem 50000}
                                                      || X <- lists:seq(1, 20000)])] end,
    Pids = [spawn_link(fun() -> [beamscale_stats_hist:record(H, V) || V <- Values(Seed)],
                                Parent ! {done, self()} end) || Seed <- [1, 7, 13, 31]],
    %% The last take after every recorder is done (in a list's head it ran first).
    During = takes(H, Pids, []),
    Total = beamscale_stats_hist:merge([beamscale_stats_hist:take(H) | During]),
    ?assertEqual(80000, beamscale_stats_hist:count(Total)),
    ?assertEqual(lists:sum([lists:sum(Values(Seed)) || Seed <- [1, 7, 13, 31]]),
                 beamscale_stats_hist:sum(Total)).

takes(_H, [], Acc) -> Acc;
takes(H, Pids, Acc) ->
    S = beamscale_stats_hist:take(H),
    receive {done, P} -> takes(H, Pids -- [P], [S | Acc])
    after 0 -> takes(H, Pids, [S | Acc])
    end.

%% A take reads only the flagged pieces of the flagged chunks: values on both sides of every
%% piece's edge (slots 31/32, 63/64... of each chunk) and at the range's ends come back in their
%% own buckets, with their counts, once; a second take finds nothing.
piece_edges_test() ->
    H = beamscale_stats_hist:new(),
    Values = lists:usort([0, 3600000000] ++
                         [V || E <- lists:seq(32, 4096, 32), V <- [E - 1, E]] ++
                         [V || E <- [5000, 70000, 1000000, 90000000], V <- [E - 1, E, E + 1]]),
    [ok = beamscale_stats_hist:record(H, V) || V <- Values, _ <- [1, 2]],
    #{counts := Counts} = S = beamscale_stats_hist:take(H),
    Slots = [beamscale_stats_hist:slot(V) || V <- Values],
    ?assertEqual(lists:sort([{I, 2 * length([J || J <- Slots, J =:= I])}
                             || I <- lists:usort(Slots)]),
                 lists:sort(maps:to_list(Counts))),
    ?assertEqual(2 * length(Values), beamscale_stats_hist:count(S)),
    ?assertEqual(0, beamscale_stats_hist:count(beamscale_stats_hist:take(H))).
