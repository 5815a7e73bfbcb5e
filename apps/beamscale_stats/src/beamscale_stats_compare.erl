%% @doc Comparing two runs, pure: per benchmark, phase, args and environment measured in both,
%% the ratio of medians B / A (above 1: B is slower) with its bootstrap 95 % interval, and the
%% two-sided Mann–Whitney U test. A difference is *significant* when p < 0.05 *and* the interval
%% leaves out 1, so a verdict never contradicts the interval printed beside it. With 3 iterations
%% per side no difference can be significant (the exact U test's smallest p is 0.1): measure
%% at least 5 to compare runs.
-module(beamscale_stats_compare).

-export([compare/2, compare/3, slower/2, text/1, html/2]).
-export_type([result/0]).

-type result() :: #{key := beamscale_stats:key(), n_a := pos_integer(), n_b := pos_integer(),
                    median_a := float(), median_b := float(), ratio := float() | null,
                    ratio_low := float() | null, ratio_high := float() | null, p := float(),
                    significant := boolean()}.

-define(ALPHA, 0.05).

%% @doc Compare the measurement rows of run A and run B, with default options.
-spec compare([map()], [map()]) -> [result()].
compare(RowsA, RowsB) -> compare(RowsA, RowsB, #{}).

%% @doc Compare the measurement rows of run A and run B (keys present in both, in key order).
-spec compare([map()], [map()], beamscale_stats:options()) -> [result()].
compare(RowsA, RowsB, Opts) ->
    GA = beamscale_stats:group(RowsA),
    GB = beamscale_stats:group(RowsB),
    [one(K, maps:get(K, GA), SB, Opts) || {K, SB} <- lists:sort(maps:to_list(GB)),
                                          is_map_key(K, GA)].

%% @doc The significant slowdowns larger than `Pct' percent.
-spec slower([result()], number()) -> [result()].
slower(Results, Pct) ->
    [R || #{significant := true, ratio := Ratio} = R <- Results, Ratio > 1 + Pct / 100].

%% @doc One line per result, then a count.
-spec text([result()]) -> iodata().
text([]) -> "no benchmark, phase, args and environment measured in both runs\n";
text(Results) ->
    [[io_lib:format("~ts  ~ts  ~ts~n", [label(K), ratio_text(R), verdict(R)])
      || #{key := K} = R <- Results],
     io_lib:format("~b compared, ~b significantly slower, ~b significantly faster~n",
                   [length(Results), count(slower, Results), count(faster, Results)])].

%% @doc `compare.html': the ratios as a table and a bar chart.
-spec html([result()], #{a := unicode:chardata(), b := unicode:chardata()}) -> iodata().
html(Results, #{a := A, b := B}) ->
    Rows = [{direction(R), [label(K), fmt(MA), fmt(MB), ratio_text(R), fmt(P), verdict(R)]}
            || #{key := K, median_a := MA, median_b := MB, p := P} = R <- Results],
    Table = beamscale_report_html:table(["benchmark / phase / args @ environment", "median A (s)",
                                  "median B (s)", "B / A [95 % interval]", "p (Mann-Whitney)",
                                  "verdict"], Rows),
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
                         beamscale_report_html:el(p, ["A: ", A]), beamscale_report_html:el(p, ["B: ", B]),
                         beamscale_report_html:el(p, text_summary(Results)),
                         Chart, Table]).

%%% Internals

one(Key, SA, SB, Opts) ->
    {Ratio, Low, High} = case beamscale_stats:bootstrap_ratio(SB, SA, Opts) of
                             undefined -> {null, null, null};
                             Found -> Found
                         end,
    #{p := P} = beamscale_stats:mann_whitney(SA, SB),
    Excludes1 = Ratio =/= null andalso (Low > 1 orelse High < 1),
    #{key => Key, n_a => length(SA), n_b => length(SB), median_a => beamscale_stats:median(SA),
      median_b => beamscale_stats:median(SB), ratio => Ratio, ratio_low => Low,
      ratio_high => High, p => P, significant => Excludes1 andalso P < ?ALPHA}.

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
