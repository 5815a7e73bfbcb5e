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
            ok = fixed_cookie(Config),
            case beamscale_store:open(Dir) of
                {ok, Store} -> run(Dir, Store, Config, Mode);
                {error, Reason} -> {error, {?MODULE, Reason}}
            end;
        {error, Reason} -> {error, {?MODULE, Reason}}
    end.

%% A fixed cookie (handlers that reach nodes of their own with it) is read from its file and
%% given to the nodes as this node's own is: in a private file, never on a command line.
fixed_cookie(#{cookie_file := File}) when File =/= none ->
    {ok, Bin} = file:read_file(File),
    true = erlang:set_cookie(node(), binary_to_atom(string:trim(Bin))),
    ok;
fixed_cookie(_Config) -> ok.

%% @doc One line for an error of `run/2'.
-spec format_error(term()) -> iodata().
format_error({distribution, Why}) ->
    ["cannot make this node distributed (is epmd allowed to run?): ",
     beamscale_error:format(Why)];
format_error({progress, Why}) ->
    ["cannot start the progress printer: ", beamscale_error:format(Why)];
format_error({other_config, Dir, Diffs}) ->
    [Dir, " was started with another configuration (its run.json): ",
     lists:join("; ", [[K, " was ", Old, ", now ", New] || {K, Old, New} <- Diffs]),
     ". Give another --name, or the same configuration to continue it"];
%% The store's errors (and any other module's) are said by their own module.
format_error(Reason) -> beamscale_error:format(Reason).

%% @doc The run directory a configuration names: OUT/NAME.
-spec run_dir(beamscale_config:config()) -> file:filename().
run_dir(#{out := Out, name := Name}) -> filename:join(Out, Name).

run(Dir, Store, Config, Mode) ->
    %% The seed orders the jobs; it is no part of the experiment (a rerun may draw another).
    Info0 = beamscale_runinfo:collect(maps:remove(seed, Config)),
    case same_config(Dir, Info0) of
        ok -> start(Dir, Store, Config, Mode, Info0);
        {error, _} = Error -> ok = beamscale_store:close(Store), Error
    end.

start(Dir, Store, Config, Mode, Info0) ->
    State = read_state(Dir),
    Seed = seed(Dir, Config),
    Info = Info0#{start_time => maps:get(start_time, State), runs => maps:get(runs, State),
                  seed => Seed},
    write_run_json(Dir, Info#{end_time => null}),
    Benchmarks = benchmarks(Config),
    shadow_notes(Mode, Benchmarks, maps:get(bench_path, Config)),
    Points = beamscale_plan:jobs(Config, Benchmarks),
    write_plan(Dir, Points),
    Jobs = beamscale_plan:order(Points, Seed),
    resuming(Mode, Store, Jobs),
    case beamscale_run_icount:start(maps:get(clock, Config)) of
        {ok, Clock} ->
            try progress(Dir, Store, Config#{clock := Clock},
                         maps:merge(Info, beamscale_run_icount:info(Clock)), Jobs, Mode)
            after ok = beamscale_run_icount:stop(Clock)
            end;
        {error, Reason} ->
            ok = beamscale_store:close(Store),
            {error, {?MODULE, Reason}}
    end.

progress(Dir, Store, #{clock := Clock} = Config, Info, Jobs, Mode) ->
    case beamscale_progress:start(length(Jobs), Mode) of
        {ok, Progress} ->
            Log = node_log(Dir, Mode),
            Counted = beamscale_run_icount:open(Clock, Dir),
            try run_jobs(Dir, Store, Config, Info, Jobs, {Progress, Log, Counted})
            after
                close_log(Log),
                ok = beamscale_run_icount:close(Counted)
            end;
        {error, Reason} ->
            ok = beamscale_store:close(Store),
            {error, {?MODULE, {progress, Reason}}}
    end.

run_jobs(Dir, Store, Config, Info, Jobs, {Progress, Log, Counted}) ->
    Ctx0 = Counted#{code => beamscale_executor:code(), bench_path => maps:get(bench_path, Config),
             code_path => maps:get(code_path, Config), hosts => maps:get(hosts, Config),
             cores => beamscale_os:logical_cores(),
             scratch => beamscale_format_rundir:path(Dir, scratch),
             sample => maps:get(sample, Config), msacc => maps:get(msacc, Config),
             clock => maps:get(clock, Config), node_output => Log,
             profile => maps:get(profile, Config, false)},
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

job(#{bench := Bench, env := Env, launch := L, launches := Ls} = Job, K, Progress, Ctx0,
    Store) ->
    Label = io_lib:format("~s @ ~s, launch ~b of ~b",
                          [Bench, beamscale_format_env:key(Env), L, Ls]),
    beamscale_progress:job(Progress, K, Label),
    Notify = fun(Event) -> beamscale_progress:event(Progress, Event) end,
    beamscale_executor:run(Job, Ctx0#{notify => Notify}, Store).

%% One experiment per run directory: a rerun continues only what the same resolved
%% configuration (and per-benchmark overrides) started; where and under which name the run
%% lives may be spelled otherwise.
same_config(Dir, #{config := Config, overrides := Overrides}) ->
    case file:read_file(beamscale_format_rundir:path(Dir, run_json)) of
        {ok, Bin} ->
            New = json(#{config => Config, overrides => Overrides}),
            case beamscale_format_json:decode(Bin) of
                {ok, #{<<"config">> := _} = Old} ->
                    case config_diffs(one_launch_before(Old), New) of
                        [] -> ok;
                        Diffs -> {error, {?MODULE, {other_config, Dir, Diffs}}}
                    end;
                _ -> ok
            end;
        {error, _} -> ok
    end.

%% A run started before launches ran one launch per point: continuing it with more would mix
%% two experiments, so its run.json counts as saying `launches' 1.
one_launch_before(#{<<"config">> := Config} = Old) ->
    Old#{<<"config">> := maps:merge(#{<<"launches">> => 1}, Config)}.

%% The JSON text of a term, read back, so old and new are compared as run.json holds them.
json(Term) ->
    {ok, Decoded} = beamscale_format_json:decode(iolist_to_binary(
                                                   beamscale_format_json:encode(Term))),
    Decoded.

config_diffs(Old, New) ->
    Get = fun(Path, M) -> lists:foldl(fun(K, Acc) when is_map(Acc) -> maps:get(K, Acc, null);
                                         (_, _) -> null
                                      end, M, Path)
          end,
    %% The keys run.json has: a key added to beamscale since that run was started had its
    %% default then, so it is no difference. Profiles change no measurement: a rerun may add
    %% them.
    Paths = [[<<"config">>, K] || K <- maps:keys(Get([<<"config">>], Old)),
                                  not lists:member(K, [<<"out">>, <<"name">>, <<"profile">>])]
        ++ [[<<"overrides">>]],
    [{lists:last(P), beamscale_format_json:encode(Get(P, Old)),
      beamscale_format_json:encode(Get(P, New))}
     || P <- Paths, Get(P, Old) =/= Get(P, New)].

%% A rerun says how far the run had come. Argument sets are known only once a benchmark ran
%% (they are asked of its node), so a benchmark not seen yet counts as one set: M is then a
%% lower bound, and said so. Said under --quiet too: it is not progress but what the run holds.
resuming(_Mode, Store, Jobs) ->
    Done = beamscale_store:finished(Store),
    Sets = lists:foldl(fun({{B, A, _E}, _N}, Acc) -> Acc#{B => [A | maps:get(B, Acc, [])]} end,
                       #{}, Done),
    Counts = maps:map(fun(_, As) -> length(lists:usort(As)) end, Sets),
    Unseen = [J || #{bench := B} = J <- Jobs, not is_map_key(atom_to_binary(B), Counts)],
    Total = lists:sum([I * maps:get(atom_to_binary(B), Counts, 1)
                       || #{bench := B, iterations := I} <- Jobs]),
    case Done of
        [] -> ok;
        _ -> io:format("resuming: ~b of ~s~b iterations done~n",
                       [length(Done), ["at least " || Unseen =/= []], Total])
    end.

%% `all' is the bench path's handlers and the built-ins they do not shadow (not `builtin:NAME').
benchmarks(#{benchmarks := all, bench_path := Path}) ->
    [N || N <- beamscale_handlers:available(Path),
          not lists:prefix("builtin:", atom_to_list(N))];
benchmarks(#{benchmarks := Names}) -> Names.

%% The user's handler wins over a built-in of the same name: one line says so.
shadow_notes(quiet, _Benchmarks, _Path) -> ok;
shadow_notes(_Mode, Benchmarks, Path) ->
    [io:format("note: ~s is the handler in ~ts, not the built-in (that one is builtin:~s)~n",
               [N, Dir, N]) || {N, Dir} <- beamscale_handlers:shadowed(Benchmarks, Path)],
    ok.

%% The seed of the jobs' order: `--seed', else the one run.json holds (a rerun continues in the
%% order it started), else drawn.
seed(_Dir, #{seed := Seed}) -> Seed;
seed(Dir, _Config) ->
    case file:read_file(beamscale_format_rundir:path(Dir, run_json)) of
        {ok, Bin} ->
            case beamscale_format_json:decode(Bin) of
                {ok, #{<<"seed">> := Seed}} when is_integer(Seed) -> Seed;
                _ -> beamscale_micro_launches:seed()
            end;
        {error, _} -> beamscale_micro_launches:seed()
    end.

%% Start time and how many times the run was started survive reruns of the same directory.
read_state(Dir) ->
    File = beamscale_format_rundir:path(Dir, state),
    State = case file:consult(File) of
                {ok, [#{start_time := _, runs := N} = S]} -> S#{runs := N + 1};
                _ -> #{start_time => beamscale_runinfo:now_iso(), runs => 1}
            end,
    ok = beamscale_store:write_file(File, io_lib:format("~p.~n", [State])),
    State.

write_run_json(Dir, Info) ->
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, run_json),
                                    [beamscale_format_json:encode(Info), $\n]).

%% Under --quiet what the nodes print (error reports of their processes, say) goes to
%% nodes.log in the run directory instead of the terminal; else to this command's output.
node_log(Dir, quiet) ->
    {ok, Fd} = file:open(beamscale_format_rundir:path(Dir, nodes_log), [append, {encoding, utf8}]),
    Fd;
node_log(_Dir, _Mode) -> group_leader().

close_log(Log) ->
    case Log =:= group_leader() of
        true -> ok;
        false -> ok = file:close(Log)
    end.

%% The points to run, so that the report of a run that did not finish can name what is
%% missing: one row per point, its iterations those of all its launches.
write_plan(Dir, Jobs) ->
    Rows = [beamscale_format_csv:line([B | beamscale_format_env:fields(
                                             beamscale_format_env:key(Env))] ++ [I * K, K])
            || #{bench := B, env := Env, iterations := I, launch := 1, launches := K} <- Jobs],
    Header = beamscale_format_csv:line([benchmark, otp, erl_args, schedulers, nodes, iterations,
                                        launches]),
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, plan), [Header | Rows]).

write_sanity(Dir, Sanity) ->
    Rows = [beamscale_format_csv:line([B, beamscale_sanity:to_text(V), detail(V)])
            || {B, V} <- Sanity],
    Header = beamscale_format_csv:line([benchmark, verdict, detail]),
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, sanity), [Header | Rows]).

detail({failed, Why}) -> Why;
detail(_) -> "".
