%% @doc The report's section on the node under test (pure): per benchmark, OS CPU, scheduler
%% utilisation and busy-wait over time for each environment, the thesis-style table
%% (environments × argument sets → CPU %), and the schedulers' microstate accounting as a stacked
%% bar per environment; then the lock-counting result. Data comes from
%% `beamscale_report_samples'.
-module(beamscale_report_cpu).

-export([section/3]).

%% @doc The section's HTML, from the rows of `samples.csv' and `lcnt.csv', and the share (%) of
%% each interval microstate accounting was on (`null' when the run did not record it).
-spec section([#{atom() => binary()}], [#{atom() => binary()}], term()) -> iodata().
section([], _Lcnt, _MsaccPct) ->
    beamscale_report_html:el(p, "No samples: the run was made with --no-sample "
                                "(or before sampling).");
section(Samples, Lcnt, MsaccPct) ->
    [msacc_note(MsaccPct) | sections(Samples, Lcnt)].

msacc_note(0) ->
    beamscale_report_html:el(p, "Microstate accounting was off (msacc 0): no msacc breakdown.");
msacc_note(100) -> beamscale_report_html:el(p, "Microstate accounting was on all the time.");
msacc_note(Pct) when is_integer(Pct), Pct > 0, Pct < 100 ->
    Text = io_lib:format("Microstate accounting was on for ~b % of each sampling interval: the "
                         "msacc bars are the breakdown of those windows (docs/samples.md).", [Pct]),
    beamscale_report_html:el(p, Text);
msacc_note(_) -> [].

sections(Samples, Lcnt) ->
    #{series := Series, msacc := Bars} = beamscale_report_samples:data(Samples),
    Tables = beamscale_report_samples:html_table(Samples),
    Benches = lists:usort([B || #{benchmark := B} <- Series]),
    [[beamscale_report_html:el(h3, B), cpu_chart(B, Series), msacc_chart(B, Bars)] || B <- Benches]
    ++ [beamscale_report_html:el(h3, "CPU per environment and argument set"), Tables,
        beamscale_report_samples:lcnt_html(Lcnt), beamscale_report_lcnt:grew_html(Lcnt)].

%% OS CPU and utilisation of every node of the benchmark's environments, time from job start.
cpu_chart(Bench, Series) ->
    Mine = [S || #{benchmark := B} = S <- Series, B =:= Bench],
    Lines = lists:append([lines(S, length(Mine) > 1) || S <- Mine]),
    [beamscale_report_svg:line_chart(Lines, #{title => "CPU and schedulers",
                                              x_label => "seconds", y_label => "% of all cores",
                                              unit => "%", x_ticks => auto}),
     clamp_note(length([B || #{points := Ps} <- Mine, {_, _, _, B} <- Ps, B < 0]))].

%% Busy-wait is drawn from 0: a negative estimate is no spinning but schedulers counting
%% themselves busy while the OS did not run them (docs/samples.md).
lines(#{env := Env, node := Node, points := Points}, _Several) ->
    Label = [Env, " ", short_node(Node)],
    [#{name => [Label, " OS CPU"], points => [{T, Cpu} || {T, Cpu, _, _} <- Points]},
     #{name => [Label, " utilisation"], points => [{T, U} || {T, _, U, _} <- Points]},
     #{name => [Label, " busy-wait"], dashed => true,
       points => [{T, max(0.0, B)} || {T, _, _, B} <- Points]}].

clamp_note(0) -> [];
clamp_note(N) ->
    beamscale_report_html:el(p, [{class, "note"}],
                             format("The busy-wait estimate was below 0 in ~b interval~s "
                                           "and is drawn clamped at 0: the node had more "
                                           "runnable threads than cores (the schedulers counted "
                                           "themselves busy while the OS did not run them; see "
                                           "host_cpu_pct in samples.csv).",
                                           [N, case N of 1 -> ""; _ -> "s" end])).

%% Where the schedulers' time went, one stacked bar per environment.
msacc_chart(Bench, Bars) ->
    Mine = [B || #{benchmark := Name} = B <- Bars, Name =:= Bench],
    case Mine of
        [] -> [];
        [#{parts := Parts} | _] ->
            States = [S || {S, _} <- Parts],
            Series = [#{name => S, values => [value(S, P) || #{parts := P} <- Mine]}
                      || S <- States],
            beamscale_report_svg:bar_chart([E || #{env := E} <- Mine], Series,
                                    #{title => "scheduler microstates (msacc)", stacked => true,
                                      y_label => "% of scheduler time", unit => "%"})
    end.

value(State, Parts) -> proplists:get_value(State, Parts, 0.0).

%% The node's name up to its random part: bs_n1_XXXX@127.0.0.1 -> n1.
short_node(Node) ->
    case binary:split(Node, <<"_">>, [global]) of
        [<<"bs">>, N | _] -> N;
        _ -> Node
    end.

format(Format, Args) -> unicode:characters_to_binary(io_lib:format(Format, Args)).
