%% @doc A history's series and change points as text (`history show'), one self-contained page
%% (`history page': per benchmark a chart of each environment and metric over commits with
%% intervals and the change points marked, and the table of changes), CSV of every record and
%% Bencher Metric Format JSON (pure).
-module(beamscale_report_history).

-export([text/1, html/2, csv/1, bmf/2, changes_table/1]).

-type analysed() :: [{beamscale_stats_history:series(), [beamscale_stats_history:change()]}].

-define(CSV_HEADER, [seq, commit, date, branch, label, run, kind, clock, benchmark,
                     environment, metric, value, low, high, better, primary]).

%% @doc Each series in a line, its changes under it.
-spec text(analysed()) -> iodata().
text([]) -> "no series in the history (record runs with `beamscale history record')\n";
text(Analysed) ->
    [[io_lib:format("~ts  ~ts  ~ts: ~b commits, newest ~ts~n",
                    [B, E, M, length(Ps), num(V)]),
      [io_lib:format("  change at ~ts (commit #~b): ~ts -> ~ts, ratio ~ts, p ~ts~ts~n",
                     [short(C), I + 1, num(Bf), num(Af), ratio_text(Ch), p_text(P),
                      case Reg of true -> "  REGRESSION"; false -> "" end])
       || #{index := I, commit := C, before := Bf, 'after' := Af, p := P,
            regression := Reg} = Ch <- Cs]]
     || {#{benchmark := B, environment := E, metric := M, points := Ps}, Cs} <- Analysed,
        #{value := V} <- [lists:last(Ps)]].

%% @doc The page: a section per benchmark, then the table of every change.
-spec html(analysed(), #{title := beamscale_report_html:text()}) -> iodata().
html(Analysed, #{title := Title}) ->
    %% The charts of each benchmark, in one pass over the series.
    ByBench = maps:groups_from_list(fun({#{benchmark := B}, _}) -> B end,
                                    fun({S, Cs}) -> chart(S, Cs) end, Analysed),
    Sections = [beamscale_report_html:section(
                  B, beamscale_report_html:el('div', [{class, "charts"}],
                                              {safe, maps:get(B, ByBench)}))
                || B <- lists:sort(maps:keys(ByBench))],
    Body = [beamscale_report_html:el(h1, Title),
            beamscale_report_html:el(p, io_lib:format("~b series, ~b change points "
                                                      "(E-Divisive means, t-test stopping "
                                                      "rule; docs/history.md)",
                                                      [length(Analysed),
                                                       length(lists:append([C || {_, C} <-
                                                                                  Analysed]))])),
            beamscale_report_html:section("Changes", changes_table(Analysed)),
            Sections],
    beamscale_report_html:page(Title, ".marker line{stroke:#b00;stroke-width:2}", Body).

%% @doc The table of changes: commit, benchmark, environment, metric, before, after, ratio.
-spec changes_table(analysed()) -> iodata().
changes_table(Analysed) ->
    Rows = [{case Reg of true -> "slower"; false -> "faster" end,
             [short(C), B, E, M, num(Bf), num(Af), ratio_text(Ch), p_text(P)]}
            || {#{benchmark := B, environment := E, metric := M}, Cs} <- Analysed,
               #{commit := C, before := Bf, 'after' := Af, p := P, regression := Reg} = Ch <- Cs],
    case Rows of
        [] -> beamscale_report_html:el(p, [{class, "changes-none"}], "no change point");
        _ -> beamscale_report_html:el(
               'div', [{class, "changes"}],
               {safe, beamscale_report_html:table(["commit", "benchmark", "environment",
                                                   "metric", "before", "after",
                                                   "ratio (95 %)", "p"], Rows)})
    end.

%% @doc Every entry of every record, one CSV line each.
-spec csv([map()]) -> iodata().
csv(Records) ->
    [beamscale_format_csv:line(?CSV_HEADER)
     | [beamscale_format_csv:line([field(F, R, E) || F <- ?CSV_HEADER])
        || R <- Records, #{} = E <- maps:get(<<"entries">>, R, [])]].

%% @doc Bencher Metric Format of one commit's records: benchmark (with its environment) ->
%% metric -> value, lower_value, upper_value.
-spec bmf([map()], binary()) -> iodata().
bmf(Records, Commit) ->
    Entries = [E || #{<<"commit">> := C} = R <- Records, C =:= Commit,
                    #{} = E <- maps:get(<<"entries">>, R, [])],
    Names = lists:foldl(fun(E, Acc) ->
                                Name = bmf_name(E),
                                M = maps:get(<<"metric">>, E),
                                Old = maps:get(Name, Acc, #{}),
                                Acc#{Name => Old#{M => bmf_value(E)}}
                        end, #{}, Entries),
    [beamscale_format_json:encode(Names), $\n].

%%% Internals

chart(#{metric := M, environment := E, points := Ps, clock := Clock}, Cs) ->
    Points = [point(I, P) || {I, P} <- lists:enumerate(Ps)],
    Ticks = [{I, short(C)} || {I, #{commit := C}} <- lists:enumerate(Ps)],
    Markers = [{I + 1, ["change ", short(C)]} || #{index := I, commit := C} <- Cs],
    Svg = beamscale_report_svg:line_chart(
            [#{name => M, points => Points}],
            #{title => E, x_label => "commit", y_label => [M, " (", Clock, " clock)"],
              y_min => auto, x_ticks => Ticks, markers => Markers, width => 560}),
    beamscale_report_html:el('div', [{class, "history-chart"},
                                     {'data-changes', length(Cs)}], {safe, Svg}).

point(I, #{value := V, low := L, high := H}) when is_number(L), is_number(H) -> {I, V, L, H};
point(I, #{value := V}) -> {I, V}.

ratio_text(#{ratio := null}) -> "-";
ratio_text(#{ratio := R, ratio_low := Lo, ratio_high := Hi}) when is_number(Lo),
                                                                  is_number(Hi) ->
    [num(R), " (", num(Lo), "..", num(Hi), ")"];
ratio_text(#{ratio := R}) -> num(R).

short(C) when byte_size(C) > 10 -> binary:part(C, 0, 10);
short(C) -> C.

p_text(P) when P < 1.0e-4 -> "< 0.0001";
p_text(P) -> num(P).

num(null) -> "-";
num(X) when is_number(X) -> beamscale_report_svg:fmt(X).

field(F, R, _E) when F =:= seq; F =:= commit; F =:= date; F =:= branch; F =:= label; F =:= run;
                    F =:= kind; F =:= clock ->
    csv_value(maps:get(atom_to_binary(F), R, <<>>));
field(environment, _R, E) ->
    beamscale_stats_history:env_text(maps:get(<<"environment">>, E, #{}));
field(F, _R, E) -> csv_value(maps:get(atom_to_binary(F), E, <<>>)).

csv_value(null) -> <<>>;
csv_value(V) when is_binary(V); is_number(V) -> V;
csv_value(V) when is_atom(V) -> atom_to_binary(V);
csv_value(_) -> <<>>.

bmf_name(E) ->
    case field(environment, #{}, E) of
        <<>> -> maps:get(<<"benchmark">>, E);
        Env -> iolist_to_binary([maps:get(<<"benchmark">>, E), " (", Env, ")"])
    end.

bmf_value(#{<<"value">> := V} = E) ->
    maps:merge(#{value => V},
               maps:from_list([{K, X} || {K, F} <- [{lower_value, <<"low">>},
                                                    {upper_value, <<"high">>}],
                                         X <- [maps:get(F, E, null)], is_number(X)])).
