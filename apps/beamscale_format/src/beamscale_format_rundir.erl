%% @doc The files of a run directory, declared once: each one's name (`NAME/' for a directory),
%% the commands whose runs write it and a line of what it holds. The modules that write and read
%% run files take the names from here (`name/1', `path/2'); docs/run-directory.md's tables of
%% files are checked against `all/0' both ways (`beamscale_docs_files_tests'). Data only, in the
%% lowest app, so that the top app and the load app can both read it.
-module(beamscale_format_rundir).

-export([all/0, name/1, path/2, path/3, beside/2]).
-export_type([file/0, entry/0]).

-type file() :: atom().
%% `writers': the commands whose run directory holds the file (`any': every command).
-type entry() :: #{file := file(), name := string(), writers := [atom()], what := string()}.

%% @doc Every run file, in docs/run-directory.md's order.
-spec all() -> [entry()].
all() ->
    suite() ++ load() ++ levels() ++ other().

%% A suite run's files (`run', also `bench --name' and the ETS study, which run the pipeline).
suite() ->
    [e(run_json, "run.json", [run, bench, load, saturate, study],
       "what ran: releases, host, cores, the configuration, start and end"),
     e(measurements, "measurements.csv", [run, bench, study],
       "one row per timed iteration and phase"),
     e(failures, "failures.csv", [run, bench, study], "one row per failed iteration or job"),
     e(output, "output/", [run, bench, study], "what each benchmark printed"),
     e(sanity, "sanity.csv", [run, study], "each benchmark's outputs compared across environments"),
     e(plan, "plan.csv", [run, study], "the points the run asked for"),
     e(nodes_log, "nodes.log", [run, study], "with --quiet: what the nodes under test printed"),
     e(lock, "run.lock", [run, bench, study], "the OS pid and node of the run appending"),
     e(state, "state.eterm", [run, study], "start time and start count, kept across reruns"),
     e(profiles, "profiles/", [run, load, saturate, study], "with --profile: folded stacks"),
     e(micro_json, "micro.json", [bench], "a bench --name run's --json output"),
     e(instructions, "instructions.csv", [run, bench], "--clock instructions: the counts"),
     e(summary_csv, "summary.csv", [run, bench, study, report], "the report's table"),
     e(summary_json, "summary.json", [run, bench, load, saturate, study, report],
       "the report's figures (a load's: totals, seconds, histograms)"),
     e(index, "index.html", [run, bench, load, saturate, study, report], "the report's page"),
     e(scratch, "scratch/", [run, study], "the datadir of benchmarks that have none"),
     e(samples, "samples.csv", [run, load, saturate, study], "the sampler's rows, per interval"),
     e(samples_summary, "samples_summary.csv", [run, load, saturate, study],
       "samples.csv summarised per benchmark and environment"),
     e(lcnt, "lcnt.csv", [run, load, saturate, study],
       "the lcnt emulator's locks that collided most")].

%% A load run's own files (docs/scenario.md).
load() ->
    [e(load_csv, "load.csv", [load], "one row per second"),
     e(load_fine, "load_fine.csv", [load], "with --resolution: one row per interval"),
     e(errors, "errors.csv", [load], "one row per second and error reason"),
     e(statuses, "statuses.csv", [load], "one row per second and reply status"),
     e(requests, "requests.csv", [load], "one row per request name"),
     e(tags, "tags.csv", [load], "one row per tag of the requests"),
     e(counters, "counters.csv", [load], "the run's named counts"),
     e(dump, "dump.log", [load], "with --dump N: the first N exchanges"),
     e(ctl, "ctl.json", [load], "while the load runs: its control endpoint and token"),
     e(events, "events.csv", [load], "each change by ctl or a stalled launcher"),
     e(load_lock, ".NAME.lock", [load], "beside the run directory: held by the load writing it")].

%% The files of runs in levels: saturate's search, the IO studies' cells.
levels() ->
    [e(levels, "levels.csv", [saturate, study], "one row per load level"),
     e(capacity, "capacity.csv", [study], "one row per cell whose search ended"),
     e(wrk, "wrk.csv", [study], "the pollset study's wrk runs"),
     e(study_json, "study.json", [study], "the study's size, OTP, cores and configurations")].

other() ->
    [e(points, "points/", [bench], "bench --name: each point as measured, for a rerun"),
     e(compare, "compare.html", [compare], "compare's page, in the second run by default"),
     e(crash, "beamscale-crash.log", [any], "an internal error's stack and its command")].

e(File, Name, Writers, What) -> #{file => File, name => Name, writers => Writers, what => What}.

%% @doc The name of run file `File' (`output', not `output/', for a directory).
-spec name(file()) -> string().
name(File) ->
    case [N || #{file := F, name := N} <- all(), F =:= File] of
        [Name] -> string:trim(Name, trailing, "/");
        [] -> error({unknown_run_file, File})
    end.

%% @doc Run file `File' in run directory `Dir'.
-spec path(file:filename_all(), file()) -> file:filename_all().
path(Dir, File) -> filename:join(Dir, name(File)).

%% @doc Run file `File' kept beside run directory `Dir', its `NAME' the directory's name.
-spec beside(file:filename(), file()) -> file:filename().
beside(Dir, File) ->
    Name = string:replace(name(File), "NAME", filename:basename(Dir)),
    filename:join(filename:dirname(Dir), lists:flatten(Name)).

%% @doc `Rest' under the run directory `Dir''s directory `File' (`profiles', `output').
-spec path(file:filename_all(), file(), [file:filename_all()]) -> file:filename_all().
path(Dir, File, Rest) -> filename:join([Dir, name(File) | Rest]).
