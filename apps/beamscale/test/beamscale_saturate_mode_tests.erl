-module(beamscale_saturate_mode_tests).
-include_lib("eunit/include/eunit.hrl").

scenario() ->
    #{phases => [#{name => p, duration_s => 1, rate => 1.0, max_users => infinity,
                   sessions => [{s, 1}]}],
      sessions => [#{name => s, weight => 1,
                     steps => [{think, {constant, 5}}, r1,
                               {loop, 2, [r2, {think, {constant, 1}}]},
                               {transaction, t, [{think, {constant, 1}}, r3]}]}],
      drain_s => 10, time_limit_s => 20}.

%% An open level: one phase at the rate, the drain after it, the sessions as written.
open_level_test() ->
    #{phases := [P], drain_s := 2, time_limit_s := 8, sessions := Ss} =
        beamscale_saturate_mode:level(open, scenario(), 50.0, 6, 2),
    ?assertMatch(#{name := level, duration_s := 6, rate := 50.0}, P),
    ?assertEqual(maps:get(sessions, scenario()), Ss).

%% A closed level: N users arriving at once, each looping the session without its think times
%% (at any depth) until the time limit; no drain, no phase mix.
closed_level_test() ->
    #{phases := [P], drain_s := 0, time_limit_s := 6, sessions := [#{steps := Steps}]} =
        beamscale_saturate_mode:level(closed, scenario(), 8, 6, 2),
    ?assertMatch(#{duration_s := 6, max_users := 8, rate := 80.0}, P),
    ?assertNot(maps:is_key(sessions, P)),
    ?assertMatch([{loop, _, [r1, {loop, 2, [r2]}, {transaction, t, [r3]}]}], Steps).

%% A closed level is judged by the error term alone; its summary has the peak and an interval.
closed_judge_summary_test() ->
    {ok, Slo} = beamscale_stats_slo:parse("p99<1ms,errors<1%"),
    F = #{error_ratio => 0.0, p99_ms => 500.0, p50_ms => 1.0, p90_ms => 1.0, p999_ms => 1.0,
          achieved_ratio => 0.0},
    ?assertMatch(#{held := true, broken := []}, beamscale_saturate_mode:judge(closed, Slo, F)),
    ?assertMatch(#{held := false, broken := [<<"errors">>], limited_by := <<"errors">>},
                 beamscale_saturate_mode:judge(closed, Slo, F#{error_ratio => 0.5})),
    ?assertMatch(#{held := false}, beamscale_saturate_mode:judge(open, Slo, F)),
    S = beamscale_saturate_mode:summary(closed, <<"errors<1%">>,
                                        #{peak_users => 4, peak_per_s => 100.0, why => peaked},
                                        [#{users => 4, requests_per_s_sd => 10.0, seconds => 4}],
                                        #{}),
    ?assertMatch(#{capacity_per_s := 100.0, capacity_low_per_s := 90.0,
                   capacity_high_per_s := 110.0, peak_users := 4, stopped := peaked}, S).
