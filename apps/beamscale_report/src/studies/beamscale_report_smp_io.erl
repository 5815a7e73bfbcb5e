%% @doc The report of `beamscale study smp-io' (and the level tables the pollset report shares),
%% pure: the study's metadata and the rows of `levels.csv' (maps of binaries) in, one
%% self-contained HTML page out. Mean session duration per load level and configuration as
%% clustered bars, a bar missing where the configuration did not hold the load (the thesis's
%% figures 5.1/5.2); CPU % (tables 5.1/5.2) beside scheduler utilisation and busy-wait; Mnesia
%% reads in transactions against dirty reads; every level in one table.
-module(beamscale_report_smp_io).

-export([html/2, groups/1, levels/1, value/2, config_table/2, metric_table/3, levels_table/1,
         num/1, txt/1]).

-type row() :: #{atom() => binary()}.

%% @doc The whole page.
-spec html(map(), [row()]) -> iodata().
html(Meta, Rows) ->
    Title = "beamscale study smp-io",
    Groups = groups(Rows),
    beamscale_report_html:page(Title, <<>>,
        [beamscale_report_html:el(h1, Title), intro(Meta),
         beamscale_report_html:section("Configurations", config_table(Meta, "thesis")),
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
         beamscale_report_html:section("Every level", levels_table(Rows))]).

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

%% @doc The level numbers of some rows with their offered rate, in order.
-spec levels([row()]) -> [{binary(), binary()}].
levels(Rows) ->
    lists:usort(fun({A, _}, {B, _}) -> binary_to_integer(A) =< binary_to_integer(B) end,
                [{L, O} || #{level := L, offered_per_s := O} <- Rows]).

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

find(Rows, L) ->
    case [R || #{level := X} = R <- Rows, X =:= L] of
        [] -> none;
        Found -> lists:last(Found)
    end.

charts(Items) -> beamscale_report_html:el('div', [{class, "charts"}], {safe, Items}).

%% @doc A metadata value as text (numbers and atoms printed).
-spec txt(term()) -> binary() | string().
txt(V) when is_binary(V); is_list(V) -> V;
txt(V) -> unicode:characters_to_binary(io_lib:format("~tp", [V])).
