%% The load run page: every text escaped, one chart per graph with its series.
-module(beamscale_report_load_tests).

-include_lib("eunit/include/eunit.hrl").

-define(NASTY, <<"<script>alert('x')</script>&">>).

second(T) ->
    Lat = #{<<"count">> => 10, <<"mean_ms">> => 1.5, <<"p50_ms">> => 1.0, <<"p90_ms">> => 2.0,
            <<"p99_ms">> => 3.0, <<"p999_ms">> => 4.0, <<"max_ms">> => 5.0},
    #{<<"t_s">> => T, <<"phase">> => ?NASTY, <<"offered_per_s">> => 10.0,
      <<"sessions_started">> => 9, <<"sessions_done">> => 8, <<"requests">> => 10,
      <<"errors">> => 1, <<"timeouts">> => 0, <<"latency_corrected">> => Lat,
      <<"latency_uncorrected">> => Lat, <<"session_duration">> => Lat#{<<"count">> => 0}}.

data() ->
    #{run => #{<<"kind">> => <<"load">>, <<"scenario">> => ?NASTY, <<"label">> => ?NASTY,
               <<"phases">> => [#{<<"name">> => ?NASTY, <<"duration_s">> => 1, <<"rate">> => 10.0,
                                  <<"max_users">> => <<"infinity">>}],
               <<"not_sampled">> => [#{<<"target">> => ?NASTY, <<"reason">> => ?NASTY}]},
      summary => #{<<"per_second">> => [second(1), second(2)], <<"requests">> => 20,
                   <<"transactions">> => #{?NASTY => #{<<"count">> => 1}},
                   <<"load_nodes">> => [#{<<"node">> => ?NASTY, <<"requests">> => 10},
                                        #{<<"node">> => <<"b">>, <<"requests">> => 10}]},
      samples => [], lcnt => []}.

escaped_test() ->
    Html = iolist_to_binary(beamscale_report_load:index(data())),
    ?assertEqual(nomatch, binary:match(Html, <<"<script">>)),
    ?assert(length(binary:matches(Html, beamscale_report_html:escape(?NASTY))) >= 5).

charts_test() ->
    #{summary := Summary} = data(),
    Graphs = beamscale_report_load:graphs(Summary),
    Html = iolist_to_binary(beamscale_report_load:index(data())),
    ?assertEqual(length(Graphs), length(binary:matches(Html, <<"<svg">>))),
    %% A second without sessions ending has no session-duration point.
    [{_, _, _, [#{points := []} | _]}] =
        [G || {<<"session duration">>, _, _, _} = G <- Graphs],
    [{_, _, _, [#{points := [{1, 10}, {2, 10}]}]}] =
        [G || {<<"requests">>, _, _, _} = G <- Graphs].

%% Tsung's figures: stddev and min beside the percentiles, the 10 s means' table, a connect
%% time chart when the run connected, none of them on a run stored before they were kept.
tsung_figures_test() ->
    #{summary := S0} = D0 = data(),
    Old = iolist_to_binary(beamscale_report_load:index(D0)),
    ?assertEqual(nomatch, binary:match(Old, <<"10 s mean">>)),
    ?assertEqual([], [G || {<<"connect time", _/binary>>, _, _, _} = G
                               <- beamscale_report_load:graphs(S0)]),
    Connect = #{<<"count">> => 4, <<"mean_ms">> => 0.25, <<"p50_ms">> => 0.2,
                <<"p99_ms">> => 0.5},
    S = S0#{<<"latency_corrected">> => #{<<"count">> => 20, <<"stddev_ms">> => 0.125,
                                         <<"min_ms">> => 0.0625},
            <<"connect_time">> => Connect, <<"connections_opened">> => 3,
            <<"per_second">> => [(second(T))#{<<"connect_time">> => Connect,
                                              <<"connected">> => 4 - T} || T <- [1, 2]],
            <<"ten_second_means">> =>
                #{<<"requests_per_s">> => #{<<"highest">> => 12.5, <<"lowest">> => 7.5}}},
    Html = iolist_to_binary(beamscale_report_load:index(D0#{summary => S})),
    [?assertNotEqual(nomatch, binary:match(Html, T))
     || T <- [<<"stddev (ms)">>, <<"min (ms)">>, <<"0.125">>, <<"0.0625">>, <<"10 s mean">>,
              <<"requests/s</td><td class=\"t\">12.5</td><td class=\"t\">7.5</td>">>]],
    [{_, _, _, [#{points := [{1, 0.25}, {2, 0.25}]} | _]}] =
        [G || {<<"connect time", _/binary>>, _, _, _} = G <- beamscale_report_load:graphs(S)],
    [{_, _, _, [#{points := [{1, 3}, {2, 2}]}]}] =
        [G || {<<"connections open", _/binary>>, _, _, _} = G
                  <- beamscale_report_load:graphs(S)],
    ?assertEqual([], [G || {<<"connections open", _/binary>>, _, _, _} = G
                               <- beamscale_report_load:graphs(S0)]),
    %% Tsung's page per second: its time (mean, p50, p99) and its count, only when kept.
    Page = #{<<"count">> => 3, <<"mean_ms">> => 1.5, <<"p50_ms">> => 1.25, <<"p99_ms">> => 2.0},
    SP = S#{<<"page_time">> => Page,
            <<"per_second">> => [(second(T))#{<<"page_time">> => Page#{<<"count">> => T}}
                                 || T <- [1, 2]]},
    [{_, _, _, [#{points := [{1, 1.5}, {2, 1.5}]}, _, #{points := [{1, 2.0}, {2, 2.0}]}]}] =
        [G || {<<"page time", _/binary>>, _, _, _} = G <- beamscale_report_load:graphs(SP)],
    [{_, <<"pages/s">>, _, [#{points := [{1, 1}, {2, 2}]}]}] =
        [G || {<<"pages", _/binary>>, _, _, _} = G <- beamscale_report_load:graphs(SP)],
    ?assertEqual([], [G || {<<"page", _/binary>>, _, _, _} = G
                               <- beamscale_report_load:graphs(S)]).

%% Errors by reason: a chart with the most frequent reasons apart and the rest summed, escaped
%% reasons in the table, targets down named; none of it without errors.
reasons_test() ->
    #{summary := S0, run := Run0} = D0 = data(),
    ?assertEqual([], [G || {<<"errors by reason">>, _, _, _} = G
                               <- beamscale_report_load:graphs(S0)]),
    Reasons = maps:from_list([{<<"r", (integer_to_binary(I))/binary>>, 100 - I}
                              || I <- lists:seq(1, 9)] ++ [{?NASTY, 200}]),
    Secs = [(second(T))#{<<"errors_by_reason">> => #{?NASTY => T, <<"r9">> => 1}}
            || T <- [1, 2]],
    S = S0#{<<"per_second">> => Secs, <<"errors_by_reason">> => Reasons},
    [{_, _, _, Series}] = [G || {<<"errors by reason">>, _, _, _} = G
                                    <- beamscale_report_load:graphs(S)],
    ?assertEqual(7, length(Series)),
    [#{name := ?NASTY, points := [{1, 1}, {2, 2}]} | _] = Series,
    #{name := <<"other reasons">>, points := [{1, 1}, {2, 1}]} = lists:last(Series),
    Run = Run0#{<<"targets_down">> => [#{<<"target">> => <<"sut">>, <<"node">> => <<"n@h">>,
                                         <<"at_s">> => 1.5}]},
    Html = iolist_to_binary(beamscale_report_load:index(D0#{summary := S, run := Run})),
    ?assertEqual(nomatch, binary:match(Html, <<"<script">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"sut (n@h) at 1.5 s">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"error reason">>)).

%% Connect times and bytes are shown when the run has them, and no empty row when it has not.
connect_and_bytes_test() ->
    #{summary := S} = D = data(),
    Old = iolist_to_binary(beamscale_report_load:index(D)),
    ?assertEqual(nomatch, binary:match(Old, <<"TLS handshake">>)),
    ?assertEqual(nomatch, binary:match(Old, <<"bytes sent">>)),
    New = iolist_to_binary(beamscale_report_load:index(
                             D#{summary := S#{<<"connect_time">> => #{<<"count">> => 7},
                                              <<"bytes_sent">> => 123456}})),
    ?assertNotEqual(nomatch, binary:match(New, <<"connect (TCP, and the TLS handshake)">>)),
    %% The column is headed by the run files' table (`beamscale_format_load'), with its value.
    ?assertNotEqual(nomatch, binary:match(New, <<"<th>bytes sent (B)</th>">>)),
    ?assertNotEqual(nomatch, binary:match(New, <<">123456</td>">>)).

%% Replies by status: a series per code over time and a table of the totals; none without.
statuses_test() ->
    #{summary := S0} = D0 = data(),
    ?assertEqual([], [G || {<<"replies by status">>, _, _, _} = G
                               <- beamscale_report_load:graphs(S0)]),
    Secs = [(second(T))#{<<"statuses">> => #{<<"200">> => 9, <<"404">> => T}} || T <- [1, 2]],
    S = S0#{<<"per_second">> => Secs, <<"statuses">> => #{<<"200">> => 18, <<"404">> => 3}},
    [{_, _, _, [#{name := <<"200">>, points := [{1, 9}, {2, 9}]},
                #{name := <<"404">>, points := [{1, 1}, {2, 2}]}]}] =
        [G || {<<"replies by status">>, _, _, _} = G <- beamscale_report_load:graphs(S)],
    Html = iolist_to_binary(beamscale_report_load:index(D0#{summary := S})),
    ?assertMatch({_, _}, binary:match(Html, <<"<th>replies</th>">>)).

%% A broker's delivery and confirm times (histograms its kind declares) are transaction rows.
broker_times_test() ->
    #{summary := S} = D = data(),
    Html = fun(Tx) -> iolist_to_binary(beamscale_report_load:index(
                                         D#{summary := S#{<<"transactions">> => Tx}}))
           end,
    Empty = Html(#{}),
    ?assertEqual(nomatch, binary:match(Empty, <<"transaction delivery_time">>)),
    Some = Html(#{<<"delivery_time">> => #{<<"count">> => 3, <<"p99_ms">> => 1.5}}),
    ?assertNotEqual(nomatch, binary:match(Some, <<"transaction delivery_time">>)),
    ?assertEqual(nomatch, binary:match(Some, <<"confirm_time">>)).

%% The page opens with the totals (before the run's facts and the charts); the scenario's
%% warnings (run.json's `warnings') are listed, escaped, and no section without any.
totals_first_and_warnings_test() ->
    #{run := Run} = D = data(),
    Page = fun(Data) -> iolist_to_binary(beamscale_report_load:index(Data)) end,
    Html = Page(D#{run := Run#{<<"warnings">> => [?NASTY, <<"not applied: seed">>]}}),
    {Totals, _} = binary:match(Html, <<"<h2>Totals</h2>">>),
    {RunAt, _} = binary:match(Html, <<"<h2>Run</h2>">>),
    {Svg, _} = binary:match(Html, <<"<svg">>),
    ?assert(Totals < RunAt andalso RunAt < Svg),
    {Warn, _} = binary:match(Html, <<"<h2>Warnings of the scenario</h2>">>),
    ?assert(Warn < RunAt),
    ?assertMatch({_, _}, binary:match(Html, <<"<li>not applied: seed</li>">>)),
    ?assertEqual(nomatch, binary:match(Html, <<"<script">>)),
    ?assertEqual(nomatch, binary:match(Page(D), <<"Warnings of the scenario">>)).

%% The named counts (counters.csv) are a table on the page, sorted; none without counts.
counters_test() ->
    #{summary := S} = D = data(),
    Counts = #{<<"request_noack">> => 3, <<"match.-">> => 16, <<"nomatch.-">> => 75},
    Html = iolist_to_binary(beamscale_report_load:index(D#{summary := S#{<<"counts">> =>
                                                                            Counts}})),
    At = fun(K, V) ->
                 {match, [{P, _}]} = re:run(Html, ["<td[^>]*>", K, "</td><td[^>]*>", V,
                                                   "</td>"]),
                 P
         end,
    {M, N, R} = {At("match\\.-", "16"), At("nomatch\\.-", "75"), At("request_noack", "3")},
    ?assert(M < N andalso N < R),
    ?assertEqual(nomatch, binary:match(iolist_to_binary(beamscale_report_load:index(D)),
                                       <<"<th>counter</th>">>)).
