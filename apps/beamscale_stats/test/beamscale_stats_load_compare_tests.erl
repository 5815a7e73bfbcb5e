%% Two load runs' summaries side by side: ratios of per-second medians, their intervals, gates.
-module(beamscale_stats_load_compare_tests).
-include_lib("eunit/include/eunit.hrl").

%% A summary of Seconds seconds at Rate requests/s whose p99 is P99 ms (times a noise of a few
%% percent, the same for a seed), with Errors errors of one reason in all; then a drain second.
summary(Seed, Seconds, Rate, P99, Errors) ->
    S0 = rand:seed_s(exsss, {Seed, 2, 3}),
    {PerSecond, _} = lists:mapfoldl(
                       fun(T, S) ->
                               {U, S1} = rand:uniform_s(S),
                               Noise = 0.97 + 0.06 * U,
                               {second(T, <<"main">>, round(Rate * Noise), P99 * Noise), S1}
                       end, S0, lists:seq(1, Seconds)),
    Drain = second(Seconds + 1, <<"drain">>, 1, 10 * P99),
    Requests = Seconds * Rate,
    #{<<"requests">> => Requests, <<"errors">> => Errors, <<"requests_per_s">> => Rate,
      <<"errors_by_reason">> => case Errors of 0 -> #{}; _ -> #{<<"timeout">> => Errors} end,
      <<"latency_corrected">> => latency(P99), <<"latency_uncorrected">> => latency(P99 / 2),
      <<"per_second">> => PerSecond ++ [Drain]}.

second(T, Phase, Requests, P99) ->
    #{<<"t_s">> => T, <<"phase">> => Phase, <<"requests">> => Requests, <<"errors">> => 0,
      <<"latency_corrected">> => latency(P99), <<"latency_uncorrected">> => latency(P99 / 2)}.

latency(P99) ->
    #{<<"count">> => 10, <<"p50_ms">> => P99 / 4, <<"p90_ms">> => P99 / 2, <<"p99_ms">> => P99,
      <<"p999_ms">> => P99 * 1.5, <<"max_ms">> => P99 * 2}.

row(Metric, Rows) -> hd([R || #{metric := M} = R <- Rows, M =:= Metric]).

same_runs_test() ->
    A = summary(1, 10, 100, 20.0, 0),
    Rows = beamscale_stats_load_compare:compare(A, A),
    ?assertEqual(12, length(Rows)),
    [?assertMatch(#{ratio := 1.0, n_a := 10, n_b := 10}, R)
     || #{metric := M} = R <- Rows, M =/= <<"errors">>],
    %% No errors: a ratio of zero medians is no ratio.
    ?assertMatch(#{ratio := null, a := 0.0}, row(<<"errors">>, Rows)),
    ?assertEqual([], beamscale_stats_load_compare:gates(Rows, [{p99_above, 10},
                                                               {throughput_below, 10}])).

other_noise_passes_test() ->
    Rows = beamscale_stats_load_compare:compare(summary(1, 10, 100, 20.0, 0),
                                                summary(2, 10, 100, 20.0, 0)),
    ?assertEqual([], beamscale_stats_load_compare:gates(Rows, [{p99_above, 10},
                                                               {throughput_below, 10}])).

slower_fails_p99_gate_test() ->
    Rows = beamscale_stats_load_compare:compare(summary(1, 10, 100, 20.0, 0),
                                                summary(2, 10, 100, 26.0, 0)),
    #{ratio := R, low := L, high := H, a := 20.0, b := 26.0} =
        row(<<"latency (corrected) p99">>, Rows),
    ?assert(R > 1.2 andalso R < 1.4 andalso L > 1.15 andalso H >= R),
    ?assertMatch([{{p99_above, 10}, #{}}],
                 beamscale_stats_load_compare:gates(Rows, [{p99_above, 10},
                                                           {throughput_below, 10}])),
    %% 30 % is within a 50 % gate; lower latency never fails it.
    ?assertEqual([], beamscale_stats_load_compare:gates(Rows, [{p99_above, 50}])),
    Back = beamscale_stats_load_compare:compare(summary(2, 10, 100, 26.0, 0),
                                                summary(1, 10, 100, 20.0, 0)),
    ?assertEqual([], beamscale_stats_load_compare:gates(Back, [{p99_above, 10}])).

lower_throughput_fails_its_gate_test() ->
    Rows = beamscale_stats_load_compare:compare(summary(1, 10, 100, 20.0, 0),
                                                summary(2, 10, 70, 20.0, 0)),
    ?assertMatch([{{throughput_below, 20}, #{metric := <<"throughput">>}}],
                 beamscale_stats_load_compare:gates(Rows, [{p99_above, 10},
                                                           {throughput_below, 20}])),
    ?assertEqual([], beamscale_stats_load_compare:gates(Rows, [{throughput_below, 40}])).

%% The drain's second (its p99 ten times the others') is not one of the seconds compared.
drain_left_out_test() ->
    A = summary(1, 5, 100, 20.0, 0),
    B = A#{<<"per_second">> := [S#{<<"latency_corrected">> := latency(500.0)}
                                || #{<<"phase">> := <<"drain">>} = S
                                       <- maps:get(<<"per_second">>, A)]
                                ++ [S || #{<<"phase">> := <<"main">>} = S
                                             <- maps:get(<<"per_second">>, A)]},
    ?assertMatch(#{ratio := 1.0, n_b := 5},
                 row(<<"latency (corrected) p99">>,
                     beamscale_stats_load_compare:compare(A, B))).

errors_side_by_side_test() ->
    A = summary(1, 5, 100, 20.0, 4),
    B = (summary(1, 5, 100, 20.0, 0))#{<<"errors_by_reason">> =>
                                           #{<<"http status 503">> => 9, <<"timeout">> => 1}},
    ?assertEqual([{<<"http status 503">>, 0, 9}, {<<"timeout">>, 4, 1}],
                 beamscale_stats_load_compare:errors(A, B)),
    ?assertMatch(#{a := 0.8}, row(<<"errors">>, beamscale_stats_load_compare:compare(A, B))).
