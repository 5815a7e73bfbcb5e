-module(beamscale_report_svg_tests).
-include_lib("eunit/include/eunit.hrl").

count(Pattern, Bin) -> length(binary:matches(iolist_to_binary(Bin), Pattern)).

line_chart_counts_series_and_points_test() ->
    S = [#{name => "a", points => [{1, 2.0, 1.5, 2.5}, {2, 1.0}]},
         #{name => "b<x>", points => [{1, 1.0}, {2, 0.5}], dashed => true}],
    Svg = iolist_to_binary(beamscale_report_svg:line_chart(S, #{title => "t & u"})),
    ?assertEqual(2, count(<<"class=\"series\"">>, Svg)),
    ?assertEqual(4, count(<<"<circle">>, Svg)),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"data-series=\"2\"">>)),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"b&lt;x&gt;">>)),
    ?assertEqual(nomatch, binary:match(Svg, <<"b<x>">>)),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"t &amp; u">>)),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"stroke-dasharray">>)),
    %% Hover text carries the interval.
    ?assertNotEqual(nomatch, binary:match(Svg, <<"a: x=1, y=2 [1.5, 2.5]">>)).

bar_chart_grouped_and_stacked_test() ->
    S = [#{name => "u", values => [1, 2, 3]}, #{name => "s", values => [0.5, 0.5, 0.5]}],
    Cats = ["x", "y", "z"],
    G = iolist_to_binary(beamscale_report_svg:bar_chart(Cats, S, #{})),
    St = iolist_to_binary(beamscale_report_svg:bar_chart(Cats, S, #{stacked => true})),
    ?assertEqual(6, count(<<"<rect x=">>, G)),
    ?assertEqual(6, count(<<"<rect x=">>, St)),
    ?assertEqual(2, count(<<"class=\"series\"">>, St)).

empty_chart_test() ->
    Svg = iolist_to_binary(beamscale_report_svg:line_chart([], #{})),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"data-series=\"0\"">>)).

ticks_test() ->
    ?assertEqual([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], beamscale_report_svg:ticks(0, 1, 5)),
    ?assertEqual([0.0, 20.0, 40.0], beamscale_report_svg:ticks(0, 45, 3)).

fmt_test() ->
    ?assertEqual(<<"3">>, beamscale_report_svg:fmt(3)),
    ?assertEqual(<<"0.0123">>, beamscale_report_svg:fmt(0.012345)),
    ?assertEqual(<<"1.5">>, beamscale_report_svg:fmt(1.5)),
    ?assertEqual(<<"123">>, beamscale_report_svg:fmt(123.4)).

escape_test() ->
    ?assertEqual(<<"&lt;script&gt;&amp;&quot;&#39;é"/utf8>>,
                 beamscale_report_html:escape(<<"<script>&\"'"/utf8, "é"/utf8>>)),
    ?assertEqual(<<"<td class=\"t\">&lt;b&gt;</td>">>,
                 iolist_to_binary(beamscale_report_html:el(td, [{class, "t"}], "<b>"))).
