-module(beamscale_stats_launches_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(FAST, #{resamples => 200}).

%%% Examples

%% Three launches a side whose levels interleave (A at 0.8, 1.0, 1.3; B at 1.05, 1.25, 1.4),
%% ten nearly equal iterations each: the iterations of B are mostly above those of A, so a
%% test that takes them for independent finds B slower (the CI gate's false alarm); over
%% launches the difference is within what launches vary by.
iterations_of_a_launch_not_independent_test() ->
    A = rows([0.8, 1.0, 1.3]),
    B = rows([1.05, 1.25, 1.4]),
    [#{significant := false, test := launches, launches_a := 3, launches_b := 3,
       ratio_low := Low, ratio_high := High}] = beamscale_stats_compare:compare(A, B),
    ?assert(Low < 1 andalso High > 1),
    %% The same rows as one launch a side: Mann-Whitney over 30 iterations says "slower".
    OneLaunch = fun(Rows) -> [maps:remove(launch, R) || R <- Rows] end,
    [#{significant := true, test := mann_whitney, p := P}] =
        beamscale_stats_compare:compare(OneLaunch(A), OneLaunch(B)),
    ?assert(P < 0.001).

%% A clear slowdown (every launch 30 % slower) is significant over launches too.
slowdown_found_test() ->
    [#{significant := true, test := launches, ratio := R}] =
        beamscale_stats_compare:compare(rows([1.0, 1.05, 0.97, 1.02]),
                                        rows([1.3, 1.36, 1.27, 1.33])),
    ?assert(R > 1.25 andalso R < 1.35).

%% Rows without a launch field (a run directory from before launches) are launch 1.
group_test() ->
    Rows = rows([1.0, 2.0]),
    [{_, Launches}] = maps:to_list(beamscale_stats_launches:group(Rows)),
    ?assertEqual(2, length(Launches)),
    [{_, [One]}] = maps:to_list(beamscale_stats_launches:group(
                                  [maps:remove(launch, R) || R <- Rows])),
    ?assertEqual(20, length(One)).

%% Ten iterations per launch at each level, a little jitter, as measurements.csv rows.
rows(Levels) ->
    [#{benchmark => <<"b">>, phase => <<"b">>, args => <<"[]">>, otp => <<"default">>,
       erl_args => <<"default">>, schedulers => <<"1">>, nodes => <<"1">>,
       launch => integer_to_binary(L),
       seconds => float_to_binary(Level * (1 + I / 1000))}
     || {L, Level} <- lists:zip(lists:seq(1, length(Levels)), Levels), I <- lists:seq(1, 10)].

%%% Properties

properties_test_() ->
    [{timeout, 60, ?_assert(proper:quickcheck(P, [{numtests, 100}, {to_file, user}]))}
     || P <- [prop_one_launch_is_ordinary(), prop_ratio_one_launch_is_ordinary(),
              prop_wider_when_launch_means_differ(), prop_ratio_of_scaled(),
              prop_order_invariant()]].

samples() -> non_empty(list(float(0.001, 100.0))).

%% With one launch the hierarchical bootstrap is the ordinary one, figure for figure.
prop_one_launch_is_ordinary() ->
    ?FORALL(Xs, samples(),
            begin
                #{median := M, ci95_low := L, ci95_high := H} =
                    beamscale_stats:describe(Xs, ?FAST),
                {M, L, H} =:= beamscale_stats_launches:median_ci([Xs], ?FAST)
            end).

prop_ratio_one_launch_is_ordinary() ->
    ?FORALL({As, Bs}, {samples(), samples()},
            case beamscale_stats_launches:ratio([As], [Bs], ?FAST) of
                undefined -> beamscale_stats:bootstrap_ratio(As, Bs, ?FAST) =:= undefined;
                {R, L, H, P} ->
                    {R, L, H} =:= beamscale_stats:bootstrap_ratio(As, Bs, ?FAST)
                        andalso P >= 0 andalso P =< 1
            end).

%% Launches whose means differ by far more than their iterations vary: the interval over
%% launches is wider than the ordinary bootstrap's of the same samples pooled as one launch.
prop_wider_when_launch_means_differ() ->
    ?FORALL({Launches, D}, {launches(), float(1.0, 10.0)},
            begin
                Shifted = [[X + I * D || X <- L]
                           || {I, L} <- lists:zip(lists:seq(1, length(Launches)), Launches)],
                {_, HL, HH} = beamscale_stats_launches:median_ci(Shifted, ?FAST),
                {_, OL, OH} = beamscale_stats_launches:median_ci([lists:append(Shifted)],
                                                                 ?FAST),
                HH - HL > OH - OL
            end).

%% 5 to 8 launches of 10 to 20 iterations that vary by at most 1 %.
launches() ->
    ?LET(K, integer(5, 8),
         vector(K, ?LET(N, integer(10, 20), vector(N, float(1.0, 1.01))))).

%% Every launch scaled by K: the ratio is K and its interval holds it.
prop_ratio_of_scaled() ->
    ?FORALL({Launches, K}, {launches(), float(0.1, 10.0)},
            begin
                Scaled = [[X * K || X <- L] || L <- Launches],
                {R, L, H, _P} = beamscale_stats_launches:ratio(Scaled, Launches, ?FAST),
                abs(R - K) < 1.0e-9 * K andalso L =< R andalso R =< H
            end).

%% Launches and their iterations in any order give the same figures.
prop_order_invariant() ->
    ?FORALL(Launches, launches(),
            beamscale_stats_launches:median_ci(Launches, ?FAST) =:=
                beamscale_stats_launches:median_ci(
                  lists:reverse([lists:reverse(L) || L <- Launches]), ?FAST)).
