%% The change-point detector: steps found where they are, none on noise, whatever the unit.
-module(beamscale_stats_changepoint_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(CP, beamscale_stats_changepoint).

%% N points of Level with seeded uniform noise of relative half-width Noise.
noisy(N, Level, Noise, Seed) ->
    S0 = rand:seed_s(exsss, {Seed, Seed + 7, Seed + 13}),
    {Xs, _} = lists:mapfoldl(fun(_, S) ->
                                     {U, S1} = rand:uniform_s(S),
                                     {Level * (1 + Noise * (2 * U - 1)), S1}
                             end, S0, lists:seq(1, N)),
    Xs.

step_found_at_its_index_test() ->
    Xs = noisy(30, 1.0, 0.02, 1) ++ noisy(30, 1.1, 0.02, 2),
    [#{index := I, ratio := R, ratio_low := Lo, ratio_high := Hi, p := P}] = ?CP:detect(Xs),
    ?assertEqual(30, I),
    ?assert(R > 1.08 andalso R < 1.12),
    ?assert(Lo < R andalso R < Hi),
    ?assert(P < 0.001).

two_steps_both_found_test() ->
    Xs = noisy(20, 1.0, 0.01, 3) ++ noisy(20, 0.8, 0.01, 4) ++ noisy(20, 1.2, 0.01, 5),
    ?assertEqual([20, 40], [I || #{index := I} <- ?CP:detect(Xs)]).

constant_series_has_none_test() ->
    ?assertEqual([], ?CP:detect([1.0 || _ <- lists:seq(1, 40)])),
    ?assertEqual([], ?CP:detect(noisy(60, 5.0, 0.03, 9))).

short_series_has_none_test() ->
    ?assertEqual([], ?CP:detect([])),
    ?assertEqual([], ?CP:detect([1.0])),
    ?assertEqual([], ?CP:detect([1.0, 2.0, 3.0])).

%% A last point far off is a change at the end only when a segment may hold one point.
newest_point_step_test() ->
    Xs = noisy(20, 1.0, 0.01, 11) ++ [1.2],
    ?assertEqual([], ?CP:detect(Xs)),
    ?assertMatch([#{index := 20}], ?CP:detect(Xs, #{min_size => 1})).

points_of_every_shape_test() ->
    Plain = noisy(10, 1.0, 0.01, 12) ++ noisy(10, 2.0, 0.01, 13),
    Shapes = [{X, X * 0.9, X * 1.1} || X <- Plain],
    Reps = [#{replicates => [X - 0.001, X + 0.001]} || X <- Plain],
    [#{index := 10}] = ?CP:detect(Plain),
    ?assertEqual(?CP:detect(Plain), ?CP:detect(Shapes)),
    ?assertEqual([10], [I || #{index := I} <- ?CP:detect(Reps)]).

alpha_decides_test() ->
    Xs = noisy(15, 1.0, 0.05, 21) ++ noisy(15, 1.04, 0.05, 22),
    Loose = ?CP:detect(Xs, #{alpha => 0.5}),
    Strict = ?CP:detect(Xs, #{alpha => 1.0e-12}),
    ?assert(length(Loose) >= length(Strict)),
    ?assertEqual([], Strict).

ttest_test() ->
    ?assertEqual(1.0, ?CP:ttest([1, 1], [1, 1])),
    ?assertEqual(0.0, ?CP:ttest([1, 1], [2, 2])),
    %% Welch-free pooled t of [1,2,3] vs [4,5,6]: t = 3.674, df 4, p = 0.0213.
    ?assert(abs(?CP:ttest([1, 2, 3], [4, 5, 6]) - 0.0213) < 1.0e-3).

q_split_test() ->
    ?assertEqual(none, ?CP:q_split([1, 2, 3], 2)),
    ?assertMatch({3, _}, ?CP:q_split([1, 1, 1, 5, 5, 5], 2)).

%% Properties: the change points do not depend on the unit (a series with a step, times 4,
%% exact in floating point, has the same ones with the same p); a step of 50 % on 1 % noise is found
%% where it is, and is the largest change (a segment of noise split where it differs most can
%% pass the test by chance: about 1 in 100 segments at alpha 0.001, see docs/history.md);
%% change points are ordered, apart by the least segment, never at the ends.
prop_scale_free() ->
    ?FORALL({As, Bs}, {list(float(0.0, 10.0)), list(float(0.0, 10.0))},
            begin
                %% A step up after As, so that most cases have a change to compare.
                Xs = As ++ [B + 20 || B <- Bs],
                Cs = ?CP:detect(Xs),
                Scaled = ?CP:detect([4 * X || X <- Xs]),
                [{I, P} || #{index := I, p := P} <- Cs]
                    =:= [{I, P} || #{index := I, p := P} <- Scaled]
            end).

prop_step_found() ->
    ?FORALL({N1, N2, Seed}, {range(5, 25), range(5, 25), range(1, 1000)},
            begin
                Cs = ?CP:detect(noisy(N1, 1.0, 0.01, Seed) ++ noisy(N2, 1.5, 0.01, Seed + 1)),
                [{_, Biggest} | _] = lists:sort([{-abs(R - 1), I}
                                                 || #{index := I, ratio := R} <- Cs]),
                Biggest =:= N1
            end).

prop_changes_bounded() ->
    ?FORALL(Xs, list(float(0.0, 10.0)),
            begin
                Cs = ?CP:detect(Xs),
                Is = [I || #{index := I} <- Cs],
                Is =:= lists:usort(Is) andalso length(Cs) =< length(Xs) div 2
                    andalso lists:all(fun(I) -> I >= 2 andalso I =< length(Xs) - 2 end, Is)
            end).

properties_test_() ->
    {timeout, 120,
     fun() ->
             Opts = [{numtests, 100}, {to_file, user}],
             ?assert(proper:quickcheck(prop_scale_free(), Opts)),
             ?assert(proper:quickcheck(prop_step_found(), Opts)),
             ?assert(proper:quickcheck(prop_changes_bounded(), Opts))
     end}.
