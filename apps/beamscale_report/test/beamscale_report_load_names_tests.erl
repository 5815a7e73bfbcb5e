%% The load page by request name (issue 39): the table with requests.csv's columns, each
%% name's p99 and requests over time; nothing of it for a run without names.
-module(beamscale_report_load_names_tests).
-include_lib("eunit/include/eunit.hrl").

fig(N, P99) ->
    #{<<"requests">> => N, <<"errors">> => 1, <<"count">> => N, <<"mean_ms">> => P99 / 2,
      <<"p50_ms">> => P99 / 2, <<"p90_ms">> => P99, <<"p99_ms">> => P99, <<"p999_ms">> => P99,
      <<"max_ms">> => P99, <<"bytes_sent">> => 10 * N, <<"bytes_received">> => 1000 * N}.

summary() ->
    Sec = fun(T, P99) -> #{<<"t_s">> => T, <<"requests_by_name">> =>
                               #{<<"GET /<a>">> => fig(5, P99), <<"login">> => fig(3, 0.0)}}
          end,
    #{<<"per_second">> => [Sec(1, 4.0), Sec(2, 8.0)],
      <<"requests_by_name">> => #{<<"GET /<a>">> => fig(10, 8.0), <<"login">> => fig(6, 1.5)}}.

table_test() ->
    Html = iolist_to_binary(beamscale_report_load_names:table(summary())),
    %% A row a name, sorted, escaped; the headings of requests.csv's columns.
    ?assertEqual(3, length(binary:matches(Html, <<"<tr>">>))),
    {A, _} = binary:match(Html, <<"GET /&lt;a&gt;">>),
    {B, _} = binary:match(Html, <<"login">>),
    ?assert(A < B),
    [?assertMatch({_, _}, binary:match(Html, H)) || H <- [<<"p99 (ms)">>, <<"bytes received">>]],
    ?assertMatch({_, _}, binary:match(Html, <<">10000</td>">>)),
    ?assertEqual(<<>>, iolist_to_binary(beamscale_report_load_names:table(#{}))).

graphs_test() ->
    [{_, <<"ms">>, _, [#{name := <<"GET /<a>">>, points := [{1, 4.0}, {2, 8.0}]},
                       #{name := <<"login">>, points := []}]},
     {_, _, _, [#{points := [{1, 5}, {2, 5}]}, #{points := [{1, 3}, {2, 3}]}]}] =
        beamscale_report_load_names:graphs(summary()),
    ?assertEqual([], beamscale_report_load_names:graphs(#{<<"per_second">> => []})),
    Page = iolist_to_binary(beamscale_report_load:index(#{run => #{}, summary => summary(),
                                                          samples => [], lcnt => []})),
    ?assertMatch({_, _}, binary:match(Page, <<"By request name">>)),
    ?assertMatch({_, _}, binary:match(Page, <<"latency by request name">>)).

%% An amoc run's tables: a throttle's rate set and achieved (`unlimited' as a word, a missing
%% figure empty), a coordinator's groups by size; nothing for a run without `amoc'.
amoc_test() ->
    Amoc = #{<<"throttles">> =>
                 [#{<<"name">> => <<"t<1>">>, <<"rate_per_s">> => 100.0, <<"released">> => 101,
                    <<"span_s">> => 1.005, <<"achieved_per_s">> => null, <<"changes">> => 1},
                  #{<<"name">> => <<"free">>, <<"rate_per_s">> => <<"unlimited">>}],
             <<"coordinators">> =>
                 [#{<<"name">> => <<"chat">>, <<"added">> => 7,
                    <<"groups">> => #{<<"2">> => 3, <<"2..3">> => 1}, <<"timeouts">> => 1,
                    <<"resets">> => 0, <<"stops">> => 0}]},
    Html = iolist_to_binary(beamscale_report_load_names:amoc(#{<<"amoc">> => Amoc})),
    ?assertMatch({match, _}, re:run(Html, "<td class=\"t\">t&lt;1&gt;</td><td class=\"t\">100"
                                          "</td><td class=\"t\">101</td><td class=\"t\">1"
                                          "</td><td class=\"t\"></td>")),
    ?assertMatch({match, _}, re:run(Html, "<td class=\"t\">free</td><td class=\"t\">unlimited")),
    ?assertMatch({match, _}, re:run(Html, "<td class=\"t\">3 of 2, 1 of 2..3</td>")),
    ?assertEqual(<<>>, iolist_to_binary(beamscale_report_load_names:amoc(#{}))),
    ?assertEqual(<<>>, iolist_to_binary(beamscale_report_load_names:amoc(
                                          #{<<"amoc">> => #{<<"throttles">> => []}}))).
