%% @doc The report writer of a run directory: reads the stored files (`run.json',
%% `measurements.csv', `failures.csv', `sanity.csv') and writes `summary.csv', `summary.json' and
%% `index.html' next to them. The statistics and formatting are pure (`beamscale_stats',
%% `beamscale_report_summary', `beamscale_report_run'); this module only does the I/O. The run
%% page's extra sections come from the studies (`beamscale_study:report_sections/1').
-module(beamscale_writer).

-export([write/1, load/1, missing/1, cut_short/1, is_load/1, summary/1, format_error/1]).

%% The files a load writes at its end; a load killed before has only those it writes as it goes.
-define(LOAD_END_FILES, [summary_json, run_json]).

%% @doc Write the summaries and `index.html' of run directory `Dir'; returns the page's path.
%% A load run directory (`run.json' says `kind: load', or a `load.csv' without
%% `measurements.csv') gets its own page from its `summary.json', `samples.csv' and `lcnt.csv';
%% a load cut short (no `summary.json') from its `load.csv' and `errors.csv'; a saturate run
%% directory (`kind: saturate') from its `summary.json' and `levels.csv'.
-spec write(file:filename()) -> {ok, file:filename()} | {error, {?MODULE, term()}}.
write(Dir) ->
    case {run_json(Dir), is_load(Dir)} of
        {{ok, #{<<"kind">> := <<"saturate">>}}, _} -> write_saturate(Dir);
        {{ok, #{<<"kind">> := <<"load">>} = Run}, _} -> write_load(Dir, Run);
        {{ok, Run}, true} -> write_load(Dir, Run);
        _ -> write_bench(Dir)
    end.

write_load(Dir, Run) ->
    case summary(Dir) of
        {ok, Summary} -> write_load(Dir, Run, Summary);
        {error, {?MODULE, {summary_json, _, enoent}}} ->
            Stopped = iolist_to_binary(["cut short: no ", lists:join(", ", cut_short(Dir)),
                                        " (the load did not end); shown from ",
                                        beamscale_format_rundir:name(load_csv), " and ",
                                        beamscale_format_rundir:name(errors)]),
            write_load(Dir, Run, beamscale_report_load_extra:cut_short_summary(
                                   rows(Dir, load_csv), rows(Dir, errors), Stopped));
        {error, _} = Error -> Error
    end.

write_load(Dir, Run, Summary0) ->
    %% `--resolution' under a second: its intervals drawn too.
    Summary = case rows(Dir, load_fine) of
                  [] -> Summary0;
                  Fine -> Summary0#{<<"per_interval">> =>
                                        beamscale_report_load_extra:fine_seconds(Fine)}
              end,
    Data = #{run => Run, summary => Summary,
             samples => rows(Dir, samples), lcnt => rows(Dir, lcnt),
             profiles => beamscale_profile:read_levels(Dir)},
    write_index(Dir, beamscale_report_load:index(Data)).

write_saturate(Dir) ->
    case summary(Dir) of
        {ok, Summary} ->
            Levels = [beamscale_stats_saturate:from_row(R) || R <- rows(Dir, levels)],
            write_index(Dir, beamscale_report_saturate:index(Summary, Levels,
                                                             beamscale_profile:read_levels(Dir)));
        {error, _} = Error -> Error
    end.

%% @doc A load run's `summary.json', decoded (binary keys).
-spec summary(file:filename()) -> {ok, map()} | {error, {?MODULE, term()}}.
summary(Dir) ->
    File = file(Dir, summary_json),
    case file:read_file(File) of
        {ok, Bin} ->
            case beamscale_format_json:decode(Bin) of
                {ok, Summary} when is_map(Summary) -> {ok, Summary};
                _ -> {error, {?MODULE, {summary_json, File, not_an_object}}}
            end;
        {error, Why} -> {error, {?MODULE, {summary_json, File, Why}}}
    end.

write_index(Dir, Page) ->
    Index = file(Dir, index),
    ok = beamscale_store:write_file(Index, Page),
    {ok, Index}.

%% @doc The files a load run directory lacks that a load writes at its end (none for a load
%% that ended, or a directory that is not a load's).
-spec cut_short(file:filename()) -> [string()].
cut_short(Dir) ->
    [beamscale_format_rundir:name(F) || is_load(Dir), F <- ?LOAD_END_FILES,
                                        not filelib:is_regular(file(Dir, F))].

%% @doc Whether `Dir' holds a load run: a load writes load.csv from its first second; a suite
%% run writes measurements.csv.
-spec is_load(file:filename()) -> boolean().
is_load(Dir) ->
    filelib:is_regular(file(Dir, load_csv))
        andalso not filelib:is_regular(file(Dir, measurements)).

rows(Dir, File) -> beamscale_store:read_rows(file(Dir, File)).

file(Dir, File) -> beamscale_format_rundir:path(Dir, File).

write_bench(Dir) ->
    case load(Dir) of
        {ok, #{run := Run, rows := Rows} = Data} ->
            ok = beamscale_store:write_file(file(Dir, summary_csv),
                                            beamscale_report_summary:csv(Rows)),
            ok = beamscale_store:write_file(file(Dir, summary_json),
                                            beamscale_report_summary:json(Run, Rows)),
            Index = file(Dir, index),
            ok = beamscale_store:write_file(Index, beamscale_report_run:index(Data)),
            {ok, Index};
        {error, _} = Error -> Error
    end.

%% @doc What the report of `Dir' is made of: run metadata, summary rows with their sanity
%% verdicts, sanity verdicts, failures, samples and the studies' sections for these rows.
-spec load(file:filename()) -> {ok, beamscale_report_run:data()} | {error, {?MODULE, term()}}.
load(Dir) ->
    case {filelib:is_regular(file(Dir, measurements)), run_json(Dir)} of
        {false, _} -> {error, {?MODULE, {not_a_run_directory, Dir}}};
        {true, {error, _} = Error} -> Error;
        {true, {ok, Run}} ->
            SanityRows = beamscale_store:read_rows(file(Dir, sanity)),
            Sanity = [{B, V, D} || #{benchmark := B, verdict := V, detail := D} <- SanityRows],
            Verdicts = maps:from_list([{B, V} || {B, V, _} <- Sanity]),
            Measurements = beamscale_store:measurements(Dir),
            Stats = beamscale_stats:report_stats(Measurements),
            Counts = counts(Dir),
            Rows = beamscale_report_summary:with_instructions(
                     beamscale_report_summary:with_sanity(Stats, Verdicts), Counts),
            Samples = beamscale_store:read_rows(file(Dir, samples)),
            {ok, #{run => Run, rows => Rows, sanity => Sanity,
                   failures => beamscale_store:failures(Dir), missing => element(3, missing(Dir)),
                   samples => Samples,
                   lcnt => beamscale_store:read_rows(file(Dir, lcnt)),
                   sections => beamscale_study:report_sections(Rows)
                       ++ beamscale_report_otp:sections(beamscale_stats_otp:compare(Measurements),
                                                        beamscale_stats_otp:unread(Samples))
                       ++ instructions(Counts, Rows),
                   profiles => beamscale_profile:read(Dir),
                   iterations => beamscale_report_iterations:by_key(Measurements)}}
    end.

%% A counted run's counts; a run without instructions.csv has none.
counts(Dir) ->
    case beamscale_instr_store:read(Dir) of
        {ok, Counts} -> Counts;
        {error, _} -> #{}
    end.

%% A counted run's sections.
instructions(Counts, Rows) ->
    beamscale_report_run_instr:sections(Counts, Rows, beamscale_stats_otp:counts(Counts)).

%% @doc What `plan.csv' asked for against what `measurements.csv' and `failures.csv' hold:
%% iterations done and expected in all, and per job not finished its benchmark, environment
%% key, iterations done and expected. Argument sets are known only from the rows (the node
%% under test gives them, and may give other sets in another environment: they are counted per
%% environment), so an environment never measured counts as one set.
-spec missing(file:filename()) ->
    {non_neg_integer(), non_neg_integer(),
     [{binary(), binary(), non_neg_integer(), pos_integer()}]}.
missing(Dir) ->
    Done = lists:usort([{B, A, beamscale_format_env:key(R), I}
                        || #{benchmark := B, args := A, iteration := I} = R
                               <- beamscale_store:measurements(Dir)
                               ++ beamscale_store:failures(Dir), I =/= <<"0">>]),
    Sets = fun(B, Env) ->
                   max(1, length(lists:usort([A || {B1, A, E1, _} <- Done, B1 =:= B, E1 =:= Env])))
           end,
    Jobs = [{B, Env, length([x || {B1, _, E1, _} <- Done, B1 =:= B, E1 =:= Env]),
             binary_to_integer(I) * Sets(B, Env)}
            || #{benchmark := B, iterations := I} = Row <- rows(Dir, plan),
               Env <- [beamscale_format_env:key(Row)]],
    {lists:sum([min(D, E) || {_, _, D, E} <- Jobs]), lists:sum([E || {_, _, _, E} <- Jobs]),
     [J || {_, _, D, E} = J <- Jobs, D < E]}.

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, Reason}) -> format_error(Reason);
format_error({not_a_run_directory, Dir}) ->
    io_lib:format("~ts: not a run directory (no measurements.csv, nor a load's load.csv)", [Dir]);
format_error({summary_json, File, Why}) ->
    io_lib:format("~ts: cannot read the run's summary: ~ts", [File, why(Why)]);
format_error({run_json, File, Why}) ->
    io_lib:format("~ts: cannot read run.json: ~ts", [File, why(Why)]).

%% Why a JSON file could not be used: not an object, its syntax, or the file's posix error.
why(not_an_object) -> "not a JSON object";
why({syntax, _} = Syntax) -> beamscale_format_json:format_error(Syntax);
why(Posix) -> file:format_error(Posix).

%% A run directory without run.json (e.g. copied measurements alone) still gets a report.
run_json(Dir) ->
    File = file(Dir, run_json),
    case file:read_file(File) of
        {ok, Bin} ->
            case beamscale_format_json:decode(Bin) of
                {ok, Run} when is_map(Run) -> {ok, Run};
                {ok, _} -> {error, {?MODULE, {run_json, File, not_an_object}}};
                {error, {beamscale_format_json, Why}} -> {error, {?MODULE, {run_json, File, Why}}}
            end;
        {error, enoent} -> {ok, #{}};
        {error, Why} -> {error, {?MODULE, {run_json, File, Why}}}
    end.
