-module(beamscale_report_saturate_tests).
-include_lib("eunit/include/eunit.hrl").

level(R, A, Held) ->
    #{offered_per_s => R, achieved_per_s => A, p50_ms => 1.0, p99_ms => R / 10, p999_ms => R / 5,
      p99_sent_ms => 1.0, requests => 10, errors => 0, held => Held,
      broken => case Held of true -> []; false -> [<<"p99">>] end,
      cpu_pct => R / 4, util_pct => null, busy_wait_pct => 1.0}.

summary(C) ->
    #{<<"slo">> => <<"p99<50ms">>, <<"capacity_per_s">> => C, <<"capacity_high_per_s">> => null,
      <<"limited_by">> => <<"p99">>, <<"broken_first">> => [<<"p99">>],
      <<"stopped">> => <<"converged">>, <<"levels">> => 2, <<"level_s">> => 6,
      <<"warmup_s">> => 2}.

%% Latency has 3 corrected series, the uncorrected p99 and the knee; achieved has its ideal
%% line and the knee; the target's chart CPU, utilisation, busy-wait and the knee, a level not
%% sampled (null) left out of its series. Without a capacity there is no knee.
graphs_test() ->
    Levels = [level(400.0, 300.0, false), level(100.0, 100.0, true)],
    [{_, _, _, Lat}, {_, _, _, Ach}, {_, _, _, Target}] =
        beamscale_report_saturate:graphs(summary(100.0), Levels),
    ?assertEqual(5, length(Lat)),
    ?assertEqual(3, length(Ach)),
    ?assertEqual(4, length(Target)),
    #{points := Pts} = hd(Lat),
    ?assertEqual([100.0, 400.0], [X || {X, _} <- Pts]),
    ?assertMatch([#{points := [{100.0, 25.0}, {400.0, 100.0}]}, #{points := []}, _, _], Target),
    [{_, _, _, Lat2}, _, _] = beamscale_report_saturate:graphs(summary(null), Levels),
    ?assertEqual(4, length(Lat2)).

page_escapes_test() ->
    Html = iolist_to_binary(beamscale_report_saturate:index(summary(100.0),
                                                            [level(1.0, 1.0, true)])),
    ?assertMatch({_, _}, binary:match(Html, <<"p99&lt;50ms">>)),
    ?assertEqual(nomatch, binary:match(Html, <<"p99<50ms">>)).
