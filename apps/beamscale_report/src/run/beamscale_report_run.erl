%% @doc `index.html' of a run directory, as a pure formatter: one self-contained page (inline
%% style and SVG, no external file; a script only for a profile's search box) with the run's
%% metadata, per benchmark, phase and args a time graph with 95 % interval bars and the raw
%% iterations beside the medians, a speedup graph with the ideal line, the combined graphs per
%% erl installation and per flag set (as bencherl's plotter drew them), the summary table with
%% noisy rows marked, the sanity verdicts and the failures. Sections of its own (a study's
%% figures) are given by the caller in `sections': this page names no study.
-module(beamscale_report_run).

-export([index/1, graphs/1, series_label/1]).
-export_type([data/0, section/0]).

%% run: run.json decoded (binary keys); rows: summary rows with sanity; sanity: verdicts from
%% sanity.csv; failures: rows of failures.csv (maps of binaries); missing: jobs of the plan not
%% finished (benchmark, environment, iterations done and expected).
%% samples, lcnt: rows of samples.csv and lcnt.csv (absent: no such section); sections: extra
%% sections, each a title and its HTML; iterations: the raw seconds drawn beside the medians;
%% profiles: the points' CPU profiles (beamscale_report_profile).
-type data() :: #{run := beamscale_format_json:object(), rows := [beamscale_stats:row()],
                  sanity := [{binary(), binary(), binary()}], failures := [csv_row()],
                  samples => [csv_row()], lcnt => [csv_row()], sections => [section()],
                  missing => [{binary(), binary(), non_neg_integer(), pos_integer()}],
                  iterations => beamscale_report_iterations:iterations(),
                  profiles => [beamscale_report_profile:point()]}.
-type csv_row() :: #{atom() => binary()}.
-type section() :: {Title :: unicode:chardata(), Body :: iodata()}.
%% A graph to draw: title, kind, and its series of summary rows (label and rows).
-type graph() :: {binary(), time | speedup, [{binary(), [beamscale_stats:row()]}]}.

%% @doc The whole page.
-spec index(data()) -> iodata().
index(#{run := Run, rows := Rows, sanity := Sanity, failures := Failures} = Data) ->
    Name = get(Run, [<<"config">>, <<"name">>]),
    Extra = sections(maps:get(sections, Data, [])),
    %% "What grew" is read first when efficiency falls; the points' profiles follow the rest.
    {Grew, Profiles} = beamscale_report_profile:sections(maps:get(profiles, Data, []),
                                                         maps:get(lcnt, Data, [])),
    %% Extra sections lead the page of a one-benchmark run (a study's run), else follow the rest.
    {Lead, Follow} = case lists:usort([B || #{benchmark := B} <- Rows]) of
                         [_] -> {Extra, []};
                         _ -> {[], Extra}
                     end,
    Cpu = beamscale_report_cpu:section(maps:get(samples, Data, []), maps:get(lcnt, Data, []),
                                       get(Run, [<<"config">>, <<"msacc">>])),
    beamscale_report_html:page(
      ["beamscale run ", text(Name)], <<>>,
      [beamscale_report_html:el(h1, ["beamscale run ", text(Name)]),
       metadata(Run, lists:usort([E || #{erl_args := E} <- Rows])),
       missing(maps:get(missing, Data, [])),
       sections(Grew),
       Lead,
       beamscale_report_html:section("Graphs",
                                     graph_sections(Rows, Sanity, Failures,
                                                    maps:get(iterations, Data, #{}))),
       beamscale_report_html:section("Summary", summary_table(Rows)),
       Follow,
       sections(Profiles),
       beamscale_report_html:section("The node under test: CPU, schedulers, msacc", Cpu),
       beamscale_report_html:section("Sanity check", sanity_table(Sanity)),
       beamscale_report_html:section("Failures", failures_table(Failures))]).

sections(Sections) -> [beamscale_report_html:section(T, B) || {T, B} <- Sections].

%% @doc The graphs of every benchmark, phase and args, in order: per graph its title, kind and
%% series. Exposed so tests can tell how many series each drawn graph must have.
-spec graphs([beamscale_stats:row()]) -> [{Title :: binary(), [graph()]}].
graphs(Rows) ->
    [{title(Group), group_graphs(GRows)} || {Group, GRows} <- group_by(fun bpa/1, Rows)].

%% @doc The label of a series: erl alias, flag set alias and node count.
-spec series_label(beamscale_stats:row()) -> binary().
series_label(#{otp := O, erl_args := E, nodes := N}) ->
    iolist_to_binary([O, " / ", E, " / ", integer_to_binary(N), " node", plural(N)]).

%%% Internals

%% Only the flag sets measured are named (all of them before anything is); a benchmark's own
%% flags for an alias (its overrides) are named with the benchmark.
metadata(Run, Used) ->
    Erls = maps:to_list(get_map(Run, [<<"erls">>])),
    IsUsed = fun(A) -> Used =:= [] orelse lists:member(A, Used) end,
    Own = [{[A, " (", B, ")"], F}
           || {B, O} <- lists:sort(maps:to_list(get_map(Run, [<<"overrides">>]))), is_map(O),
              {A, F} <- lists:sort(maps:to_list(maps:get(<<"erl_args">>, O, #{}))), IsUsed(A)],
    Flags = [{A, F} || {A, F} <- maps:to_list(get_map(Run, [<<"config">>, <<"erl_args">>])),
                       IsUsed(A)] ++ Own,
    Plain = [{"Host", host}, {"CPU", cpu_model}, {"Logical cores", logical_cores},
             {"Started", start_time}, {"Ended", end_time}],
    %% Values are HTML already (escaped here), keys are escaped by the table.
    Facts = [{K, text(get(Run, [atom_to_binary(F)]))} || {K, F} <- Plain]
        ++ [{"Tool", [text(get(Run, [<<"tool_version">>])), " (git ",
                      text(get(Run, [<<"git_revision">>])), ")"]}]
        ++ [{["erl ", A], erl_text(I)} || {A, I} <- lists:sort(Erls)]
        ++ [{["flags ", A], flags_text(F)} || {A, F} <- lists:sort(Flags)],
    beamscale_report_html:section("Run", beamscale_report_html:table(
                                           ["", ""], [[{safe, text(K)}, {safe, V}]
                                                      || {K, V} <- Facts])).

erl_text(I) when is_map(I) ->
    [[K, "=", text(maps:get(K, I, <<"?">>)), " "]
     || K <- [<<"otp_release">>, <<"erts">>, <<"emu_flavor">>, <<"emu_type">>, <<"path">>,
              <<"error">>], is_map_key(K, I)];
erl_text(I) -> text(I).

flags_text(<<>>) -> <<"(none)">>;
flags_text(F) -> text(F).

%% A benchmark's failed sanity check and failed iterations are said under its heading, where
%% its graphs are read, not only in the tables at the bottom.
graph_sections(Rows, Sanity, Failures, Iters) ->
    [[beamscale_report_html:el(h3, title(Group)),
      warnings(Group, Sanity, Failures),
      beamscale_report_html:el(section, [{class, "charts"}],
                               {safe, [chart(G, Iters) || G <- group_graphs(GRows)]})]
     || {Group, GRows} <- group_by(fun bpa/1, Rows)].

warnings({B, _P, A}, Sanity, Failures) ->
    Bad = [beamscale_report_html:el(p, [{class, "bad"}], ["sanity check failed: ", D])
           || {B1, <<"failed">>, D} <- Sanity, B1 =:= B],
    case length([F || #{benchmark := B1, args := A1} = F <- Failures, B1 =:= B, A1 =:= A]) of
        0 -> Bad;
        N -> [Bad, beamscale_report_html:el(p, [{class, "bad"}],
                                            [integer_to_list(N), " iteration", plural(N),
                                             " failed (see Failures below)"])]
    end.

group_graphs(Rows) ->
    Main = group_by(fun series_label/1, Rows),
    Otps = lists:usort([O || #{otp := O} <- Rows]),
    Flags = lists:usort([E || #{erl_args := E} <- Rows]),
    PerErl = [{<<"erl ", O/binary, ": flag sets">>, time,
               group_by(fun(#{erl_args := E} = R) -> node_label(E, R) end,
                        [R || #{otp := O1} = R <- Rows, O1 =:= O])}
              || length(Flags) > 1, O <- Otps],
    PerFlags = [{<<"flags ", E/binary, ": erls">>, time,
                 group_by(fun(#{otp := O} = R) -> node_label(O, R) end,
                          [R || #{erl_args := E1} = R <- Rows, E1 =:= E])}
                || length(Otps) > 1, E <- Flags],
    [{<<"time">>, time, Main}, {<<"speedup">>, speedup, Main}] ++ PerErl ++ PerFlags.

node_label(Label, #{nodes := N}) ->
    iolist_to_binary([Label, " / ", integer_to_binary(N), " node", plural(N)]).

%% Time charts show every iteration beside the medians (beamscale_report_iterations).
chart({Title, time, Series}, Iters) ->
    Points = beamscale_report_iterations:series(lists:append([Rs || {_, Rs} <- Series]), Iters),
    beamscale_report_svg:line_chart([#{name => L, points => [time_point(R) || R <- Rs]}
                                     || {L, Rs} <- Series] ++ Points,
                                    #{title => Title, x_label => "schedulers",
                                      y_label => "median time (s), 95 % interval", unit => " s"});
chart({Title, speedup, Series}, _Iters) ->
    Drawn = [#{name => L, points => [P || R <- Rs, P <- speedup_point(R)]} || {L, Rs} <- Series],
    beamscale_report_svg:line_chart(Drawn ++ ideal(Series),
                                    #{title => Title, x_label => "schedulers",
                                      y_label => "speedup, 95 % interval"}).

time_point(#{schedulers := S, median := M, ci95_low := L, ci95_high := H}) -> {S, M, L, H}.

speedup_point(#{speedup := null}) -> [];
speedup_point(#{schedulers := S, speedup := Sp, speedup_low := L, speedup_high := H}) ->
    [{S, Sp, L, H}].

%% Linear speedup from the smallest scheduler count measured.
ideal(Series) ->
    case lists:usort([S || {_, Rs} <- Series, #{schedulers := S} <- Rs]) of
        [] -> [];
        [S0 | _] = Ss -> [#{name => <<"ideal">>, dashed => true, color => "#999",
                            points => [{S, S / S0} || S <- Ss]}]
    end.

summary_table(Rows) ->
    Headers = ["benchmark", "phase", "args", "otp", "erl_args", "schedulers", "nodes", "n",
               "median (s)", "95 % interval (s)", "mean (s)", "stddev (s)", "min (s)",
               "max (s)", "cv", "speedup", "efficiency", "sanity", "noisy"],
    beamscale_report_html:table(Headers, [summary_row(R) || R <- Rows]).

summary_row(#{noisy := Noisy} = R) ->
    F = fun(K) -> num(maps:get(K, R)) end,
    Cells = [maps:get(K, R) || K <- [benchmark, phase, args, otp, erl_args]]
        ++ [maps:get(schedulers, R), maps:get(nodes, R), maps:get(n, R), F(median),
            [F(ci95_low), " – ", F(ci95_high)], F(mean), F(stddev), F(min), F(max), F(cv),
            gain(R, speedup), gain(R, efficiency), maps:get(sanity, R, <<"unchecked">>),
            case Noisy of true -> "noisy"; false -> "" end],
    {case Noisy of true -> "noisy"; false -> "" end, Cells}.

gain(R, K) ->
    case maps:get(K, R) of
        null -> "";
        V -> [num(V), " [", num(maps:get(low(K), R)), ", ", num(maps:get(high(K), R)), "]"]
    end.

low(speedup) -> speedup_low;
low(efficiency) -> efficiency_low.
high(speedup) -> speedup_high;
high(efficiency) -> efficiency_high.

%% A run that did not finish leads with what it lacks, before any graph drawn from the rest.
missing([]) -> [];
missing(Jobs) ->
    beamscale_report_html:section(
      "Not measured: the run did not finish (run the same command again to continue)",
      beamscale_report_html:table(["benchmark", "environment", "iterations done", "expected"],
                                  [{"bad", [B, Env, integer_to_binary(D), integer_to_binary(E)]}
                                   || {B, Env, D, E} <- Jobs])).

sanity_table([]) ->
    beamscale_report_html:el(p, "No sanity verdicts (sanity.csv missing or empty).");
sanity_table(Sanity) ->
    beamscale_report_html:table(["benchmark", "verdict", "detail"],
                                [{verdict_class(V), [B, V, D]} || {B, V, D} <- Sanity]).

verdict_class(<<"passed">>) -> "good";
verdict_class(<<"failed">>) -> "bad";
verdict_class(_) -> "warn".

failures_table([]) -> beamscale_report_html:el(p, "No iteration failed.");
failures_table(Failures) ->
    Cols = [benchmark, args, otp, erl_args, schedulers, nodes, iteration, reason],
    beamscale_report_html:table([atom_to_list(C) || C <- Cols],
                                [[failure_cell(C, F) || C <- Cols] || F <- Failures]).

%% Iteration 0 is a job that could not start (beamscale_store): say so rather than show a 0.
failure_cell(iteration, #{iteration := <<"0">>}) -> <<"the whole job">>;
failure_cell(C, F) -> maps:get(C, F, <<>>).

bpa(#{benchmark := B, phase := P, args := A}) -> {B, P, A}.

title({B, B, A}) -> iolist_to_binary([B, " ", A]);
title({B, P, A}) -> iolist_to_binary([B, " (phase ", P, ") ", A]).

%% Group in first-seen order, keeping each group's rows in order.
group_by(F, Rows) ->
    {Order, Groups} = lists:foldl(
                        fun(R, {Ks, M}) ->
                                K = F(R),
                                case M of
                                    #{K := L} -> {Ks, M#{K := [R | L]}};
                                    _ -> {[K | Ks], M#{K => [R]}}
                                end
                        end, {[], #{}}, Rows),
    [{K, lists:reverse(maps:get(K, Groups))} || K <- lists:reverse(Order)].

num(V) when is_number(V) -> beamscale_report_svg:fmt(V);
num(_) -> "".

plural(1) -> "";
plural(_) -> "s".

text(null) -> "";
text(V) -> beamscale_report_html:escape(V).

get(M, [K]) when is_map(M) -> maps:get(K, M, null);
get(M, [K | Ks]) when is_map(M) -> get(maps:get(K, M, #{}), Ks);
get(_, _) -> null.

get_map(M, Ks) ->
    case get(M, Ks) of
        Map when is_map(Map) -> Map;
        _ -> #{}
    end.
