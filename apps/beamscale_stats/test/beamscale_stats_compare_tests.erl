%% Comparing runs with few launches: intervals and p over launches, never a p of 0.
-module(beamscale_stats_compare_tests).
-include_lib("eunit/include/eunit.hrl").

%% Student's t against printed tables.
t_quantile_test() ->
    [?assert(abs(beamscale_stats_t:quantile(0.975, Df) - T) < 1.0e-3)
     || {Df, T} <- [{1, 12.706}, {4, 2.776}, {10, 2.228}, {1000, 1.962}]],
    ?assert(abs(beamscale_stats_t:p_two_sided(2.0, 1) - 0.2952) < 1.0e-3),
    ?assertEqual(1.0, beamscale_stats_t:p_two_sided(0.0, 5)).

%% Rows of one key: launch L has these seconds.
rows(Launches) ->
    [#{benchmark => <<"b">>, phase => <<"b">>, args => <<"[]">>, otp => <<"o">>,
       erl_args => <<"e">>, schedulers => 1, nodes => 1, iteration => I, launch => L,
       seconds => S}
     || {L, Secs} <- lists:enumerate(Launches), {I, S} <- lists:enumerate(Secs)].

%% Launches that each agree tightly within but differ between by a few per cent: three a side
%% of the same process is no difference, and the interval is as wide as the launches differ.
launch_spread_counts_test() ->
    A = [[1.00, 1.001, 0.999], [1.04, 1.041, 1.039], [0.97, 0.971, 0.969]],
    B = [[0.96, 0.961, 0.959], [1.01, 1.011, 1.009], [0.99, 0.991, 0.989]],
    [#{significant := Sig, ratio_low := Low, ratio_high := High, p := P, test := launches}] =
        beamscale_stats_compare:compare(rows(A), rows(B)),
    ?assertNot(Sig),
    ?assert(Low < 0.95 andalso High > 1.03),
    ?assert(P > 0.2).

%% A clear slowdown over launches is significant, and its p is small but not 0.
slowdown_never_p0_test() ->
    A = [[1.00, 1.01], [1.02, 1.01], [0.99, 1.00]],
    B = [[X * 1.3 || X <- L] || L <- A],
    [#{significant := true, p := P}] = beamscale_stats_compare:compare(rows(A), rows(B)),
    ?assert(P > 0.0 andalso P < 0.01),
    %% The bootstrap's p, where no resampled ratio crosses 1: 1 / resamples, not 0.
    {_, _, _, PBoot} = beamscale_stats_launches:ratio(B, A, #{resamples => 200}),
    ?assertEqual(1 / 200, PBoot).
