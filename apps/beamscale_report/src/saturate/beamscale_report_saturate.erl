%% @doc `index.html' of a `beamscale saturate' run, as a pure formatter: the objective and the
%% capacity found (with its bracket and the term that limited it), latency against offered load
%% (corrected percentiles, p99 from the send dashed), achieved against offered throughput (with
%% the line where they are equal), the knee marked on both as a dashed vertical line at the
%% capacity, and the levels in the order they ran. Input: `summary.json''s map and the levels'
%% figures (`beamscale_stats_saturate:figures()' with held, broken).
-module(beamscale_report_saturate).

-export([index/2, graphs/2]).

%% A chart: title, y axis label, unit and series (for `beamscale_report_svg:line_chart/2').
-type graph() :: {binary(), binary(), binary(), [beamscale_report_svg:series()]}.

-define(PCTS, [{p50_ms, <<"p50">>}, {p99_ms, <<"p99">>}, {p999_ms, <<"p99.9">>}]).

%% @doc The whole page.
-spec index(map(), [map()]) -> iodata().
index(Summary, Levels) ->
    Title = <<"beamscale saturate">>,
    beamscale_report_html:page(Title, <<>>,
                               [beamscale_report_html:el(h1, Title),
                                beamscale_report_html:section("Capacity", facts(Summary)),
                                beamscale_report_html:section("Against offered load",
                                                              charts(Summary, Levels)),
                                beamscale_report_html:section("Levels, in the order run",
                                                              table(Levels))]).

%% @doc The charts drawn, in order; exposed so tests can count their series.
-spec graphs(map(), [map()]) -> [graph()].
graphs(Summary, Levels) ->
    Sorted = lists:sort(fun(A, B) -> offered(A) =< offered(B) end, Levels),
    Pts = fun(K) -> [{offered(L), num(maps:get(K, L))} || L <- Sorted] end,
    MaxLat = lists:max([1.0 | [num(maps:get(K, L)) || L <- Levels, {K, _} <- ?PCTS]]),
    MaxRate = lists:max([1.0 | [offered(L) || L <- Levels]]),
    [{<<"latency against offered load (from the intended start; p99 from the send dashed)">>,
      <<"ms">>, <<" ms">>,
      [#{name => [N, " corrected"], points => Pts(K)} || {K, N} <- ?PCTS]
      ++ [#{name => <<"p99 uncorrected">>, dashed => true, points => Pts(p99_sent_ms)}]
      ++ knee(Summary, MaxLat)},
     {<<"achieved against offered">>, <<"sessions/s">>, <<"/s">>,
      [#{name => <<"achieved">>, points => Pts(achieved_per_s)},
       #{name => <<"offered (ideal)">>, dashed => true, points => [{0, 0}, {MaxRate, MaxRate}]}]
      ++ knee(Summary, MaxRate)}].

%% The knee: a vertical dashed line at the capacity, when there is one.
knee(#{capacity_per_s := C}, Top) when is_number(C) ->
    [#{name => <<"capacity">>, dashed => true, points => [{C, 0}, {C, Top}]}];
knee(_, _) -> [].

charts(Summary, Levels) ->
    Charts = [beamscale_report_svg:line_chart(Series, #{title => T, x_label => "offered /s",
                                                        y_label => Y, unit => U,
                                                        x_ticks => auto})
              || {T, Y, U, Series} <- graphs(Summary, Levels)],
    beamscale_report_html:el(section, [{class, "charts"}], {safe, Charts}).

facts(S) ->
    Facts = [{"Objective", maps:get(slo, S)},
             {"Capacity (/s): the highest rate held", maps:get(capacity_per_s, S)},
             {"Lowest rate not held (/s)", maps:get(capacity_high_per_s, S)},
             {"Limited by (broken first while rising)", maps:get(limited_by, S)},
             {"Terms broken at that level", lists:join(", ", maps:get(broken_first, S))},
             {"Search stopped", maps:get(stopped, S)},
             {"Levels run", maps:get(levels, S)},
             {"Level length, warm-up dropped (s)",
              io_lib:format("~b, ~b", [maps:get(level_s, S), maps:get(warmup_s, S)])}],
    beamscale_report_html:table(["", ""], [[K, cell(V)] || {K, V} <- Facts]).

table(Levels) ->
    Cols = [offered_per_s, achieved_per_s, p50_ms, p99_ms, p999_ms, p99_sent_ms, requests,
            errors],
    Head = ["offered /s", "achieved /s", "p50 ms", "p99 ms", "p99.9 ms", "p99 from send ms",
            "requests", "errors", "held", "broken"],
    beamscale_report_html:table(
      Head, [{held_class(L), [cell(maps:get(C, L)) || C <- Cols]
                             ++ [cell(maps:get(held, L)),
                                 cell(lists:join(", ", maps:get(broken, L)))]}
             || L <- Levels]).

held_class(#{held := true}) -> "held";
held_class(_) -> "not-held".

offered(#{offered_per_s := R}) -> num(R).

num(V) when is_number(V) -> V;
num(_) -> 0.

cell(null) -> "-";
cell(V) when is_float(V) -> beamscale_report_svg:fmt(V);
cell(V) when is_integer(V) -> V;
cell(V) when is_atom(V) -> atom_to_binary(V);
cell(V) -> iolist_to_binary(V).
