%% @doc Runs one job: one launch of one benchmark in one environment. It starts fresh nodes for the
%% environment, loads the benchmark code onto them, runs warm-ups then the timed iterations of every
%% argument set (through `beamscale_bench_runner' on the node under test) and records each iteration
%% in the store. Every node it starts is stopped when the job ends, whatever happened; a crash, a
%% hang past the timeout or a dead node is recorded as that iteration's failure and the job goes on.
-module(beamscale_executor).

-export([run/3, code/0, format_error/1]).
-export_type([context/0, event/0]).

%% What every job needs: the code to load, where handlers live, the machine's cores, and a
%% function told of progress.
-type context() :: #{code := beamscale_code:code(),
                     bench_path := [file:filename()],
                     code_path => [file:filename()],
                     hosts => [beamscale_load_scenario:ssh_host()],
                     cores := pos_integer(),
                     scratch := file:filename(),
                     notify := fun((event()) -> ok),
                     sample => pos_integer() | false,
                     node_output => pid(),  % where the nodes' output goes (--quiet)
                     msacc => 0..100,
                     clock => beamscale_run_icount:clock(),
                     instructions => file:io_device(),  % instructions.csv, when counted
                     profile => beamscale_profile:opts() | false,
                     profiling => true,  % nodes started for a profile (+JPperf true)
                     sampler => beamscale_sampler:sampler(),
                     handler => beamscale_handlers:handler(),
                     node_names => [string()]}.
-type event() :: {iteration, warmup | pos_integer(), pos_integer()} | {failed, term()}.

-define(RPC_TIMEOUT, 60000).

%% @doc The object code of the modules that run on nodes under test.
-spec code() -> beamscale_code:code().
code() -> beamscale_code:apps([beamscale_bench]).

%% @doc Run `Job' and return the store with its iterations recorded. A sampler watches the
%% job's nodes while they are up (docs/samples.md), unless the context's `sample' is `false'.
-spec run(beamscale_plan:job(), context(), beamscale_store:store()) -> beamscale_store:store().
run(#{bench := Bench} = Job, Ctx0, Store) ->
    Ctx = case beamscale_handlers:lookup(Bench, maps:get(bench_path, Ctx0)) of
              {ok, H} -> Ctx0#{handler => H};
              error -> Ctx0
          end,
    case hook(pre_bench, Job, Ctx) of
        ok ->
            try sampled(Job, Ctx, Store)
            after post_bench(Job, Ctx)
            end;
        {error, Reason} -> job_failed(Reason, Job, Ctx, Store)
    end.

%% bencherl's hooks around a job (beamscale_hooks); a failed post_bench is said, not recorded.
hook(Which, #{env := Env}, Ctx) ->
    beamscale_hooks:run(Which, handler(Ctx), Env, maps:get(code_path, Ctx, [])).

post_bench(Job, #{notify := Notify} = Ctx) ->
    case hook(post_bench, Job, Ctx) of
        ok -> ok;
        {error, Reason} -> Notify({failed, Reason})
    end.

sampled(Job, Ctx, Store) ->
    case start_sampler(Job, Ctx, Store) of
        {ok, Sampler} ->
            try run_job(Job, Ctx#{sampler => Sampler}, Store)
            after beamscale_sampler:stop(Sampler)
            end;
        {error, Reason} ->
            job_failed({sampler, Reason}, Job, Ctx, Store)
    end.

run_job(#{bench := Bench, env := Env} = Job, Ctx, Store) ->
    Key = fun(Args) -> {atom_to_binary(Bench), Args, beamscale_format_env:key(Env)} end,
    case start_env(Job, Ctx) of
        {ok, Nodes} ->
            try arg_sets(Job, Ctx, Nodes) of
                {ok, Sets} -> run_sets(Sets, Key, Job, Ctx, Nodes, Store);
                {error, Reason, Nodes1} ->
                    stop_env(Ctx, Nodes1),
                    job_failed(Reason, Job, Ctx, Store)
            catch
                Class:Reason:Stack ->
                    stop_env(Ctx, Nodes),
                    erlang:raise(Class, Reason, Stack)
            end;
        {error, Reason} ->
            job_failed(Reason, Job, Ctx, Store)
    end.

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({no_module, Bench, Mod}) ->
    io_lib:format("benchmark ~s: module ~s is not on the node under test (not built in, not on "
                  "the bench path nor the code path)", [Bench, Mod]).

%%% Internals

%% A job that could not start (its nodes, its sampler, its bench_args/2) is one row of
%% failures.csv: no args (they are asked of the node under test) and iteration 0, the whole job.
%% No iteration 1..N is marked done by it, so a rerun tries the job again. The reason is kept
%% as text, in the words of whatever failed (the emulator's, for a wrong flag).
job_failed(Reason, #{bench := Bench, env := Env}, #{notify := Notify}, Store) ->
    Notify({failed, Reason}),
    Key = {atom_to_binary(Bench), <<>>, beamscale_format_env:key(Env)},
    beamscale_store:record_failure(Store, Key, 0, beamscale_error:format(Reason)).

start_env(#{env := #{nodes := N} = Env} = Job, Ctx) ->
    case start_nodes(lists:seq(1, N), Env, Ctx#{node_names => maps:get(node_names, Job, [])},
                     []) of
        {ok, Nodes} -> ok = beamscale_sampler:watch(sampler(Ctx), Nodes), {ok, Nodes};
        {error, _} = Error -> Error
    end.

%% The sampler lets go of nodes before they are stopped, so a stop is not taken for a death.
stop_env(Ctx, Nodes) ->
    ok = beamscale_sampler:unwatch(sampler(Ctx), Nodes),
    stop_env(Nodes).

start_sampler(#{bench := Bench, env := Env}, Ctx, Store) ->
    case maps:get(sample, Ctx, false) of
        false -> {ok, none};
        Ms ->
            Opts = #{dir => beamscale_store:dir(Store), bench => atom_to_binary(Bench),
                     env => beamscale_format_env:key(Env), interval => Ms},
            beamscale_sampler:start(maps:merge(Opts, maps:with([msacc], Ctx)))
    end.

sampler(Ctx) -> maps:get(sampler, Ctx, none).

start_nodes([], _Env, _Ctx, Acc) ->
    {ok, lists:reverse(Acc)};
start_nodes([I | Rest], #{erl := Erl, flags := Flags, schedulers := S} = Env, Ctx, Acc) ->
    Spec0 = case host(I, maps:get(hosts, Ctx, [])) of
                here -> #{erl => Erl, code_path => bench_path(Ctx) ++ maps:get(code_path, Ctx, [])
                                                     ++ elixir_path(Ctx)};
                H -> #{erl => maps:get(erl, H, "erl"), ssh => maps:with([host, args, user], H)}
            end,
    Spec = maps:merge(Spec0#{flags => profile_flags(join_flags(Flags, extra_flags(Ctx)), Ctx),
                             schedulers => S},
                      maps:from_list([{output, O} || #{node_output := O} <- [Ctx]]
                                     ++ name_prefix(I, maps:get(node_names, Ctx, [])))),
    Clock = maps:get(clock, Ctx, wall),
    case beamscale_node:start("n" ++ integer_to_list(I),
                              beamscale_run_icount:node_spec(Clock, I, Spec)) of
        {ok, Handle} ->
            case ready(I, Handle, Ctx) of
                ok -> start_nodes(Rest, Env, Ctx, [Handle | Acc]);
                {error, _} = Error -> stop_env([Handle | Acc]), Error
            end;
        {error, _} = Error ->
            stop_env(Acc),
            Error
    end.

%% The code loaded, and on a counted node under test the instruction clock's NIF.
ready(I, #{node := Node} = Handle, Ctx) ->
    case load_code(Handle, Ctx) of
        ok -> beamscale_run_icount:prepare(maps:get(clock, Ctx, wall), {I, Node});
        Error -> Error
    end.

%% bencherl's slave nodes: the node under test (the first) runs here, the others in turn on the
%% configuration's hosts (through ssh, with that host's erl; code is sent, not read from paths).
host(1, _Hosts) -> here;
host(_I, []) -> here;
host(I, Hosts) -> lists:nth((I - 2) rem length(Hosts) + 1, Hosts).

%% Nodes 2..N take the configured name prefixes in turn (client, server, router, client...).
name_prefix(1, _Names) -> [];
name_prefix(_I, []) -> [];
name_prefix(I, Names) -> [{name_prefix, lists:nth((I - 2) rem length(Names) + 1, Names)}].

%% A profiled node's JIT names its code for perf.
profile_flags(Flags, #{profiling := true}) ->
    string:trim(Flags ++ " " ++ beamscale_profile:node_flags());
profile_flags(Flags, _Ctx) -> Flags.

stop_env(Nodes) ->
    lists:foreach(fun beamscale_node:stop/1, Nodes).

bench_path(#{bench_path := Path}) -> [filename:absname(D) || D <- Path].

%% The job's handler (set by run/3): its sources, data directory and bench.conf.
handler(Ctx) -> maps:get(handler, Ctx, #{sources => []}).

%% A bencherl bench.conf's EXTRA_ERL_ARGS come after the run's flags, as bencherl puts them.
extra_flags(Ctx) -> beamscale_handlers:extra_flags(handler(Ctx)).

join_flags(Flags, "") -> Flags;
join_flags("", Extra) -> Extra;
join_flags(Flags, Extra) -> Flags ++ " " ++ Extra.

%% Load beamscale's node-side modules, then compile the job's handler (with the sources beside
%% it) on the node itself, so it is built by the erl under test; Elixir files all at once.
load_code(#{node := Node}, #{code := Code} = Ctx) ->
    #{sources := Sources} = handler(Ctx),
    {Ex, Erl} = lists:partition(fun is_elixir/1, Sources),
    Steps = [fun() -> beamscale_code:load(Node, Code) end
             | [fun() -> beamscale_code:compile_load(Node, F) end || F <- Erl]]
        ++ [fun() -> beamscale_elixir:compile_files(Node, Ex) end],
    lists:foldl(fun(Step, ok) -> Step();
                   (_, Error) -> Error
                end, ok, Steps).

is_elixir(File) -> filename:extension(File) =:= ".ex".

%% Elixir's own applications, on the code path of a node whose handler is written in Elixir.
elixir_path(Ctx) ->
    #{sources := Sources} = handler(Ctx),
    case lists:any(fun is_elixir/1, Sources) andalso beamscale_elixir:lib(none) of
        {ok, Globs} -> element(2, {ok, _} = beamscale_code:expand_path(Globs));
        _ -> []
    end.

%% bench_args/2 runs on the node under test with bencherl's keys.
arg_sets(#{bench := Bench, version := Version}, #{cores := Cores} = Ctx,
         [#{node := Main} | _] = Nodes) ->
    Conf = [{number_of_cores, Cores}, {slaves, peers(Nodes)}],
    Mod = module(Bench, Ctx),
    try erpc:call(Main, beamscale_bench_runner, args, [Mod, Version, Conf], ?RPC_TIMEOUT) of
        {ok, Sets} -> {ok, Sets};
        {error, {error, undef} = Undef} -> {error, missing(Main, Bench, Mod, Undef), Nodes};
        {error, Reason} -> {error, {bench_args, Reason}, Nodes}
    catch
        error:{erpc, Why} -> {error, {bench_args, Why}, Nodes}
    end.

%% `undef' from bench_args/2 names the module when the module itself is what is missing.
missing(Node, Bench, Mod, Undef) ->
    case catch erpc:call(Node, code, ensure_loaded, [Mod], ?RPC_TIMEOUT) of
        {module, Mod} -> {bench_args, Undef};
        _ -> {?MODULE, {no_module, Bench, Mod}}
    end.

peers([_Main | Rest]) -> [N || #{node := N} <- Rest].

run_sets(Sets, Key, Job, Ctx, Nodes, Store) ->
    {Nodes1, Store1} =
        lists:foldl(fun(Args, {Ns, St}) -> run_set(Args, Key, Job, Ctx, Ns, St) end,
                    {Nodes, Store}, Sets),
    stop_env(Ctx, profile(Sets, Job, Ctx, Nodes1, Store1)),
    Store1.

%% The point's profile (docs/profiles.md), with its first argument set, after the iterations,
%% on fresh nodes of its own (warmed up, not sampled): the measured nodes run without
%% `+JPperf true', which slowed mbrot's measured iterations by 10 to 40 %
%% (bench/profile_overhead.sh). The nodes left to stop are returned.
profile([Args | _], #{bench := Bench, env := Env} = Job, #{profile := #{} = Opts} = Ctx,
        Nodes, Store) ->
    Dir = beamscale_store:dir(Store),
    case beamscale_profile:is_profiled(Dir, atom_to_binary(Bench), Env) of
        true -> Nodes;
        false ->
            stop_env(Ctx, Nodes),
            PCtx = maps:remove(sampler, Ctx#{profiling => true}),
            case start_env(Job, PCtx) of
                {ok, Started} ->
                    {[Main | _] = Ps, _} = warmups(Args, Job, PCtx, Started),
                    Call = fun() -> case call(Args, Job, PCtx, Ps) of
                                        {ok, Timings, _} ->
                                            {ok, lists:sum([T || {_, T} <- Timings])};
                                        _ -> error
                                    end
                           end,
                    beamscale_profile:point(#{dir => Dir, bench => atom_to_binary(Bench),
                                              env => Env, opts => Opts,
                                              os_pid => beamscale_node:os_pid(Main),
                                              node => maps:get(node, Main)}, Call),
                    Ps;
                {error, Reason} ->
                    ok = beamscale_profile:failed(Dir, atom_to_binary(Bench), Env,
                                                  ["its nodes did not start: ",
                                                   beamscale_error:format(Reason)]),
                    []
            end
    end;
profile(_Sets, _Job, _Ctx, Nodes, _Store) -> Nodes.

run_set(Args, Key0, Job, Ctx, Nodes, Store) ->
    Key = Key0(args_text(Args)),
    ok = beamscale_sampler:set_args(sampler(Ctx), element(2, Key)),
    case [N || N <- beamscale_plan:iterations(Job), not beamscale_store:done(Store, Key, N)] of
        [] -> {Nodes, Store};
        Todo ->
            {Nodes1, _} = warmups(Args, Job, Ctx, Nodes),
            iterations(Todo, Args, Key, Job, Ctx, Nodes1, Store)
    end.

warmups(Args, #{warmups := W} = Job, #{notify := Notify} = Ctx, Nodes) ->
    lists:foldl(fun(_, {Ns, _}) ->
                        Notify({iteration, warmup, W}),
                        Ns1 = case call(Args, Job, Ctx, Ns) of
                                  {ok, _, _} -> Ns;
                                  {error, _, _, _} -> Ns;
                                  {lost, _} -> restart(Job, Ctx, Ns)
                              end,
                        {Ns1, ok}
                end, {Nodes, ok}, lists:seq(1, W)).

iterations([], _Args, _Key, _Job, _Ctx, Nodes, Store) ->
    {Nodes, Store};
iterations([N | Rest], Args, Key, #{iterations := I, launch := L} = Job,
           #{notify := Notify} = Ctx, Nodes, Store) ->
    Notify({iteration, N - (L - 1) * I, I}),
    case call(Args, Job, Ctx, Nodes) of
        {ok, Timings, Output} ->
            ok = beamscale_store:save_output(Store, Key, Output, false),
            Store1 = beamscale_run_icount:record(Store, {Key, N, L}, Timings, Ctx),
            iterations(Rest, Args, Key, Job, Ctx, Nodes, Store1);
        {error, Reason, _Timings, Output} ->
            ok = beamscale_store:save_output(Store, Key, Output, false),
            Notify({failed, Reason}),
            Store1 = beamscale_store:record_failure(Store, Key, N, Reason),
            iterations(Rest, Args, Key, Job, Ctx, Nodes, Store1);
        {lost, {timeout, _} = Reason} ->
            %% A hang would hang again: the rest of this argument set is not tried.
            Notify({failed, Reason}),
            Store1 = lists:foldl(fun(M, St) -> beamscale_store:record_failure(St, Key, M, Reason)
                                 end, Store, [N | Rest]),
            {restart(Job, Ctx, Nodes), Store1};
        {lost, Reason} ->
            Notify({failed, Reason}),
            Store1 = beamscale_store:record_failure(Store, Key, N, Reason),
            iterations(Rest, Args, Key, Job, Ctx, restart(Job, Ctx, Nodes), Store1)
    end.

%% One iteration on the node under test. `lost' means the node hung or died.
call(_Args, _Job, _Ctx, []) ->
    {lost, no_node};
call(Args, #{bench := Bench, timeout := Timeout, env := #{schedulers := S}}, Ctx,
     [#{node := Main} | _] = Nodes) ->
    Conf = [{datadir, datadir(Bench, Ctx)}, {master, Main}, {schedulers, S}],
    Mod = module(Bench, Ctx),
    Clock = maps:get(clock, Ctx, wall),
    try erpc:call(Main, beamscale_bench_runner, iteration,
                  [Bench, Mod, Args, peers(Nodes), Conf, Clock], Timeout * 1000)
    catch
        error:{erpc, timeout} -> {lost, {timeout, Timeout}};
        error:{erpc, noconnection} -> {lost, node_down};
        Class:Reason -> {lost, {Class, Reason}}
    end.

%% After a hang or a death the environment is started afresh; if that fails the remaining
%% iterations find no node and fail with that reason.
restart(Job, Ctx, Nodes) ->
    stop_env(Ctx, Nodes),
    case start_env(Job, Ctx) of
        {ok, Fresh} -> Fresh;
        {error, _} -> []
    end.

module(Bench, Ctx) ->
    maps:get(module, handler(Ctx), beamscale_bench:module(Bench)).

%% bencherl's data directory: the handler's `data' (bench/NAME/data, or DIR/data beside a flat
%% handler) when there is one, else a scratch directory.
datadir(Bench, #{scratch := Scratch} = Ctx) ->
    case maps:get(datadir, handler(Ctx), none) of
        none -> scratch(Bench, Scratch);
        D -> case filelib:is_dir(D) of
                 true -> D;
                 false -> scratch(Bench, Scratch)
             end
    end.

scratch(Bench, Scratch) ->
    D = filename:absname(filename:join(Scratch, atom_to_list(Bench))),
    ok = filelib:ensure_path(D),
    D.

args_text(Args) ->
    unicode:characters_to_binary(text(Args)).

%% As `~0tp' writes a term, but a list is a string only when no character in it is a control
%% one: bencherl's `[[10]]' is ten, not a newline.
text(L) when is_list(L), L =/= [] ->
    case io_lib:printable_unicode_list(L) andalso lists:all(fun(C) -> C >= $\s end, L) of
        true -> io_lib:format("~0tp", [L]);
        false -> try ["[", lists:join(",", [text(E) || E <- L]), "]"]
                 catch error:_ -> io_lib:format("~0tp", [L])  % an improper list
                 end
    end;
text(T) when is_tuple(T) -> ["{", lists:join(",", [text(E) || E <- tuple_to_list(T)]), "}"];
text(T) -> io_lib:format("~0tp", [T]).
