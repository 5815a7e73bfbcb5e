%% @doc The coordinator: plans a run, hands each job to the executor, keeps the run directory's
%% metadata, and ends with the sanity check. Reruns of the same run directory continue it.
-module(beamscale_coordinator).

-export([run/2, run_dir/1, format_error/1]).
-export_type([result/0]).

-type result() :: #{dir := file:filename(), jobs := non_neg_integer(),
                    failures := non_neg_integer(),
                    sanity := [{binary(), beamscale_sanity:verdict()}]}.

%% @doc Run everything `Config' asks for; progress is shown as `Mode' says.
-spec run(beamscale_config:config(), beamscale_progress:mode()) ->
    {ok, result()} | {error, {?MODULE, term()}}.
run(Config, Mode) ->
    Dir = run_dir(Config),
    case beamscale_node:distribute() of
        {ok, _} ->
            case beamscale_store:open(Dir) of
                {ok, Store} -> run(Dir, Store, Config, Mode);
                {error, Reason} -> {error, {?MODULE, Reason}}
            end;
        {error, Reason} -> {error, {?MODULE, Reason}}
    end.

%% @doc One line for an error of `run/2'.
-spec format_error(term()) -> iodata().
format_error({distribution, Why}) ->
    ["cannot make this node distributed (is epmd allowed to run?): ",
     beamscale_error:format(Why)];
format_error({progress, Why}) ->
    ["cannot start the progress printer: ", beamscale_error:format(Why)];
%% The store's errors (and any other module's) are said by their own module.
format_error(Reason) -> beamscale_error:format(Reason).

%% @doc The run directory a configuration names: OUT/NAME.
-spec run_dir(beamscale_config:config()) -> file:filename().
run_dir(#{out := Out, name := Name}) -> filename:join(Out, Name).

run(Dir, Store, Config, Mode) ->
    Info0 = beamscale_runinfo:collect(Config),
    State = read_state(Dir),
    Info = Info0#{start_time => maps:get(start_time, State), runs => maps:get(runs, State)},
    write_run_json(Dir, Info#{end_time => null}),
    Benchmarks = benchmarks(Config),
    Jobs = beamscale_plan:jobs(Config, Benchmarks),
    case beamscale_progress:start(length(Jobs), Mode) of
        {ok, Progress} -> run_jobs(Dir, Store, Config, Info, Jobs, Progress);
        {error, Reason} ->
            ok = beamscale_store:close(Store),
            {error, {?MODULE, {progress, Reason}}}
    end.

run_jobs(Dir, Store, Config, Info, Jobs, Progress) ->
    Ctx0 = #{code => beamscale_executor:code(), bench_path => maps:get(bench_path, Config),
             cores => beamscale_os:logical_cores(), scratch => filename:join(Dir, "scratch"),
             sample => maps:get(sample, Config), msacc => maps:get(msacc, Config)},
    FailedBefore = length(beamscale_store:failures(Dir)),
    {_, Store1} = lists:foldl(fun(Job, {K, St}) -> {K + 1, job(Job, K, Progress, Ctx0, St)} end,
                              {1, Store}, Jobs),
    ok = beamscale_store:close(Store1),
    ok = beamscale_progress:finish(Progress),
    Sanity = beamscale_sanity:check(Dir),
    write_sanity(Dir, Sanity),
    write_run_json(Dir, Info#{end_time => beamscale_runinfo:now_iso()}),
    {ok, #{dir => Dir, jobs => length(Jobs), sanity => Sanity,
           failures => length(beamscale_store:failures(Dir)) - FailedBefore}}.

job(#{bench := Bench, env := Env} = Job, K, Progress, Ctx0, Store) ->
    beamscale_progress:job(Progress, K, io_lib:format("~s @ ~s",
                                                      [Bench, beamscale_format_env:key(Env)])),
    Notify = fun(Event) -> beamscale_progress:event(Progress, Event) end,
    beamscale_executor:run(Job, Ctx0#{notify => Notify}, Store).

benchmarks(#{benchmarks := all, bench_path := Path}) -> beamscale_bench:available(Path);
benchmarks(#{benchmarks := Names}) -> Names.

%% Start time and how many times the run was started survive reruns of the same directory.
read_state(Dir) ->
    File = filename:join(Dir, "state.eterm"),
    State = case file:consult(File) of
                {ok, [#{start_time := _, runs := N} = S]} -> S#{runs := N + 1};
                _ -> #{start_time => beamscale_runinfo:now_iso(), runs => 1}
            end,
    ok = beamscale_store:write_file(File, io_lib:format("~p.~n", [State])),
    State.

write_run_json(Dir, Info) ->
    ok = beamscale_store:write_file(filename:join(Dir, "run.json"),
                                    [beamscale_format_json:encode(Info), $\n]).

write_sanity(Dir, Sanity) ->
    Rows = [beamscale_format_csv:line([B, beamscale_sanity:to_text(V), detail(V)])
            || {B, V} <- Sanity],
    Header = beamscale_format_csv:line([benchmark, verdict, detail]),
    ok = beamscale_store:write_file(filename:join(Dir, "sanity.csv"), [Header | Rows]).

detail({failed, Why}) -> Why;
detail(_) -> "".
