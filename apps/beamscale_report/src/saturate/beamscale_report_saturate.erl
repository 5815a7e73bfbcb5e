%% @doc `index.html' of a `beamscale saturate' run, as a pure formatter: the objective and the
%% capacity found (with its bracket and the term that limited it), latency against offered load
%% (corrected percentiles, p99 from the send dashed), achieved against offered throughput (with
%% the line where they are equal), the target's CPU, scheduler utilisation and busy-wait per
%% level, the knee marked on each as a dashed vertical line at the capacity, and the levels in
%% the order they ran. Input: `summary.json' as decoded (binary keys) and the levels' figures
%% (`beamscale_stats_saturate:from_row/1' of `levels.csv').
-module(beamscale_report_saturate).

-export([index/2, index/3, graphs/2]).

%% A chart: title, y axis label, unit and series (for `beamscale_report_svg:line_chart/2').
-type graph() :: {binary(), binary(), binary(), [beamscale_report_svg:series()]}.

-define(PCTS, [{p50_ms, <<"p50">>}, {p99_ms, <<"p99">>}, {p999_ms, <<"p99.9">>}]).
-define(TARGET, [{cpu_pct, <<"OS CPU">>}, {util_pct, <<"scheduler utilisation">>},
                 {busy_wait_pct, <<"busy-wait">>}]).

%% @doc The whole page.
-spec index(map(), [map()]) -> iodata().
index(Summary, Levels) -> index(Summary, Levels, []).

%% @doc The whole page, with the target's profiles at each level (`--profile'): what grew from
%% the lowest level to the highest after the capacity, each level's flame graph at the end.
-spec index(map(), [map()], [beamscale_report_profile:point()]) -> iodata().
index(Summary, Levels, Profiles) ->
    Title = <<"beamscale saturate">>,
    {Lead, Follow} = beamscale_report_profile:sections(Profiles, none),
    Section = fun({T, Html}) -> beamscale_report_html:section(T, Html) end,
    beamscale_report_html:page(Title, <<>>,
                               [beamscale_report_html:el(h1, Title),
                                beamscale_report_html:section("Capacity", facts(Summary)),
                                lists:map(Section, Lead),
                                beamscale_report_html:section("Against offered load",
                                                              charts(Summary, Levels)),
                                beamscale_report_html:section("Levels, in the order run",
                                                              table(Levels)),
                                lists:map(Section, Follow)]).

%% @doc The charts drawn, in order; exposed so tests can count their series.
-spec graphs(map(), [map()]) -> [graph()].
graphs(#{<<"mode">> := <<"closed">>} = Summary, Levels) ->
    Sorted = lists:sort(fun(A, B) -> users(A) =< users(B) end, Levels),
    Pts = fun(K) -> [{users(L), V} || L <- Sorted, V <- [maps:get(K, L, null)], is_number(V)]
          end,
    Top = fun(Ks) -> lists:max([1.0 | [V || K <- Ks, {_, V} <- Pts(K)]]) end,
    Peak = peak(Summary),
    [{<<"latency against users in a loop">>, <<"ms">>, <<" ms">>,
      [#{name => N, points => Pts(K)} || {K, N} <- ?PCTS]
      ++ Peak(Top([K || {K, _} <- ?PCTS]))},
     {<<"throughput against users in a loop">>, <<"requests/s">>, <<"/s">>,
      [#{name => <<"requests/s">>, points => Pts(requests_per_s)}]
      ++ Peak(Top([requests_per_s]))},
     {<<"the target per level (100 % = one core)">>, <<"%">>, <<" %">>,
      [#{name => N, points => Pts(K)} || {K, N} <- ?TARGET]
      ++ Peak(Top([K || {K, _} <- ?TARGET]))}];
graphs(Summary, Levels) ->
    Sorted = lists:sort(fun(A, B) -> offered(A) =< offered(B) end, Levels),
    Pts = fun(K) -> [{offered(L), num(maps:get(K, L))} || L <- Sorted] end,
    Has = fun(K) -> [{offered(L), V} || L <- Sorted, V <- [maps:get(K, L, null)], is_number(V)]
          end,
    MaxPct = lists:max([1.0 | [V || {K, _} <- ?TARGET, {_, V} <- Has(K)]]),
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
      ++ knee(Summary, MaxRate)},
     {<<"the target per level (100 % = one core)">>, <<"%">>, <<" %">>,
      [#{name => N, points => Has(K)} || {K, N} <- ?TARGET] ++ knee(Summary, MaxPct)}].

%% The knee: a vertical dashed line at the capacity, when there is one.
knee(#{<<"capacity_per_s">> := C}, Top) when is_number(C) ->
    [#{name => <<"capacity">>, dashed => true, points => [{C, 0}, {C, Top}]}];
knee(_, _) -> [].

%% Closed mode's knee: where the throughput peaked.
peak(#{<<"peak_users">> := N}) when is_number(N) ->
    fun(Top) -> [#{name => <<"peak">>, dashed => true, points => [{N, 0}, {N, Top}]}] end;
peak(_) -> fun(_) -> [] end.

users(#{users := N}) -> num(N).

charts(Summary, Levels) ->
    X = case maps:get(<<"mode">>, Summary, null) of
            <<"closed">> -> "users";
            _ -> "offered /s"
        end,
    Charts = [beamscale_report_svg:line_chart(Series, #{title => T, x_label => X,
                                                        y_label => Y, unit => U,
                                                        x_ticks => auto})
              || {T, Y, U, Series} <- graphs(Summary, Levels)],
    beamscale_report_html:el(section, [{class, "charts"}], {safe, Charts}).

facts(S) ->
    G = fun(K) -> maps:get(K, S, null) end,
    Facts = [{"Mode", G(<<"mode">>)},
             {"Objective", G(<<"slo">>)},
             {"Most throughput, closed mode (requests/s)", G(<<"peak_per_s">>)},
             {"Users at the peak, closed mode", G(<<"peak_users">>)},
             {"Capacity (/s): the highest rate held, confirmed", G(<<"capacity_per_s">>)},
             {"Bracket (/s): highest held, lowest not held (closed mode: ~95 % interval)",
              [text(G(<<"capacity_low_per_s">>)), " - ", text(G(<<"capacity_high_per_s">>))]},
             {"Limited by (broken just above the capacity)", G(<<"limited_by">>)},
             {"Terms broken at that level", lists:join(", ", maps:get(<<"broken_first">>, S, []))},
             {"Search stopped", G(<<"stopped">>)},
             {"Levels run", G(<<"levels">>)},
             {"Level length, warm-up dropped (s)",
              [text(G(<<"level_s">>)), ", ", text(G(<<"warmup_s">>))]}],
    beamscale_report_html:table(["", ""], [[K, cell(V)] || {K, V} <- Facts]).

table(Levels) ->
    Cols = [offered_per_s, users, achieved_per_s, requests_per_s, p50_ms, p99_ms, p999_ms,
            p99_sent_ms, requests, errors, errors_by_reason, cpu_pct, util_pct, busy_wait_pct],
    Head = ["offered /s", "users", "achieved /s", "requests/s", "p50 ms", "p99 ms", "p99.9 ms",
            "p99 from send ms", "requests", "errors", "errors by reason", "CPU %",
            "utilisation %", "busy-wait %", "held", "broken", "waited for idle s"],
    beamscale_report_html:table(
      Head, [{held_class(L), [cell(maps:get(C, L, null)) || C <- Cols]
                             ++ [cell(maps:get(held, L)),
                                 cell(lists:join(", ", maps:get(broken, L))), idle_cell(L)]}
             || L <- Levels]).

%% How long the level waited for the target to be idle; a level that started with it still
%% busy says so.
idle_cell(#{idle_timeout := <<"true">>} = L) ->
    iolist_to_binary([text(maps:get(idle_wait_s, L, null)), " (still busy)"]);
idle_cell(L) -> cell(maps:get(idle_wait_s, L, null)).

held_class(#{held := true}) -> "held";
held_class(_) -> "not-held".

offered(#{offered_per_s := R}) -> num(R).

num(V) when is_number(V) -> V;
num(_) -> 0.

text(V) when is_integer(V) -> integer_to_list(V);
text(V) -> cell(V).

cell(null) -> "-";
cell(V) when is_float(V) -> beamscale_report_svg:fmt(V);
cell(V) when is_integer(V) -> V;
cell(V) when is_atom(V) -> atom_to_binary(V);
cell(V) -> iolist_to_binary(V).
