%% The load page's latency distribution, log latency axis, phase boundaries and transactions
%% over time (issue 20).
-module(beamscale_report_load_extra_tests).
-include_lib("eunit/include/eunit.hrl").

lat(Ms) ->
    #{<<"count">> => 10, <<"mean_ms">> => Ms, <<"p50_ms">> => Ms, <<"p90_ms">> => Ms,
      <<"p99_ms">> => Ms, <<"p999_ms">> => Ms, <<"max_ms">> => Ms}.

%% Two phases; from the intended start the latency grows to a second, from the send it stays 3 ms.
second(T, Phase, Corrected) ->
    #{<<"t_s">> => T, <<"phase">> => Phase, <<"offered_per_s">> => 10.0, <<"requests">> => 10,
      <<"sessions_started">> => 10, <<"sessions_done">> => 10, <<"errors">> => 0,
      <<"timeouts">> => 0, <<"latency_corrected">> => lat(Corrected),
      <<"latency_uncorrected">> => lat(3.0), <<"session_duration">> => lat(5.0),
      <<"transactions">> => #{<<"log<in>">> => lat(2.0)}}.

summary() ->
    Dist = fun(Scale) -> [[P, Scale * (1 + I)] || {I, P} <- lists:enumerate(
                                                              [0, 50, 90, 99, 99.9, 99.99, 100])]
           end,
    #{<<"per_second">> => [second(1, <<"ramp">>, 3.0), second(2, <<"ramp">>, 30.0),
                           second(3, <<"steady<1>">>, 300.0), second(4, <<"steady<1>">>, 1000.0)],
      <<"latency_distribution">> => #{<<"corrected">> => Dist(100.0),
                                      <<"uncorrected">> => Dist(0.5)}}.

page() ->
    iolist_to_binary(beamscale_report_load:index(#{run => #{}, summary => summary(),
                                                   samples => [], lcnt => []})).

distribution_test() ->
    [C, U] = beamscale_report_load_extra:distribution_series(summary()),
    %% Percentile 100 has no place on a 1 / (1 - p) axis; 0 is x = 1.
    ?assertEqual([1.0, 2.0, 10.0, 100.0], [round(X * 1000) / 1000 || {X, _} <- lists:sublist(
                                                                            maps:get(points, C),
                                                                            4)]),
    ?assertEqual(6, length(maps:get(points, U))),
    Svg = iolist_to_binary(beamscale_report_load_extra:distribution(summary())),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"data-x-scale=\"log\" data-y-scale=\"log\"">>)),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"data-series=\"2\"">>)),
    [?assertNotEqual(nomatch, binary:match(Svg, <<">", L/binary, "</text>">>))
     || L <- [<<"50">>, <<"90">>, <<"99">>, <<"99.9">>, <<"99.99">>]].

no_distribution_test() ->
    Html = iolist_to_binary(beamscale_report_load_extra:distribution(#{})),
    ?assertEqual(nomatch, binary:match(Html, <<"<svg">>)).

page_test() ->
    Html = page(),
    %% The latency chart goes logarithmic: 3 ms and 1 000 ms on one chart.
    [Latency | _] = binary:split(Html, <<"session duration">>),
    ?assertMatch({match, _}, re:run(Latency, "data-y-scale=\"log\"[^>]*><title>latency")),
    %% The phase boundary, escaped, on every time chart (latency, session, users, requests,
    %% errors, users in flight, transactions, their p99).
    Marker = <<"steady&lt;1&gt;</text></g>">>,
    ?assertEqual(8, length(binary:matches(Html, Marker))),
    ?assertEqual(nomatch, binary:match(Html, <<"steady<1>">>)),
    ?assertEqual(nomatch, binary:match(Html, <<"log<in>">>)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"Latency distribution">>)),
    ?assertEqual(length(beamscale_report_load:graphs(summary())) + 1,
                 length(binary:matches(Html, <<"<svg">>))).

phase_markers_test() ->
    ?assertEqual([{2, <<"steady<1>">>}], beamscale_report_load_extra:phase_markers(summary())),
    ?assertEqual([], beamscale_report_load_extra:phase_markers(#{})).

transactions_test() ->
    [{<<"transactions">>, _, _, [#{name := <<"log<in>">>, points := Counts}]}, _] =
        beamscale_report_load_extra:transaction_graphs(summary()),
    ?assertEqual([{1, 10}, {2, 10}, {3, 10}, {4, 10}], Counts).

%% A load cut short: its seconds from load.csv and errors.csv rows, summed; a row that does not
%% read (a line half written when the load was killed) left out.
cut_short_summary_test() ->
    Row = fun(T, Req, Err) ->
                  #{t_s => T, phase => <<"p">>, offered_per_s => <<"5.0">>,
                    sessions_started => <<"5">>, sessions_done => <<"4">>, requests => Req,
                    errors => Err, p50_ms => <<"1.5">>, p90_ms => <<"2">>, p99_ms => <<"3">>,
                    p999_ms => <<"4">>, max_ms => <<"5">>, mean_session_ms => <<"7.25">>}
          end,
    Errors = [#{t_s => <<"1">>, reason => <<"timeout">>, count => <<"2">>},
              #{t_s => <<"2">>, reason => <<"timeout">>, count => <<"1">>},
              #{t_s => <<"2">>, reason => <<"http status 500">>, count => <<"3">>}],
    S = beamscale_report_load_extra:cut_short_summary(
          [Row(<<"1">>, <<"10">>, <<"2">>), Row(<<"2">>, <<"20">>, <<"4">>),
           Row(<<"3">>, <<"3">>, <<"x">>)], Errors, <<"cut short">>),
    ?assertMatch(#{<<"requests">> := 30, <<"errors">> := 6, <<"sessions_started">> := 10,
                   <<"duration_s">> := 2, <<"stopped">> := <<"cut short">>}, S),
    ?assertEqual(#{<<"timeout">> => 3, <<"http status 500">> => 3},
                 maps:get(<<"errors_by_reason">>, S)),
    [First, Second] = maps:get(<<"per_second">>, S),
    ?assertMatch(#{<<"t_s">> := 1, <<"latency_corrected">> := #{<<"p50_ms">> := 1.5,
                                                               <<"count">> := 10},
                   <<"session_duration">> := #{<<"mean_ms">> := 7.25}}, First),
    ?assertEqual(#{<<"timeout">> => 1, <<"http status 500">> => 3},
                 maps:get(<<"errors_by_reason">>, Second)),
    %% The page draws it (no session percentiles: no line for them).
    ?assert(is_list(beamscale_report_load:graphs(S))).

%% Users in flight accumulate started less done; bytes appear only once a kind counted some
%% (issue 39).
flow_graphs_test() ->
    S = fun(T, Started, Done, Sent) ->
                #{<<"t_s">> => T, <<"sessions_started">> => Started,
                  <<"sessions_done">> => Done, <<"bytes_sent">> => Sent,
                  <<"bytes_received">> => 2 * Sent}
        end,
    Summary = #{<<"per_second">> => [S(1, 10, 2, 0), S(2, 10, 8, 0), S(3, 0, 10, 0)]},
    ?assertMatch([{<<"users in flight">>, _, _, [#{points := [{1, 8}, {2, 10}, {3, 0}]}]}],
                 beamscale_report_load_extra:flow_graphs(Summary)),
    WithBytes = #{<<"per_second">> => [S(1, 1, 1, 100)]},
    ?assertMatch([_, {<<"bytes per second">>, _, _,
                      [#{name := <<"sent">>, points := [{1, 100}]},
                       #{name := <<"received">>, points := [{1, 200}]}]}],
                 beamscale_report_load_extra:flow_graphs(WithBytes)),
    ?assertEqual([], beamscale_report_load_extra:flow_graphs(#{})).

%% ctl's changes are marks beside the phase boundaries (issue 39).
event_markers_test() ->
    Summary = #{<<"per_second">> => [#{<<"t_s">> => 1, <<"phase">> => <<"a">>}],
                <<"events">> => [#{<<"t_s">> => 0.5, <<"event">> => <<"rate 40">>},
                                 #{<<"t_s">> => 2.5, <<"event">> => <<"stop">>}]},
    %% One in the first second is drawn at its end, where the graphs start (they begin at 1).
    ?assertEqual([{1, <<"rate 40">>}, {2.5, <<"stop">>}],
                 beamscale_report_load_extra:phase_markers(Summary)).

%% A stalled launcher's mark is short; the events' table has every event by time, its text
%% escaped; no events, no table.
stall_marker_and_events_test() ->
    Stall = #{<<"t_s">> => 1.5, <<"event">> => <<"load node n@h stalled 3.04 s: <b>">>,
              <<"node">> => <<"n@h">>, <<"lasted_s">> => 3.04, <<"late">> => 40},
    Summary = #{<<"per_second">> => [#{<<"t_s">> => 1, <<"phase">> => <<"a">>}],
                <<"events">> => [#{<<"t_s">> => 2.5, <<"event">> => <<"stop">>}, Stall]},
    ?assertEqual([{2.5, <<"stop">>}, {1.5, <<"stall 3.0 s">>}],
                 beamscale_report_load_extra:phase_markers(Summary)),
    Html = iolist_to_binary(beamscale_report_load_extra:events(Summary)),
    {Stalled, _} = binary:match(Html, <<"load node n@h stalled 3.04 s: &lt;b&gt;">>),
    {Stop, _} = binary:match(Html, <<">stop<">>),
    ?assert(Stalled < Stop),
    ?assertEqual(<<>>, iolist_to_binary(beamscale_report_load_extra:events(#{}))).

%% `--resolution 100ms': load_fine.csv's rows (as read back) are drawn as two charts, requests
%% and p99 per interval; a row that does not read is left out; without rows, no chart.
fine_graphs_test() ->
    Row = fun(T, Req, P99) ->
                  Keys = beamscale_format_load:keys(beamscale_format_load:load_csv()),
                  Base = maps:from_list([{K, <<"0">>} || K <- Keys]),
                  Base#{t_s => T, phase => <<"p">>, requests => Req, p99_ms => P99,
                        offered_per_s => <<"50.0">>, mean_session_ms => <<"1.5">>}
          end,
    Fine = beamscale_report_load_extra:fine_seconds(
             [Row(<<"0.1">>, <<"4">>, <<"2.5">>), Row(<<"0.2">>, <<"6">>, <<"3.0">>),
              #{t_s => <<"0.3">>}]),
    ?assertEqual(2, length(Fine)),
    ?assertMatch([{<<"requests every 100 ms">>, _, _, [#{points := [{0.1, 4}, {0.2, 6}]}]},
                  {<<"latency p99 every 100 ms">>, _, _,
                   [#{points := [{0.1, 2.5}, {0.2, 3.0}]}]}],
                 beamscale_report_load_extra:fine_graphs(#{<<"per_interval">> => Fine})),
    ?assertEqual([], beamscale_report_load_extra:fine_graphs(#{})).

%% The thresholds' table: a row each, a failed one shaded and its text escaped; a summary of
%% any shape (an older run's, none, hostile) gives no table rather than a crash.
thresholds_test() ->
    Html = iolist_to_binary(beamscale_report_load_extra:thresholds(
             #{<<"thresholds">> => [#{<<"threshold">> => <<"p95<20ms">>, <<"ok">> => false,
                                      <<"measured">> => <<"52.100 ms">>, <<"abort">> => true},
                                    #{<<"threshold">> => <<"errors<1%">>, <<"ok">> => true,
                                      <<"measured">> => <<"0.00 %">>, <<"abort">> => false}]})),
    ?assertMatch({match, _}, re:run(Html, "<tr class=\"fail\"><td class=\"t\">FAIL</td>"
                                          "<td class=\"t\">p95&lt;20ms</td><td class=\"t\">"
                                          "52.100 ms</td><td class=\"t\">yes</td></tr>")),
    ?assertMatch({match, _}, re:run(Html, "<tr class=\"pass\"><td class=\"t\">pass</td>")),
    [?assertEqual(<<>>, iolist_to_binary(beamscale_report_load_extra:thresholds(S)))
     || S <- [#{}, #{<<"thresholds">> => 3}, #{<<"thresholds">> => [1, <<"x">>]}, null]].
