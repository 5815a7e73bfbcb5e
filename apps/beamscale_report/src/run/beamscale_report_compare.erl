%% @doc The output of `beamscale compare', pure: the results of `beamscale_stats_compare' as
%% text (one line per result, then a count) and as the page `compare.html' (a table and a chart
%% of the ratios). The statistics stay in beamscale_stats, which draws nothing.
-module(beamscale_report_compare).

-export([text/1, html/2]).

%% @doc One line per result, then a count.
-spec text([beamscale_stats_compare:result()]) -> iodata().
text([]) -> "no benchmark, phase, args and environment measured in both runs\n";
text(Results) ->
    [[io_lib:format("~ts  ~ts  ~ts~n", [label(K), ratio_text(R), verdict(R)])
      || #{key := K} = R <- Results],
     io_lib:format("~b compared, ~b significantly slower, ~b significantly faster~n",
                   [length(Results), count(slower, Results), count(faster, Results)])].

%% @doc `compare.html': the ratios as a table and a bar chart.
-spec html([beamscale_stats_compare:result()],
           #{a := unicode:chardata(), b := unicode:chardata()}) -> iodata().
html(Results, #{a := A, b := B}) ->
    Rows = [{direction(R), [label(K), fmt(MA), fmt(MB), ratio_text(R), fmt(P), verdict(R)]}
            || #{key := K, median_a := MA, median_b := MB, p := P} = R <- Results],
    Table = beamscale_report_html:table(["benchmark / phase / args @ environment",
                                         "median A (s)", "median B (s)",
                                         "B / A [95 % interval]", "p (Mann-Whitney)", "verdict"],
                                        Rows),
    Chart = beamscale_report_svg:line_chart(
              [#{name => "B / A", points => [{I, R, L, H} || {I, #{ratio := R, ratio_low := L,
                                                                   ratio_high := H}}
                                                                 <- enumerate(Results),
                                                             R =/= null]},
               #{name => "equal", dashed => true, color => "#999",
                 points => [{I, 1.0} || {I, _} <- enumerate(Results)]}],
              #{title => "ratio of medians per result (row number)", x_label => "result",
                y_label => "B / A", y_min => auto, width => 720}),
    beamscale_report_html:page("beamscale compare", <<>>,
                               [beamscale_report_html:el(h1, "beamscale compare"),
                                beamscale_report_html:el(p, ["A: ", A]),
                                beamscale_report_html:el(p, ["B: ", B]),
                                beamscale_report_html:el(p, text_summary(Results)),
                                Chart, Table]).

%%% Internals

label({B, P, A, O, E, S, N}) ->
    Phase = case P of B -> ""; _ -> [" (", P, ")"] end,
    [B, Phase, " ", A, " @ ", O, "/", E, "/s", integer_to_binary(S), "/n", integer_to_binary(N)].

ratio_text(#{ratio := null}) -> "ratio undefined (median A is 0)";
ratio_text(#{ratio := R, ratio_low := L, ratio_high := H}) ->
    [fmt(R), "x [", fmt(L), ", ", fmt(H), "]"].

verdict(#{significant := false, p := P}) -> ["no significant difference (p=", fmt(P), ")"];
verdict(#{ratio := R} = Res) ->
    Pct = fmt(abs(R - 1) * 100),
    [atom_to_list(direction(Res)), " by ", Pct, " % (significant, p=", fmt(maps:get(p, Res)),
     ")"].

direction(#{significant := false}) -> same;
direction(#{ratio := R}) when R > 1 -> slower;
direction(_) -> faster.

count(Dir, Results) -> length([R || R <- Results, direction(R) =:= Dir]).

text_summary(Results) ->
    io_lib:format("~b compared, ~b significantly slower in B, ~b significantly faster in B. "
                  "Significant: Mann-Whitney p < 0.05 and the 95 % interval of the ratio "
                  "leaves out 1.", [length(Results), count(slower, Results),
                                    count(faster, Results)]).

fmt(V) -> beamscale_report_svg:fmt(V).

enumerate(L) -> lists:zip(lists:seq(1, length(L)), L).
