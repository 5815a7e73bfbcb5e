%% @doc The output of `beamscale compare', pure: the results of `beamscale_stats_compare' as
%% text (one line per result, then a count) and as the page `compare.html' (a table and, per
%% benchmark, both runs' scaling curves over each other). The statistics stay in
%% beamscale_stats, which draws nothing.
-module(beamscale_report_compare).

-export([text/1, html/2, label/1]).

%% @doc One line per result, then a count.
-spec text([beamscale_stats_compare:result()]) -> iodata().
text([]) -> "no benchmark, phase, args and environment measured in both runs\n";
text(Results) ->
    [[io_lib:format("~ts  ~ts  ~ts~n", [label(K), ratio_text(R), verdict(R)])
      || #{key := K} = R <- Results],
     io_lib:format("~b compared, ~b significantly slower, ~b significantly faster~n",
                   [length(Results), count(slower, Results), count(faster, Results)])].

%% @doc `compare.html': the ratios as a table, then per benchmark, phase and args both runs'
%% scaling curves on one chart (x: schedulers; a series per run and erl / flags / nodes).
-spec html([beamscale_stats_compare:result()],
           #{a := unicode:chardata(), b := unicode:chardata()}) -> iodata().
html(Results, #{a := A, b := B}) ->
    Rows = [{direction(R), [label(K), fmt(MA), fmt(MB), ratio_text(R), [p(P), test(R)],
                            verdict(R)]}
            || #{key := K, median_a := MA, median_b := MB, p := P} = R <- Results],
    Table = beamscale_report_html:table(["benchmark / phase / args @ environment",
                                         "median A (s)", "median B (s)",
                                         "B / A [95 % interval]", "p", "verdict"],
                                        Rows),
    beamscale_report_html:page("beamscale compare", <<>>,
                               [beamscale_report_html:el(h1, "beamscale compare"),
                                beamscale_report_html:el(p, ["A: ", A]),
                                beamscale_report_html:el(p, ["B: ", B]),
                                beamscale_report_html:el(p, text_summary(Results)),
                                Table,
                                beamscale_report_html:section("Scaling curves",
                                                              scaling_charts(Results))]).

%% @doc A result's key as text: benchmark (phase) args @ otp/flags/sSCHEDULERS/nNODES.
-spec label(beamscale_stats:key()) -> iodata().
label({B, P, A, O, E, S, N}) ->
    Phase = case P of B -> ""; _ -> [" (", P, ")"] end,
    [B, Phase, " ", A, " @ ", O, "/", E, "/s", integer_to_binary(S), "/n", integer_to_binary(N)].

%%% Internals

ratio_text(#{ratio := null}) -> "ratio undefined (median A is 0)";
ratio_text(#{ratio := R, ratio_low := L, ratio_high := H}) ->
    [fmt(R), "x [", fmt(L), ", ", fmt(H), "]"].

verdict(#{significant := false, p := P, floor := F} = Res) when is_float(F) ->
    ["within noise (floor ", floor_text(F), ", p", p(P), test(Res), ")"];
verdict(#{significant := false, p := P} = Res) ->
    ["no significant difference (p", p(P), test(Res), floor_text(Res), ")"];
verdict(#{ratio := R} = Res) ->
    Pct = fmt(abs(R - 1) * 100),
    [atom_to_list(direction(Res)), " by ", Pct, " % (significant, p", p(maps:get(p, Res)),
     test(Res), floor_text(Res), ")"].

%% The A/A floor: how far one side's launch medians lie apart; unknown with one launch a side.
floor_text(F) when is_float(F) -> ["+/-", fmt(F * 100), " %"];
floor_text(#{floor := F}) when is_float(F) -> [", beyond the floor ", floor_text(F)];
floor_text(#{}) -> ", no A/A floor: one launch a side".

%% Which test gave p: over launches (and how many a side), or Mann-Whitney over iterations.
test(#{test := launches, launches_a := LA, launches_b := LB}) ->
    io_lib:format(" over ~b and ~b launches, t on their medians", [LA, LB]);
test(#{test := mann_whitney}) -> ", Mann-Whitney over iterations";
test(#{}) -> "".


%% A p this small is not read more finely: said as a bound, never as 0.
p(P) when P < 0.001 -> " < 0.001";
p(P) -> ["=", fmt(P)].

direction(#{significant := false}) -> same;
direction(#{ratio := R}) when R > 1 -> slower;
direction(_) -> faster.

count(Dir, Results) -> length([R || R <- Results, direction(R) =:= Dir]).

text_summary(Results) ->
    io_lib:format("~b compared, ~b significantly slower in B, ~b significantly faster in B. "
                  "Significant: p < 0.05 and the 95 % interval of the ratio leaves out 1 "
                  "(Welch's t over the launches' medians, a launch being the unit that repeats; "
                  "with one launch a side, bootstrap interval and p of Mann-Whitney over "
                  "iterations), and the ratio beyond the A/A noise floor: the widest ratio "
                  "between two launch medians of one side.",
                  [length(Results), count(slower, Results), count(faster, Results)]).

fmt(V) -> beamscale_report_svg:fmt(V).

%% Only results of the same benchmark, phase and args share a chart, and a line joins only the
%% scheduler counts of one run and environment: unrelated results are never joined.
scaling_charts(Results) ->
    Groups = group([{{B, P, A}, R} || #{key := {B, P, A, _, _, _, _}} = R <- Results]),
    Charts = [beamscale_report_svg:line_chart(curves(Rs), #{title => bpa_title(K),
                                                            x_label => "schedulers",
                                                            y_label => "median time (s)",
                                                            unit => " s"})
              || {K, Rs} <- Groups],
    beamscale_report_html:el(section, [{class, "charts"}], {safe, Charts}).

curves(Results) ->
    Envs = group([{{O, E, N}, R} || #{key := {_, _, _, O, E, _, N}} = R <- Results]),
    [#{name => [Run, " ", O, "/", E, "/", integer_to_binary(N), "n"], dashed => Run =:= "B",
       points => lists:sort([{S, maps:get(Median, R)}
                             || #{key := {_, _, _, _, _, S, _}} = R <- Rs])}
     || {{O, E, N}, Rs} <- Envs, {Run, Median} <- [{"A", median_a}, {"B", median_b}]].

bpa_title({B, B, A}) -> [B, " ", A];
bpa_title({B, P, A}) -> [B, " (", P, ") ", A].

%% Pairs grouped by key, keys in first-seen order.
group(Pairs) ->
    Keys = lists:foldl(fun({K, _}, Ks) -> case lists:member(K, Ks) of
                                              true -> Ks;
                                              false -> Ks ++ [K]
                                          end
                       end, [], Pairs),
    [{K, [V || {K1, V} <- Pairs, K1 =:= K]} || K <- Keys].
