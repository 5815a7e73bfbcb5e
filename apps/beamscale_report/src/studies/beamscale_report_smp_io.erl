%% @doc The report of `beamscale study smp-io' (and the level tables the pollset report shares),
%% pure: the study's metadata and the rows of `levels.csv' (maps of binaries) in, one
%% self-contained HTML page out. Mean session duration per load level and configuration as
%% clustered bars, a bar missing where the configuration did not hold the load (the thesis's
%% figures 5.1/5.2); CPU % (tables 5.1/5.2) beside scheduler utilisation and busy-wait; Mnesia
%% reads in transactions against dirty reads; every level in one table.
-module(beamscale_report_smp_io).

-export([html/2, html/3, html/4, groups/1, levels/1, find/2, value/2, config_table/2,
         metric_table/3, levels_table/1, capacity_section/1, num/1, txt/1]).

-type row() :: #{atom() => binary()}.

%% @doc The whole page.
-spec html(map(), [row()]) -> iodata().
html(Meta, Rows) -> html(Meta, Rows, []).

%% @doc The whole page, with the capacity of each configuration from `capacity.csv'.
-spec html(map(), [row()], [row()]) -> iodata().
html(Meta, Rows, Caps) -> html(Meta, Rows, Caps, []).

%% @doc The whole page, with the profiles of the node under test at each level (`--profile'):
%% what grew from each cell's lowest level to its highest (after the capacities: read it
%% first), each level's flame graph at the end.
-spec html(map(), [row()], [row()], [beamscale_report_profile:point()]) -> iodata().
html(Meta, Rows, Caps, Profiles) ->
    {Lead, Follow} = beamscale_report_profile:sections(Profiles, none),
    Title = "beamscale study smp-io",
    Groups = groups(Rows),
    beamscale_report_html:page(Title, <<>>,
        [beamscale_report_html:el(h1, Title), intro(Meta),
         beamscale_report_html:section("Configurations", config_table(Meta, "thesis")),
         capacity_section(Caps),
         [beamscale_report_html:section(T, H) || {T, H} <- Lead],
         beamscale_report_html:section(
           "Mean session duration per load level (thesis figures 5.1, 5.2)",
           [beamscale_report_html:el(p, "A missing bar: the configuration did not hold that load "
                                        "(or the level was not run above one it did not hold)."),
            charts([session_chart(G) || G <- Groups])]),
         beamscale_report_html:section(
           "CPU, scheduler utilisation and busy-wait (thesis tables 5.1, 5.2)",
           [beamscale_report_html:el(p, cpu_note()) | [metrics(G) || G <- Groups]]),
         beamscale_report_html:section("Mnesia: reads in transactions against dirty reads",
                                       dirty(Rows)),
         beamscale_report_html:section("Every level", levels_table(Rows)),
         [beamscale_report_html:section(T, H) || {T, H} <- Follow]]).

intro(Meta) ->
    beamscale_report_html:el(p, beamscale_report_html:text(
                           io_lib:format("Size ~ts: ~ts operations per session, each level held "
                                         "~ts s; OTP ~ts, ~ts logical cores.",
                                         [txt(maps:get(K, Meta, "?"))
                                          || K <- [size, ops_per_session, hold_s, otp_release,
                                                   logical_cores]]))).

cpu_note() ->
    "CPU: the node's OS CPU time, % of all cores (the thesis's 'CPU usage'). Utilisation: how "
    "busy its normal schedulers were. Busy-wait: CPU beyond what the schedulers spent working, "
    "% of all cores. '-': the level was not held.".

%% @doc The (target, op) pairs in the order they appear, each with its rows.
-spec groups([row()]) -> [{{binary(), binary()}, [row()]}].
groups(Rows) ->
    beamscale_stats_samples:group(fun(#{target := T, op := O}) -> {T, O} end, Rows).

%% @doc The offered rates of some rows, each once, in rising order, as `{Key, Label}' for
%% `find/2' (a capacity search runs other rates in each configuration).
-spec levels([row()]) -> [{binary(), binary()}].
levels(Rows) ->
    Rates = lists:usort([{num(O), O} || #{offered_per_s := O} <- Rows]),
    [{O, beamscale_report_svg:fmt(N)} || {N, O} <- lists:ukeysort(1, Rates), N =/= none].

%% @doc The last row at offered rate `Key' (from `levels/1'), or `none'.
-spec find([row()], binary()) -> row() | none.
find(Rows, Key) ->
    N = num(Key),
    case [R || #{offered_per_s := O} = R <- Rows, num(O) == N] of
        [] -> none;
        Found -> lists:last(Found)
    end.

%% @doc The capacity of each configuration (`capacity.csv'): per target and operation a bar per
%% configuration, the interval from the highest rate held to the lowest not held as a whisker;
%% then every row as a table. Nothing without rows (a study of fixed levels).
-spec capacity_section([row()]) -> iodata().
capacity_section([]) -> [];
capacity_section(Caps) ->
    Groups = groups(Caps),
    Bar = fun(#{capacity_per_s := C, capacity_low_per_s := L, capacity_high_per_s := H}) ->
                  case {num(C), num(L), num(H)} of
                      {none, _, _} -> none;
                      {CN, none, HN} -> {CN, CN, HN};
                      {CN, LN, HN} -> {CN, LN, HN}
                  end
          end,
    Chart = fun({{T, O}, Rows}) ->
                    beamscale_report_svg:bar_chart(
                      [C || #{config := C} <- Rows],
                      [#{name => "capacity", values => [Bar(R) || R <- Rows]}],
                      #{title => [T, " ", O], y_label => "sessions/s", unit => " sessions/s",
                        width => max(320, 110 * length(Rows))})
            end,
    Cols = [target, op, config, capacity_per_s, capacity_high_per_s, limited_by, stopped,
            levels],
    beamscale_report_html:section(
      "Capacity per configuration",
      [beamscale_report_html:el(p, "The highest session rate held (the bar), found by the "
                                   "capacity search; the whisker runs to the lowest rate not "
                                   "held above it (none: the search reached its highest rate "
                                   "or its time). limited_by: why the level at the whisker's "
                                   "end was not held (unfinished, errors, slow)."),
       charts([Chart(G) || G <- Groups]),
       beamscale_report_html:table([atom_to_list(C) || C <- Cols],
                                   [[field(maps:get(C, R, <<>>)) || C <- Cols] || R <- Caps])]).

%% @doc The number in column `Key' of the row of a held level, else `none'.
-spec value(atom(), row() | none) -> number() | none.
value(_Key, none) -> none;
value(Key, Row) ->
    case beamscale_stats_levels:is_held(Row) andalso num(maps:get(Key, Row, <<>>)) of
        V when is_number(V) -> V;
        _ -> none
    end.

%% @doc A CSV field as a number, or `none'.
-spec num(binary()) -> number() | none.
num(B) ->
    case beamscale_format_csv:number(B) of
        undefined -> none;
        V -> V
    end.

%% @doc The configurations and their flags; `About' heads the column of their `thesis' text.
-spec config_table(map(), string()) -> iodata().
config_table(Meta, About) ->
    beamscale_report_html:table(["configuration", About, "erl", "flags"],
                         [[txt(maps:get(K, C, "")) || K <- [config, thesis, erl, flags]]
                          || C <- maps:get(configs, Meta, [])]).

session_chart({{T, O}, Rows}) ->
    Levels = levels(Rows),
    Ops = case Rows of [#{ops_per_session := N} | _] -> N; [] -> <<"?">> end,
    Series = [#{name => C, values => [value(mean_session_ms, find(CRows, L)) || {L, _} <- Levels]}
              || {C, CRows} <- by_config(Rows)],
    beamscale_report_svg:bar_chart([[Off, "/s"] || {_, Off} <- Levels], Series,
                            #{title => [T, " ", O, " (", Ops, " ops per session)"],
                              x_label => "offered load (sessions/s)",
                              y_label => "mean session (ms)", unit => " ms", width => 560}).

metrics({{T, O}, Rows}) ->
    Title = beamscale_report_html:el(h3, [T, " ", O]),
    [Title, charts([metric_table(Rows, K, H) || {K, H} <- [{cpu_pct, "CPU %"},
                                                         {util_pct, "utilisation %"},
                                                         {busy_wait_pct, "busy-wait %"}]])].

%% @doc One figure per configuration (rows) and level (columns), '-' where not held.
-spec metric_table([row()], atom(), string()) -> iodata().
metric_table(Rows, Key, Head) ->
    Levels = levels(Rows),
    beamscale_report_html:table([Head | [[Off, "/s"] || {_, Off} <- Levels]],
                         [[C | [cell(value(Key, find(CRows, L))) || {L, _} <- Levels]]
                          || {C, CRows} <- by_config(Rows)]).

dirty(Rows) ->
    Tx = [R || #{target := <<"mnesia">>, op := <<"read">>} = R <- Rows],
    Dirty = [R || #{target := <<"mnesia">>, op := <<"read_dirty">>} = R <- Rows],
    case {Tx, Dirty} of
        {[], _} -> beamscale_report_html:el(p, "No Mnesia read levels in this run.");
        {_, []} -> beamscale_report_html:el(p, "No Mnesia dirty read levels in this run.");
        _ ->
            Both = fun(Key, C, CR, L) -> {value(Key, find(CR, L)),
                                          value(Key, find(by(config, C, Dirty), L))}
                   end,
            Pairs = [{C, L, Off, A, B, Both(cpu_pct, C, CR, L)}
                     || {C, CR} <- by_config(Tx), {L, Off} <- levels(Tx),
                        {A, B} <- [Both(mean_session_ms, C, CR, L)]],
            Series = [#{name => Name, values => [element(I, P) || P <- Pairs]}
                      || {Name, I} <- [{"transaction", 4}, {"async_dirty", 5}]],
            [charts([beamscale_report_svg:bar_chart([[C, " ", Off, "/s"]
                                              || {C, _, Off, _, _, _} <- Pairs],
                                             Series, #{title => "Mnesia read sessions",
                                                       y_label => "mean session (ms)",
                                                       unit => " ms",
                                                       width => max(640, 90 * length(Pairs))})]),
             beamscale_report_html:table(["configuration", "offered", "transaction ms", "dirty ms",
                                   "transaction / dirty", "transaction CPU %", "dirty CPU %",
                                   "CPU ratio"],
                                  [[C, [Off, "/s"], cell(A), cell(B), cell(ratio(A, B)),
                                    cell(CA), cell(CB), cell(ratio(CA, CB))]
                                   || {C, _, Off, A, B, {CA, CB}} <- Pairs])]
    end.

%% @doc Every row of `levels.csv' as a table; rows not held are marked.
-spec levels_table([row()]) -> iodata().
levels_table(Rows) ->
    Cols = [target, op, config, level, offered_per_s, achieved_per_s, requests_per_s,
            mean_session_ms, p99_session_ms, p99_ms, errors, held, why, cpu_pct, util_pct,
            busy_wait_pct],
    beamscale_report_html:table([atom_to_list(C) || C <- Cols],
                         [{class(R), [field(maps:get(C, R, <<>>)) || C <- Cols]} || R <- Rows]).

class(R) ->
    case beamscale_stats_levels:is_held(R) of
        true -> "";
        false -> "slower"
    end.

field(B) ->
    case num(B) of
        none -> B;
        V -> V
    end.

ratio(A, B) when is_number(A), is_number(B), B > 0 -> round(100 * A / B) / 100;
ratio(_, _) -> none.

cell(none) -> "-";
cell(V) when is_float(V) -> round(V * 10) / 10;
cell(V) -> V.

by_config(Rows) -> beamscale_stats_samples:group(fun(#{config := C}) -> C end, Rows).

by(Key, V, Rows) -> [R || R <- Rows, maps:get(Key, R) =:= V].

charts(Items) -> beamscale_report_html:el('div', [{class, "charts"}], {safe, Items}).

%% @doc A metadata value as text (numbers and atoms printed).
-spec txt(term()) -> binary() | string().
txt(V) when is_binary(V); is_list(V) -> V;
txt(V) -> unicode:characters_to_binary(io_lib:format("~tp", [V])).
