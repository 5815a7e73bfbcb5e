%% @doc The report of `beamscale study pollset', pure: requests per second and latency per
%% IO-polling configuration and scheduler count, as bars and a table.
-module(beamscale_report_pollset).

-export([html/3, html/4, html/5]).

%% @doc The whole page from the study's metadata and the rows of `levels.csv' and `wrk.csv'.
-spec html(map(), [#{atom() => binary()}], [#{atom() => binary()}]) -> iodata().
html(Meta, Rows, WrkRows) -> html(Meta, Rows, WrkRows, []).

%% @doc The whole page, with the capacity of each configuration from `capacity.csv'.
-spec html(map(), [#{atom() => binary()}], [#{atom() => binary()}], [#{atom() => binary()}]) ->
    iodata().
html(Meta, Rows, WrkRows, Caps) -> html(Meta, Rows, WrkRows, Caps, []).

%% @doc The whole page, with the profiles of the server at each level (`--profile'): what grew
%% from the lowest level to the highest, then each level's flame graph.
-spec html(map(), [#{atom() => binary()}], [#{atom() => binary()}], [#{atom() => binary()}],
           [beamscale_report_profile:point()]) -> iodata().
html(Meta, Rows, WrkRows, Caps, Profiles) ->
    {Lead, Follow} = beamscale_report_profile:sections(Profiles, none),
    Title = "beamscale study pollset",
    Levels = beamscale_report_smp_io:levels(Rows),
    Configs = beamscale_stats_samples:group(fun(#{config := C}) -> C end, Rows),
    Series = fun(Key) ->
                     [#{name => [Off, " sessions/s"],
                        values => [beamscale_report_smp_io:value(Key, find(CR, L))
                                   || {_, CR} <- Configs]}
                      || {L, Off} <- Levels]
             end,
    Chart = fun(Key, Label, Unit) ->
                    beamscale_report_svg:bar_chart([C || {C, _} <- Configs], Series(Key),
                                            #{title => Label, y_label => Label, unit => Unit,
                                              width => 900})
            end,
    beamscale_report_html:page(Title, <<>>,
        [beamscale_report_html:el(h1, Title),
         beamscale_report_html:el(p, beamscale_report_html:text(
                                io_lib:format("Sessions of ~ts keep-alive GET requests, each "
                                              "level held ~ts s; OTP ~ts, ~ts logical cores. "
                                              "Configuration NAME/sN: N schedulers.",
                                              [beamscale_report_smp_io:txt(maps:get(K, Meta, "?"))
                                               || K <- [ops_per_session, hold_s, otp_release,
                                                        logical_cores]]))),
         beamscale_report_html:section("Configurations",
                                beamscale_report_smp_io:config_table(Meta, "what varies")),
         beamscale_report_smp_io:capacity_section(Caps),
         beamscale_report_html:section("Requests per second and latency",
                                beamscale_report_html:el('div', [{class, "charts"}],
                                                  {safe, [Chart(requests_per_s, "requests/s", ""),
                                                          Chart(p99_ms, "p99 latency (ms)",
                                                                " ms")]})),
         beamscale_report_html:section("CPU, utilisation, busy-wait",
                                beamscale_report_html:el('div', [{class, "charts"}],
                                                  {safe, [metric_table(Rows, K, H)
                                                          || {K, H} <- [{requests_per_s, "req/s"},
                                                                        {p50_ms, "p50 ms"},
                                                                        {p99_ms, "p99 ms"},
                                                                        {cpu_pct, "CPU %"},
                                                                        {util_pct, "util %"},
                                                                        {busy_wait_pct,
                                                                         "busy-wait %"}]]})),
         beamscale_report_html:section("wrk (closed model)", wrk(Meta, WrkRows)),
         beamscale_report_html:section("Every level", beamscale_report_smp_io:levels_table(Rows)),
         [beamscale_report_html:section(T, H) || {T, H} <- Lead ++ Follow]]).

%% The last wrk run of each configuration.
wrk(Meta, []) -> beamscale_report_html:el(p, wrk_note(Meta));
wrk(Meta, WrkRows) ->
    Last = [{C, lists:last(Rs)}
            || {C, Rs} <- beamscale_stats_samples:group(fun(#{config := C}) -> C end,
                                                          WrkRows)],
    N = fun beamscale_report_smp_io:num/1,
    Value = fun(K, R) -> case maps:get(status, R) of
                             <<"ok">> -> N(maps:get(K, R, <<>>));
                             _ -> none
                         end
            end,
    Cols = [requests_per_s, mean_ms, p50_ms, p90_ms, p99_ms, socket_errors],
    [beamscale_report_html:el(p, beamscale_report_html:text(
                            io_lib:format("wrk with 1 thread and ~ts keep-alive connections, "
                                          "each configuration for the hold time.",
                                          [beamscale_report_smp_io:txt(
                                             maps:get(wrk_connections, Meta, "?"))]))),
     beamscale_report_html:el('div', [{class, "charts"}],
                       {safe, [beamscale_report_svg:bar_chart(
                                 [C || {C, _} <- Last],
                                 [#{name => "wrk", values => [Value(requests_per_s, R)
                                                              || {_, R} <- Last]}],
                                 #{title => "wrk requests/s", y_label => "requests/s",
                                   width => 900})]}),
     beamscale_report_html:table(["configuration" | [atom_to_list(C) || C <- Cols]],
                          [[C | [cell(Value(K, R)) || K <- Cols]] || {C, R} <- Last])].

cell(none) -> "-";
cell(V) when is_float(V) -> round(V * 100) / 100;
cell(V) -> V.

metric_table(Rows, K, H) -> beamscale_report_smp_io:metric_table(Rows, K, H).

wrk_note(#{wrk := true}) -> "wrk is installed but gave no result in this run.";
wrk_note(_) -> "wrk is not installed here: skipped; the figures above are the built-in load "
               "generator's only.".

find(Rows, L) -> beamscale_report_smp_io:find(Rows, L).
