%% The live page's formatter: figures from the latest second, users in flight, phase boundaries,
%% and every text from the run (label, phase, error reason) escaped in the page and its HTML.
-module(beamscale_report_live_tests).
-include_lib("eunit/include/eunit.hrl").

-define(EVIL, <<"<script>alert(1)</script>">>).

data(Secs) ->
    #{run => #{<<"label">> => ?EVIL, <<"msacc">> => 10,
               <<"phases">> => [#{<<"name">> => <<"a">>, <<"duration_s">> => 2, <<"rate">> => 5},
                                #{<<"name">> => <<"b">>, <<"duration_s">> => 3,
                                  <<"rate">> => 20}]},
      summary => #{<<"per_second">> => Secs, <<"errors_by_reason">> => #{?EVIL => 3}},
      samples => [], lcnt => [], state => running}.

second(T, Phase, Offered, Started, Done) ->
    Lat = #{<<"p50_ms">> => 1.5, <<"p99_ms">> => 9.0, <<"p90_ms">> => 2.0,
            <<"p999_ms">> => 10.0, <<"count">> => 4, <<"mean_ms">> => 2.0, <<"max_ms">> => 10.0},
    #{<<"t_s">> => T, <<"phase">> => Phase, <<"offered_per_s">> => Offered,
      <<"sessions_started">> => Started, <<"sessions_done">> => Done, <<"requests">> => Started,
      <<"errors">> => 1, <<"timeouts">> => 0, <<"errors_by_reason">> => #{?EVIL => 1},
      <<"latency_corrected">> => Lat, <<"latency_uncorrected">> => Lat#{<<"p99_ms">> => 3.0},
      <<"session_duration">> => Lat, <<"transactions">> => #{}}.

json(Data) ->
    {ok, J} = beamscale_format_json:decode(beamscale_report_live:load_json(Data)),
    J.

latest_second_test() ->
    J = json(data([second(1, <<"a">>, 5, 6, 4), second(3, ?EVIL, 20, 21, 20)])),
    ?assertEqual(20, maps:get(<<"offered_per_s">>, J)),
    ?assertEqual(3, maps:get(<<"users_in_flight">>, J)),
    ?assertMatch(#{<<"offered_per_s">> := <<"20">>, <<"p99_uncorrected_ms">> := <<"3">>},
                 maps:get(<<"figures">>, J)),
    ?assertMatch([#{<<"from_s">> := 0, <<"to_s">> := 2}, #{<<"from_s">> := 2, <<"to_s">> := 5}],
                 maps:get(<<"phases">>, J)).

%% Several scenarios side by side: each from its own start.
scenarios_boundaries_test() ->
    D = data([second(1, <<"a">>, 5, 6, 4)]),
    Run = (maps:get(run, D))#{<<"phases">> => [#{<<"name">> => <<"a">>, <<"duration_s">> => 8,
                                                 <<"start_s">> => 0},
                                               #{<<"name">> => <<"b">>, <<"duration_s">> => 2,
                                                 <<"start_s">> => 3}]},
    ?assertMatch([#{<<"from_s">> := 0, <<"to_s">> := 8}, #{<<"from_s">> := 3, <<"to_s">> := 5}],
                 maps:get(<<"phases">>, json(D#{run := Run}))).

escaped_test() ->
    D = data([second(1, ?EVIL, 5, 6, 4)]),
    Page = iolist_to_binary(beamscale_report_live:load_page(D)),
    Html = maps:get(<<"html">>, json(D)),
    %% The page's one script is its own; the run's texts show as text.
    ?assertEqual(1, length(binary:matches(Page, <<"<script>">>))),
    ?assertEqual(nomatch, binary:match(Html, <<"<script>">>)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"&lt;script&gt;">>)).

waiting_test() ->
    J = json(data([])),
    ?assertEqual(0, maps:get(<<"users_in_flight">>, J)),
    ?assertNotEqual(nomatch, binary:match(maps:get(<<"html">>, J), <<"Waiting">>)).

%% Every figure of the run files' table (`beamscale_format_load') has its cell, headed by its
%% label and unit, and its text in /live.json's `figures'.
table_figures_test() ->
    D = data([second(1, <<"a">>, 5, 6, 4)]),
    Page = iolist_to_binary(beamscale_report_live:load_page(D)),
    Figures = maps:get(<<"figures">>, json(D)),
    [begin
         K = atom_to_binary(Key),
         ?assertNotEqual(nomatch, binary:match(Page, <<"data-key=\"", K/binary, "\"">>)),
         ?assertNotEqual(nomatch, binary:match(Page, beamscale_format_load:heading(E))),
         ?assert(is_map_key(K, Figures))
     end || #{key := Key} = E <- beamscale_format_load:live()],
    ?assertMatch(#{<<"p99_ms">> := <<"9">>, <<"achieved_per_s">> := <<"6">>}, Figures).

%% The live charts are the final page's (issue 39): replies by status over time, users in
%% flight, bytes per second and each request name's p99 and requests; bytes per second among
%% the figures.
live_charts_test() ->
    Named = #{<<"GET /">> => #{<<"requests">> => 6, <<"p99_ms">> => 4.0}},
    S = fun(T) -> (second(T, <<"a">>, 5, 6, 4))#{<<"statuses">> => #{<<"200">> => 5,
                                                                      <<"404">> => 1},
                                                 <<"bytes_sent">> => 600,
                                                 <<"bytes_received">> => 9000,
                                                 <<"requests_by_name">> => Named} end,
    D = data([S(1), S(2)]),
    #{summary := Sum} = D,
    D1 = D#{summary := Sum#{<<"statuses">> => #{<<"200">> => 10, <<"404">> => 2}}},
    J = json(D1),
    Html = maps:get(<<"html">>, J),
    [?assertNotEqual(nomatch, binary:match(Html, <<"<title>", T/binary>>))
     || T <- [<<"replies by status">>, <<"users in flight">>, <<"bytes per second">>,
              <<"latency by request name">>, <<"requests by name">>]],
    ?assertMatch(#{<<"bytes_received_per_s">> := <<"9000">>}, maps:get(<<"figures">>, J)).

%% A stalled load node (issue 55) shows on the live page as it does on the final one: a row of
%% the events' table, its node and late users named, and a short mark on the charts.
stall_event_test() ->
    D = data([second(1, <<"a">>, 5, 6, 4), second(2, <<"a">>, 5, 6, 4)]),
    #{summary := Sum} = D,
    Text = <<"load node bs_load1_x@127.0.0.1 stalled 2.9 s: 57 users due meanwhile counted "
             "late, not started">>,
    Stall = #{<<"t_s">> => 1.4, <<"event">> => Text, <<"node">> => <<"bs_load1_x@127.0.0.1">>,
              <<"lasted_s">> => 2.9, <<"late">> => 57},
    Html = maps:get(<<"html">>, json(D#{summary := Sum#{<<"events">> => [Stall]}})),
    ?assertNotEqual(nomatch, binary:match(Html, <<"<h2>Events</h2>">>)),
    ?assertNotEqual(nomatch, binary:match(Html, Text)),
    ?assertNotEqual(nomatch, binary:match(Html, <<">stall 2.9 s</text>">>)).
