%% @doc The output of `beamscale compare' on two load runs, pure: the rows of
%% `beamscale_stats_load_compare' as text and as the page `compare.html' (the table, errors by
%% reason side by side, p99 and throughput over time of both runs on one chart each). A row
%% whose interval leaves out 1 is shaded: red when B is worse, green when better.
-module(beamscale_report_load_compare).

-export([text/2, html/3]).

-type errors() :: [{binary(), non_neg_integer(), non_neg_integer()}].

%% @doc The figures, one a line, then errors by reason.
-spec text([beamscale_stats_load_compare:row()], errors()) -> iodata().
text(Rows, Errors) ->
    W = lists:max([string:length(label(R)) || R <- Rows]),
    [io_lib:format("~-*ts  ~12ts  ~12ts  ~ts~n",
                   [W, "figure", "A", "B", "B / A of per-second medians [95 % interval]"]),
     [io_lib:format("~-*ts  ~12ts  ~12ts  ~ts~n", [W, label(R), value(A), value(B), ratio(R)])
      || #{a := A, b := B} = R <- Rows],
     [["errors by reason (A, B):\n",
       [io_lib:format("  ~ts: ~b, ~b~n", [Reason, CA, CB]) || {Reason, CA, CB} <- Errors]]
      || Errors =/= []]].

%% @doc `compare.html' of runs A and B (their summaries, for the charts over time).
-spec html([beamscale_stats_load_compare:row()], errors(),
           #{a := unicode:chardata(), b := unicode:chardata(), summary_a := map(),
             summary_b := map()}) -> iodata().
html(Rows, Errors, #{a := A, b := B, summary_a := SA, summary_b := SB}) ->
    Table = beamscale_report_html:table(
              ["figure", "A (whole run)", "B (whole run)",
               "B / A of per-second medians [95 % interval]", "seconds A, B"],
              [{direction(R), [label(R), value(VA), value(VB), ratio(R),
                               io_lib:format("~b, ~b", [NA, NB])]}
               || #{a := VA, b := VB, n_a := NA, n_b := NB} = R <- Rows]),
    ErrorTable = beamscale_report_html:table(["reason", "A", "B"],
                                             [[R, CA, CB] || {R, CA, CB} <- Errors]),
    beamscale_report_html:page(
      "beamscale compare (load)",
      <<"tr.worse td{background:#fde0e0}tr.better td{background:#e0f4e0}">>,
      [beamscale_report_html:el(h1, "beamscale compare (load runs)"),
       beamscale_report_html:el(p, ["A: ", A]),
       beamscale_report_html:el(p, ["B: ", B]),
       beamscale_report_html:el(p, "Intervals: bootstrap over the seconds of the phases "
                                   "(the drain left out). Latency from the intended start "
                                   "(corrected) and from the send (uncorrected)."),
       Table,
       [beamscale_report_html:section("Errors by reason", ErrorTable) || Errors =/= []],
       beamscale_report_html:section("Over time", charts(SA, SB))]).

%%% Internals

label(#{metric := M, unit := U}) -> [M, " (", U, ")"].

value(null) -> "-";
value(V) -> fmt(V).

ratio(#{ratio := null}) -> "-";
ratio(#{ratio := R, low := L, high := H}) -> [fmt(R), "x [", fmt(L), ", ", fmt(H), "]"].

%% A row whose interval leaves out 1 is marked worse or better (its class): higher latency and
%% errors are worse, higher throughput is better.
direction(#{ratio := null}) -> "same";
direction(#{low := L} = R) when L > 1 -> worse_if(R, higher);
direction(#{high := H} = R) when H < 1 -> worse_if(R, lower);
direction(_) -> "same".

worse_if(#{metric := <<"throughput">>}, higher) -> "better";
worse_if(#{metric := <<"throughput">>}, lower) -> "worse";
worse_if(_, higher) -> "worse";
worse_if(_, lower) -> "better".

charts(SA, SB) ->
    P99 = fun(S) -> get([<<"latency_corrected">>, <<"p99_ms">>], S) end,
    Req = fun(S) -> get([<<"requests">>], S) end,
    Charts = [chart("p99 latency (corrected) per second", "ms", P99, SA, SB),
              chart("requests per second", "requests/s", Req, SA, SB)],
    beamscale_report_html:el(section, [{class, "charts"}], {safe, Charts}).

chart(Title, Unit, F, SA, SB) ->
    Series = [#{name => Name, dashed => Dashed, points => points(F, S)}
              || {Name, Dashed, S} <- [{"A", false, SA}, {"B", true, SB}]],
    beamscale_report_svg:line_chart(Series, #{title => Title, x_label => "second",
                                              y_label => Unit, unit => [" ", Unit]}).

points(F, Summary) ->
    [{T, V} || #{<<"t_s">> := T} = S <- maps:get(<<"per_second">>, Summary, []),
               V <- [F(S)], is_number(V)].

get([], V) -> V;
get([K | Rest], #{} = M) when is_map_key(K, M) -> get(Rest, maps:get(K, M));
get(_, _) -> null.

fmt(V) -> beamscale_report_svg:fmt(V).
