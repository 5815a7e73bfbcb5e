%% Axes: tick labels never overlap (a PropEr property over random ranges and widths, checked on
%% the rendered chart), log axes where values span decades, round ticks.
-module(beamscale_report_axis_tests).
%% PropEr first: eunit.hrl defines ?LET only when it is not defined yet.
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

x_labels_never_overlap_test() ->
    ?assert(proper:quickcheck(prop_x_labels_disjoint(), [{numtests, 300}, {to_file, user}])).

y_labels_never_overlap_test() ->
    ?assert(proper:quickcheck(prop_y_labels_disjoint(), [{numtests, 200}, {to_file, user}])).

%% For any data (a random offset, span and points) and chart width, the x labels drawn have
%% disjoint estimated extents, and at least one is drawn.
prop_x_labels_disjoint() ->
    ?FORALL({Xs, Width}, {xs(), integer(160, 900)},
            begin
                Svg = chart(Xs, #{width => Width}),
                Labels = labels(Svg, "<text x=\"([0-9.]+)\" y=\"272.0\" text-anchor=\"middle\">"
                                     "([^<]*)<"),
                Labels =/= [] andalso disjoint(x, Labels)
            end).

prop_y_labels_disjoint() ->
    ?FORALL({Ys, Height, Log}, {non_empty(list(float(0.001, 1.0e6))), integer(120, 500),
                                boolean()},
            begin
                Scale = case Log of true -> log; false -> linear end,
                Svg = iolist_to_binary(beamscale_report_svg:line_chart(
                                         [#{name => "s", points => [{1, Y} || Y <- Ys]}],
                                         #{height => Height, y_scale => Scale})),
                disjoint(y, labels(Svg, "<text x=\"60.0\" y=\"([0-9.]+)\" text-anchor=\"end\">"
                                        "([^<]*)<"))
            end).

xs() ->
    ?LET({Offset, Span, Fractions}, {float(-1.0e4, 1.0e4), oneof([float(0.001, 10.0),
                                                                   float(10.0, 1.0e6)]),
                                     non_empty(list(float(0.0, 1.0)))},
         [Offset + Span * F || F <- Fractions]).

chart(Xs, Opts) ->
    iolist_to_binary(beamscale_report_svg:line_chart([#{name => "s", points => [{X, 1.0}
                                                                                || X <- Xs]}],
                                                     Opts)).

labels(Svg, Re) ->
    case re:run(Svg, Re, [global, {capture, all_but_first, binary}]) of
        {match, Ms} -> [{binary_to_float(P), L} || [P, L] <- Ms];
        nomatch -> []
    end.

disjoint(Axis, Labels) ->
    Extents = lists:sort([beamscale_report_axis:extent(Axis, P, L) || {P, L} <- Labels]),
    lists:all(fun({{_, End}, {Start, _}}) -> End < Start end, pairs(Extents)).

pairs([A, B | T]) -> [{A, B} | pairs([B | T])];
pairs(_) -> [].

%% The estimate itself must not be too small: 11-pixel digits are about 6.1 pixels wide.
extent_test() ->
    {A, B} = beamscale_report_axis:extent(x, 100, "1.51"),
    ?assert(B - A >= 4 * 6.1).

%% 3 ms beside 1 000 ms: a log axis, and the 3 ms point well above the bottom.
log_axis_when_values_span_decades_test() ->
    ?assertEqual(log, beamscale_report_axis:kind(auto, [3.0, 1000.0])),
    ?assertEqual(linear, beamscale_report_axis:kind(auto, [3.0, 30.0])),
    ?assertEqual(linear, beamscale_report_axis:kind(auto, [0, 0])),
    Svg = iolist_to_binary(beamscale_report_svg:line_chart(
                             [#{name => "p99", points => [{1, 3.0}, {2, 1000.0}]}],
                             #{y_scale => auto})),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"data-y-scale=\"log\"">>)),
    {match, [[Low], [High]]} = re:run(Svg, "<circle cx=\"[0-9.]+\" cy=\"([0-9.]+)\"",
                                      [global, {capture, all_but_first, binary}]),
    %% Plot from y=28 to y=256: 3 ms sits at a sixth of the height (linear: 0.3 %).
    ?assert(256 - binary_to_float(Low) > 0.1 * 228),
    ?assert(binary_to_float(High) < binary_to_float(Low)).

log_domain_and_ticks_test() ->
    ?assertEqual({1.0, 1000.0}, beamscale_report_axis:domain(log, [3.0, 1000.0, 0.0], 0)),
    ?assertEqual([1.0, 10.0, 100.0, 1000.0], beamscale_report_axis:ticks(log, {1.0, 1000.0})),
    ?assertEqual([1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0],
                 beamscale_report_axis:ticks(log, {1.0, 100.0})).

%% Zero cannot be drawn on a log axis: the point is left out, not drawn at minus infinity.
log_axis_leaves_out_zero_test() ->
    Svg = iolist_to_binary(beamscale_report_svg:line_chart(
                             [#{name => "s", points => [{1, 0.0}, {2, 5.0}, {3, 5000.0}]}],
                             #{y_scale => log})),
    ?assertEqual(2, length(binary:matches(Svg, <<"<circle">>))).

%% Sample times get round ticks, scheduler counts their own values.
auto_x_ticks_test() ->
    ?assertEqual([1, 2, 4, 8], beamscale_report_axis:auto_x_ticks(linear, [1, 2, 4, 8])),
    ?assertEqual([1.6, 1.8, 2.0, 2.2, 2.4],
                 beamscale_report_axis:auto_x_ticks(linear, [1.51, 1.63, 1.67, 2.51])).

markers_drawn_test() ->
    Svg = iolist_to_binary(beamscale_report_svg:line_chart(
                             [#{name => "s", points => [{1, 1}, {10, 2}]}],
                             #{markers => [{5, "ramp<2>"}, {50, "outside"}]})),
    ?assertEqual(1, length(binary:matches(Svg, <<"class=\"marker\"">>))),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"ramp&lt;2&gt;">>)).
