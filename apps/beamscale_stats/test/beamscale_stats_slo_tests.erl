-module(beamscale_stats_slo_tests).
-include_lib("eunit/include/eunit.hrl").

parse_test() ->
    ?assertEqual({ok, [{pct, 99, 50.0}, {errors, 0.01}, {achieved, 0.9}]},
                 beamscale_stats_slo:parse("p99<50ms,errors<1%")),
    ?assertEqual({ok, [{pct, 999, 2000.0}, {achieved, 0.95}]},
                 beamscale_stats_slo:parse(" p999 < 2s , achieved>95%")),
    ?assertEqual({ok, [{pct, 50, 0.5}, {achieved, 0.9}]}, beamscale_stats_slo:parse("p50<500us")).

refused_test_() ->
    [?_assertMatch({error, _}, beamscale_stats_slo:parse(T))
     || T <- ["", "p98<5ms", "p99>5ms", "errors<1", "p99<5ms,p99<6ms", "achieved>150%",
              "p99<ms", atom, [1, 2]]].

text_round_trip_test() ->
    {ok, Slo} = beamscale_stats_slo:parse("p99<50ms,errors<0.5%,achieved>80%"),
    ?assertEqual(<<"p99<50ms,errors<0.5%,achieved>80%">>, beamscale_stats_slo:text(Slo)),
    Text = binary_to_list(beamscale_stats_slo:text(Slo)),
    ?assertEqual({ok, Slo}, beamscale_stats_slo:parse(Text)).

figures(P99, Err, Ach) ->
    #{p50_ms => 1, p90_ms => 2, p99_ms => P99, p999_ms => P99 * 2, error_ratio => Err,
      achieved_ratio => Ach}.

broken_test() ->
    {ok, Slo} = beamscale_stats_slo:parse("p99<50ms,errors<1%"),
    ?assertEqual([], beamscale_stats_slo:broken(Slo, figures(50, 0.01, 0.9))),
    ?assertEqual([<<"p99">>], beamscale_stats_slo:broken(Slo, figures(51, 0.0, 1.0))),
    ?assertEqual([<<"p99">>, <<"errors">>, <<"achieved">>],
                 beamscale_stats_slo:broken(Slo, figures(51, 0.5, 0.0))).

limited_by_test() ->
    {ok, Slo} = beamscale_stats_slo:parse("p99<50ms,errors<1%"),
    F = figures(500, 0.02, 0.5),
    %% Throughput short of the offered rate is the cause; latency follows it.
    ?assertEqual(<<"achieved">>,
                 beamscale_stats_slo:limited_by(Slo, F, [<<"p99">>, <<"achieved">>])),
    %% Otherwise the term furthest past its bound: p99 10x against errors 2x.
    ?assertEqual(<<"p99">>, beamscale_stats_slo:limited_by(Slo, F, [<<"p99">>, <<"errors">>])),
    ?assertEqual(none, beamscale_stats_slo:limited_by(Slo, F, [])).
