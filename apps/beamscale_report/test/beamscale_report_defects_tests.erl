%% The defects of issue 20, each as it was seen: busy-wait below 0, x tick labels on top of each
%% other, an empty first row in the run table, compare.html joining unrelated results.
-module(beamscale_report_defects_tests).
-include_lib("eunit/include/eunit.hrl").

%% "1.51 1.63.67": sample times of several nodes put labels a few pixels apart.
x_labels_do_not_overlap_test() ->
    Xs = [0.5, 1.0, 1.5, 1.51, 1.63, 1.67, 2.0, 2.51],
    Svg = beamscale_report_svg:line_chart([#{name => "a", points => [{X, X} || X <- Xs]}],
                                          #{x_label => "seconds"}),
    Labels = x_labels(Svg),
    ?assert(length(Labels) >= 3),
    ?assert(disjoint(Labels)).

%% Negative busy-wait (an oversubscribed host) is drawn at 0, and the page says why.
busy_wait_clamped_test() ->
    Rows = [sample(<<"1.0">>, <<"-7.5">>), sample(<<"2.0">>, <<"3.0">>)],
    Html = iolist_to_binary(beamscale_report_cpu:section(Rows, [], null)),
    Ys = [binary_to_float(Y) || [Y] <- re_all(Html, "<circle cx=\"[0-9.]+\" cy=\"([0-9.]+)\"")],
    %% No point below the 0 line (its label sits 4 pixels under it).
    [[Zero]] = re_all(Html, "<text x=\"60.0\" y=\"([0-9.]+)\" text-anchor=\"end\">0<"),
    ?assert(lists:all(fun(Y) -> Y =< binary_to_float(Zero) - 4 + 0.01 end, Ys)),
    ?assertMatch({match, _}, re:run(Html, "busy-wait estimate was below 0 in 1 interval and is "
                                          "drawn clamped at 0: the node had more runnable "
                                          "threads than cores")).

%% "dra": a phase boundary at the right edge had its label cut off; it goes left of the line.
boundary_label_inside_test() ->
    Points = [{X, X} || X <- lists:seq(1, 8)],
    Svg = iolist_to_binary(beamscale_report_svg:line_chart(
                             [#{name => "a", points => Points}],
                             #{x_label => "seconds", markers => [{2, "high"}, {8, "drain"}]})),
    [[Width]] = re_all(Svg, "<svg[^>]* width=\"([0-9.]+)\""),
    Labels = re_all(Svg, "<text x=\"([0-9.]+)\" y=\"[0-9.]+\" text-anchor=\"([a-z]+)\""
                         "[^>]*>(high|drain)<"),
    ?assertMatch([[_, <<"start">>, <<"high">>], [_, <<"end">>, <<"drain">>]], Labels),
    [[DrainX, _, _]] = [L || [_, _, <<"drain">>] = L <- Labels],
    ?assert(binary_to_float(DrainX) < binary_to_integer(Width)).

%% A count that stayed at 0 (no error at all) starts its axis at 0, not at -1.
all_zero_axis_from_zero_test() ->
    Svg = iolist_to_binary(beamscale_report_svg:line_chart(
                             [#{name => "errors", points => [{1, 0}, {2, 0}, {3, 0}]}],
                             #{x_label => "seconds", y_min => 0})),
    ?assertEqual(nomatch, binary:match(Svg, <<">-1<">>)),
    ?assertEqual(nomatch, binary:match(Svg, <<">-0.5<">>)),
    ?assertMatch({0, _}, beamscale_report_axis:domain(linear, [0, 0, 0.0], 0)),
    ?assertMatch({0, _}, beamscale_report_axis:domain(linear, [0, 0], none)).

%% The run table (metadata) has no header row of empty cells.
no_empty_first_row_test() ->
    Html = iolist_to_binary(beamscale_report_html:table(["", ""], [["a", "b"]])),
    ?assertEqual(nomatch, binary:match(Html, <<"<th></th>">>)),
    ?assertMatch({match, _}, re:run(Html, "^<table><tr><td")).

%% compare.html: per benchmark, phase and args one chart, x = schedulers, a series per run.
compare_scaling_curves_test() ->
    Results = [result(B, S, MA, MB) || B <- [<<"big">>, <<"ran">>],
                                       {S, MA, MB} <- [{1, 4.0, 4.2}, {2, 2.0, 2.4}]],
    Html = iolist_to_binary(beamscale_report_compare:html(Results, #{a => "runA", b => "runB"})),
    ?assertEqual(2, length(binary:matches(Html, <<"<svg">>))),
    ?assertEqual(2, length(binary:matches(Html, <<"data-series=\"2\"">>))),
    ?assertEqual(nomatch, binary:match(Html, <<"row number">>)),
    %% Each run's curve goes through its medians at 1 and 2 schedulers.
    ?assertNotEqual(nomatch, binary:match(Html, <<"x=2, y=2.4">>)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"x=1, y=4">>)).

%%% Helpers

result(B, S, MA, MB) ->
    #{key => {B, B, <<"[8]">>, <<"otp">>, <<"default">>, S, 1}, n_a => 5, n_b => 5,
      median_a => MA, median_b => MB, ratio => MB / MA, ratio_low => MB / MA - 0.1,
      ratio_high => MB / MA + 0.1, p => 0.01, significant => true}.

sample(T, BusyWait) ->
    #{benchmark => <<"b">>, env => <<"otp/a/2/1">>, args => <<"[1]">>, node => <<"n1">>,
      status => <<"ok">>, t_s => T, interval_s => <<"1.0">>, os_cpu_all_pct => <<"40.0">>,
      util_pct => <<"50.0">>, busy_wait_all_pct => BusyWait}.

%% The x tick labels: texts just under the plot area, as {Centre, Text}.
x_labels(Svg) ->
    [{binary_to_float(X), L}
     || [X, L] <- re_all(iolist_to_binary(Svg),
                         "<text x=\"([0-9.]+)\" y=\"272.0\" text-anchor=\"middle\">([^<]*)<")].

%% 11-pixel sans-serif digits are about 6.2 pixels wide: take 6.5 to be safe.
disjoint(Labels) ->
    Extents = lists:sort([{X - 3.25 * byte_size(L), X + 3.25 * byte_size(L)} || {X, L} <- Labels]),
    lists:all(fun({{_, R}, {L, _}}) -> R < L end, pairs(Extents)).

pairs([A, B | T]) -> [{A, B} | pairs([B | T])];
pairs(_) -> [].

re_all(Bin, Re) ->
    case re:run(Bin, Re, [global, {capture, all_but_first, binary}]) of
        {match, Ms} -> Ms;
        nomatch -> []
    end.
