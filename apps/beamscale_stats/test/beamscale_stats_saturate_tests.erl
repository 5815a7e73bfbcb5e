-module(beamscale_stats_saturate_tests).
-include_lib("eunit/include/eunit.hrl").

%% A second of a load run: N sessions started and done, each request taking Ms from its
%% intended start and half that from its send.
second(T, N, Done, Ms) ->
    Hist = fun(V) -> H = beamscale_stats_hist:new(),
                     [beamscale_stats_hist:record(H, V) || _ <- lists:seq(1, N)],
                     beamscale_stats_hist:take(H) end,
    #{t_s => T, sessions_started => N, sessions_done => Done, requests => N, errors => 0,
      timeouts => 0, latency => Hist(Ms * 1000), sent => Hist(Ms * 500),
      session => Hist(Ms * 1000)}.

%% The warm-up second and the drain seconds are left out of the figures.
figures_test() ->
    Rows = [second(1, 100, 100, 1000), second(2, 100, 80, 10), second(3, 100, 80, 10),
            second(4, 0, 40, 1000)],
    F = beamscale_stats_saturate:figures(Rows, #{rate => 100, hold_s => 3, warmup_s => 1}),
    ?assertEqual(2, maps:get(seconds, F)),
    ?assertEqual(80.0, maps:get(achieved_per_s, F)),
    ?assertEqual(0.8, maps:get(achieved_ratio, F)),
    ?assert(abs(maps:get(p99_ms, F) - 10) < 0.5),
    ?assert(abs(maps:get(p99_sent_ms, F) - 5) < 0.5),
    ?assertEqual(0.0, maps:get(error_ratio, F)).

%% limited_by is the term broken at the first level not held, in the order they ran.
summary_test() ->
    Levels = [#{held => true}, #{held => false, limited_by => <<"p99">>, broken => [<<"p99">>]},
              #{held => false, limited_by => <<"achieved">>, broken => [<<"achieved">>]}],
    S = beamscale_stats_saturate:summary(<<"p99<1ms">>, #{low => 10.0, high => 20.0,
                                                           why => converged}, Levels, #{}),
    ?assertMatch(#{capacity_per_s := 10.0, capacity_low_per_s := 10.0,
                   capacity_high_per_s := 20.0, limited_by := <<"p99">>, levels := 3}, S).
