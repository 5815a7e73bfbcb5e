%% @doc `beamscale history': performance over commits (docs/history.md). `record' appends run
%% directories (of run, bench, load, saturate) to a store (`beamscale_history_store'), keyed by
%% the commit they measured; `show' prints each series and its change points (E-Divisive means
%% with a t-test stopping rule, `beamscale_stats_changepoint'); `page' writes one HTML page;
%% `check' fails (exit 1) when the newest commit starts a regression beyond `--threshold';
%% `export' writes Bencher Metric Format JSON (`--bmf') or CSV of the whole history (`--csv').
-module(beamscale_cmd_history).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

-define(DEFAULT_STORE, "history").
-define(DEFAULT_THRESHOLD, 5.0).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "history", summary => "performance over commits: record, show, page, check",
      usage => "beamscale history record RUN_DIR... [--store DIR] [--commit HASH] [--repo DIR]\n"
               "                         [--date D] [--branch B] [--label L]\n"
               "       beamscale history show|page|check [--store DIR] [--metric M]\n"
               "                         [--benchmark B] [--alpha P] [--threshold 5%] [--out F]\n"
               "       beamscale history export --bmf [--commit HASH] | --csv [--out FILE]",
      details => "The store (--store) holds one JSON file per recorded run.\n"
                 "Change points: E-Divisive means, a split kept when Student's t-test gives\n"
                 "p < --alpha. check: exit 1 when the newest commit is a\n"
                 "significant step the worse way by more than --threshold. docs/history.md.",
      options => [{store, "--store", string, "the history store directory",
                   {value, ?DEFAULT_STORE}},
                  {commit, "--commit", string, "record: the commit measured; export: which"},
                  {repo, "--repo", string, "record: read commit, date, branch from git here"},
                  {date, "--date", string, "record: the commit's date"},
                  {branch, "--branch", string, "record: the branch"},
                  {label, "--label", string, "record: a label of yours"},
                  {metric, "--metric", {list, string},
                   "metrics to look at; all: every one", {text, "those with an interval"}},
                  {benchmark, "--benchmark", {list, string}, "benchmarks to look at"},
                  {alpha, "--alpha", number, "the t-test's significance level",
                   {value, maps:get(alpha, beamscale_stats_changepoint:defaults())}},
                  {threshold, "--threshold", string, "check: the least slowdown, 5% or 5"},
                  {out, "--out", string, "page: the HTML file; export: instead of stdout"},
                  {bmf, "--bmf", flag, "export Bencher Metric Format JSON"},
                  {csv, "--csv", flag, "export every record as CSV"}]}.

%% @doc Run the sub-command.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{args := ["record" | Dirs], opts := Opts}) when Dirs =/= [] -> record(Dirs, Opts);
do(#{args := ["record"]}) -> {error, no_run_dirs};
do(#{args := [Sub], opts := Opts}) when Sub =:= "show"; Sub =:= "page"; Sub =:= "check";
                                        Sub =:= "export" ->
    case read(store(Opts)) of
        {ok, Records} -> sub(Sub, Records, Opts);
        {error, _} = E -> E
    end;
do(#{args := Args}) -> {error, {usage, Args}}.

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error(no_run_dirs) -> "history record needs one or more run directories";
format_error({usage, Args}) ->
    ["expected record, show, page, check or export, not: ", lists:join(" ", Args)];
format_error({bad_threshold, T}) -> ["--threshold ", T, ": a percentage expected (5% or 2.5)"];
format_error({bad_alpha, A}) -> io_lib:format("--alpha ~p: between 0 and 1 expected", [A]);
format_error(export_what) -> "history export needs --bmf or --csv";
format_error({no_commit, C}) -> ["no record of commit ", C, " in the store"];
format_error(empty) -> "the store holds no record: nothing to export".

%%% Internals

store(Opts) -> maps:get(store, Opts, ?DEFAULT_STORE).

record(Dirs, Opts) ->
    Built = [beamscale_history_record:build(D, Opts) || D <- Dirs],
    case [E || {error, _} = E <- Built] of
        [E | _] -> E;
        [] ->
            case beamscale_history_store:append(store(Opts), [R || {ok, R} <- Built]) of
                {ok, Files} ->
                    [io:format("recorded ~ts (commit ~ts): ~ts~n",
                               [maps:get(<<"run">>, R), maps:get(<<"commit">>, R), F])
                     || {{ok, R}, F} <- lists:zip(Built, Files)],
                    ok;
                {error, _} = E -> E
            end
    end.

read(Store) ->
    [io:format(standard_error, "note: ~ts: a write interrupted before its rename; ignored "
                               "(remove it)~n", [F])
     || F <- beamscale_history_store:leftovers(Store)],
    beamscale_history_store:records(Store).

sub("export", Records, Opts) -> export(Records, Opts);
sub(Sub, Records, Opts) ->
    case detect_opts(Opts) of
        {ok, DOpts} ->
            Series = beamscale_stats_history:series(Records, filter(Opts)),
            %% check asks newest/2 of each series, not every change point of it.
            case Sub of
                "show" ->
                    io:put_chars(beamscale_report_history:text(
                                   beamscale_stats_history:analyse(Series, DOpts)));
                "page" -> page(beamscale_stats_history:analyse(Series, DOpts), Opts);
                "check" -> check(Records, Series, DOpts, Opts)
            end;
        {error, _} = E -> E
    end.

detect_opts(#{alpha := A}) when is_number(A), A > 0, A < 1 -> {ok, #{alpha => float(A)}};
detect_opts(#{alpha := A}) -> {error, {bad_alpha, A}};
detect_opts(_) -> {ok, #{}}.

filter(Opts) ->
    Metrics = case maps:get(metric, Opts, []) of
                  [] -> primary;
                  ["all"] -> all;
                  Ms -> [unicode:characters_to_binary(M) || M <- Ms]
              end,
    Benches = case maps:get(benchmark, Opts, []) of
                  [] -> all;
                  Bs -> [unicode:characters_to_binary(B) || B <- Bs]
              end,
    #{metrics => Metrics, benchmarks => Benches}.

page(Analysed, Opts) ->
    Out = maps:get(out, Opts, filename:join(store(Opts), "history.html")),
    Title = ["History: ", filename:basename(filename:absname(store(Opts)))],
    Html = beamscale_report_history:html(Analysed, #{title => Title}),
    ok = beamscale_store:write_file(Out, Html),
    io:format("~ts~n", [Out]).

%% The newest commit's point of each series it has, against the segment since the last change.
check(Records, Series, DOpts, Opts) ->
    case threshold(maps:get(threshold, Opts, none)) of
        {ok, Pct} ->
            Newest = case Records of
                         [] -> none;
                         _ -> maps:get(<<"commit">>, lists:last(Records))
                     end,
            Checked = [S || #{points := Ps} = S <- Series, Ps =/= [],
                            maps:get(commit, lists:last(Ps)) =:= Newest],
            Bad = [{S, C} || S <- Checked,
                             #{regression := true, ratio := R} = C
                                 <- [beamscale_stats_history:newest(S, DOpts)],
                             is_number(R), abs(R - 1) * 100 > Pct],
            [io:format("regression at ~ts: ~ts ~ts ~ts: ~ts -> ~ts (ratio ~ts, p ~ts)~n",
                       [Newest, B, E, M, fmt(Bf), fmt(Af), fmt(R), fmt(P)])
             || {#{benchmark := B, environment := E, metric := M},
                 #{before := Bf, 'after' := Af, ratio := R, p := P}} <- Bad],
            verdict(Bad, Newest, length(Checked), Pct);
        {error, _} = E -> E
    end.

verdict([], Newest, N, Pct) ->
    io:format("no regression beyond ~ts % at the newest commit ~ts (~b series checked)~n",
              [fmt(Pct), text(Newest), N]);
verdict(Bad, Newest, _N, Pct) ->
    {failed, io_lib:format("~b series regressed beyond ~ts % at commit ~ts",
                           [length(Bad), fmt(Pct), Newest])}.

threshold(none) -> {ok, ?DEFAULT_THRESHOLD};
threshold(T) ->
    case beamscale_args:parse([{t, "--t", number, ""}], ["--t", string:trim(T, trailing, "%")])
    of
        {ok, #{opts := #{t := V}}} when V >= 0 -> {ok, float(V)};
        _ -> {error, {bad_threshold, T}}
    end.

export(Records, #{bmf := true} = Opts) ->
    Commit = case {maps:find(commit, Opts), Records} of
                 {{ok, C}, _} -> unicode:characters_to_binary(C);
                 {error, []} -> none;
                 {error, _} -> maps:get(<<"commit">>, lists:last(Records))
             end,
    case Commit =/= none andalso [R || #{<<"commit">> := C1} = R <- Records, C1 =:= Commit] of
        false -> {error, empty};
        [] -> {error, {no_commit, Commit}};
        Rs -> out(beamscale_report_history:bmf(Rs, Commit), Opts)
    end;
export(Records, #{csv := true} = Opts) -> out(beamscale_report_history:csv(Records), Opts);
export(_Records, _Opts) -> {error, export_what}.

out(Data, #{out := File}) -> ok = beamscale_store:write_file(File, Data);
out(Data, _Opts) -> io:put_chars(Data).

fmt(null) -> "-";
fmt(X) -> beamscale_report_svg:fmt(X).

text(none) -> "(none)";
text(B) -> B.
