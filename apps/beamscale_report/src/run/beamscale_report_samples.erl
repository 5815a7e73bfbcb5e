%% @doc The report's view of `samples.csv' (docs/samples.md), as plain terms to plot and an HTML
%% table fragment. Pure: rows in (maps of binaries, as `beamscale_store:read_rows/1' gives them).
%%
%% - `series': per benchmark, environment and node, CPU % (of all cores), scheduler utilisation %
%%   and busy-wait % (of all cores) over time;
%% - `tables': per benchmark the thesis-style table (tables 5.1/5.2): environments × argument
%%   sets → mean CPU %, with utilisation and busy-wait beside it;
%% - `msacc': per benchmark and environment, the share of each state in the normal schedulers'
%%   time, for a stacked bar.
-module(beamscale_report_samples).

-export([data/1, html_table/1, lcnt_html/1]).
-export_type([data/0, series/0, table/0, bar/0]).

-type point() :: {T :: float(), CpuPct :: float(), UtilPct :: float(), BusyWaitPct :: float()}.
-type series() :: #{benchmark := binary(), env := binary(), node := binary(),
                    points := [point()]}.
-type cell() :: #{cpu_pct := float() | undefined, util_pct := float() | undefined,
                  busy_wait_pct := float() | undefined, samples := non_neg_integer()}.
-type table() :: #{benchmark := binary(), envs := [binary()], args := [binary()],
                   cells := #{{binary(), binary()} => cell()}}.
-type bar() :: #{benchmark := binary(), env := binary(), parts := [{binary(), float()}]}.
-type data() :: #{series := [series()], tables := [table()], msacc := [bar()]}.

-define(MSACC_STATES, [<<"emulator">>, <<"gc">>, <<"port">>, <<"check_io">>, <<"aux">>,
                       <<"other">>, <<"sleep">>]).

%% @doc What to plot.
-spec data([#{atom() => binary()}]) -> data().
data(Rows) ->
    Ok = [R || R <- Rows, maps:get(status, R, <<>>) =:= <<"ok">>],
    #{series => series(Ok), tables => tables(Rows), msacc => msacc(Ok)}.

%% @doc The thesis-style tables as HTML: one `<table>' per benchmark, every text escaped.
-spec html_table([#{atom() => binary()}]) -> iodata().
html_table(Rows) ->
    [table_html(T) || T <- tables(Rows)].

%% @doc The most contended locks of `lcnt.csv' rows as an HTML table, or a line saying lock
%% counting was not available (the emulator was not built with it; docs/samples.md).
-spec lcnt_html([#{atom() => binary()}]) -> iodata().
lcnt_html(Rows) ->
    case [R || #{status := <<"ok">>} = R <- Rows] of
        [] -> <<"<p class=\"lcnt\">Lock counting: not available (needs an emulator built with "
                "--enable-lock-counter, run with -emu_type lcnt).</p>\n">>;
        Ok ->
            Cols = [benchmark, env, lock, tries, collisions, collision_pct, wait_us],
            [<<"<table class=\"lcnt\">\n<caption>Most contended locks</caption>\n<tr>">>,
             [th(atom_to_binary(C)) || C <- Cols], <<"</tr>\n">>,
             [[<<"<tr>">>, [[<<"<td>">>, esc(v(C, R)), <<"</td>">>] || C <- Cols], <<"</tr>\n">>]
              || R <- Ok],
             <<"</table>\n">>]
    end.

%%% Internals

series(Rows) ->
    [#{benchmark => B, env => E, node => N,
       points => [{num(t_s, R), num(os_cpu_all_pct, R), num(util_pct, R),
                   num(busy_wait_all_pct, R)} || R <- Group]}
     || {{B, E, N}, Group} <- group(fun(R) -> {v(benchmark, R), v(env, R), v(node, R)} end,
                                     Rows)].

tables(Rows) ->
    Summaries = beamscale_stats_samples:summarise(Rows),
    [#{benchmark => B, envs => ordered([E || #{env := E} <- Ss]),
       args => ordered([A || #{args := A} <- Ss]),
       cells => maps:from_list([{{E, A}, cell(S)} || #{env := E, args := A} = S <- Ss])}
     || {B, Ss} <- group(fun(#{benchmark := B}) -> B end, Summaries)].

cell(S) ->
    #{cpu_pct => maps:get(os_cpu_all_pct, S), util_pct => maps:get(util_pct, S),
      busy_wait_pct => maps:get(busy_wait_all_pct, S), samples => maps:get(samples, S)}.

%% Rows without an msacc breakdown (msacc off in their interval) are left out of the means; a
%% benchmark and environment with none gets no bar.
msacc(Rows) ->
    [#{benchmark => B, env => E,
       parts => [{S, mean([num(state_key(S), R) || R <- WithMsacc])} || S <- ?MSACC_STATES]}
     || {{B, E}, Group} <- group(fun(R) -> {v(benchmark, R), v(env, R)} end, Rows),
        WithMsacc <- [[R || R <- Group, v(state_key(hd(?MSACC_STATES)), R) =/= <<>>]],
        WithMsacc =/= []].

state_key(State) -> binary_to_atom(<<"msacc_sched_", State/binary>>).

table_html(#{benchmark := B, envs := Envs, args := Args, cells := Cells}) ->
    Head = [<<"<tr><th>environment \\ args</th>">>, [th(A) || A <- Args], <<"</tr>\n">>],
    Body = [[<<"<tr><th>">>, esc(E), <<"</th>">>,
             [td(maps:get({E, A}, Cells, undefined)) || A <- Args], <<"</tr>\n">>]
            || E <- Envs],
    [<<"<table class=\"samples\">\n<caption>">>, esc(B),
     <<": CPU % of all cores (scheduler utilisation %, busy-wait %)</caption>\n">>,
     Head, Body, <<"</table>\n">>].

th(Text) -> [<<"<th>">>, esc(Text), <<"</th>">>].

td(#{samples := N} = C) when N > 0 ->
    #{cpu_pct := Cpu, util_pct := Util, busy_wait_pct := Busy} = C,
    [<<"<td>">>, fmt(Cpu), <<" (">>, fmt(Util), <<", ">>, fmt(Busy), <<")</td>">>];
td(_) -> <<"<td>-</td>">>.

fmt(undefined) -> <<"-">>;
fmt(X) -> float_to_binary(float(X), [{decimals, 1}]).

esc(Text) -> beamscale_report_html:escape(Text).

group(KeyOf, Items) -> beamscale_stats_samples:group(KeyOf, Items).

ordered(L) -> [K || {K, _} <- group(fun(X) -> X end, L)].

v(Key, Row) -> maps:get(Key, Row, <<>>).

num(Key, Row) ->
    case beamscale_format_csv:number(v(Key, Row)) of
        undefined -> 0.0;
        N -> float(N)
    end.

mean([]) -> 0.0;
mean(L) -> lists:sum(L) / length(L).
