%% @doc The targets of a load scenario made ready: a node beamscale starts (with `beamscale_node',
%% the benchmark app's code loaded and the scenario's init `M:F(A)' run), an existing node
%% (reached with its cookie), a host:port (listening) or a directory (there).
-module(beamscale_loadtest_targets).

-export([resolve/2, check_calls/2, stop/1, watch/2, downs/1, format_error/1]).

-define(INIT_TIMEOUT, 60000).
%% What a target node runs: the IO targets, and the probe the sampler starts there.
-define(TARGET_APPS, [beamscale_bench, beamscale_targets]).
-define(CONNECT_TIMEOUT, 2000).
%% A watcher answers at once (it only keeps a list); the bound only guards a dead one.
-define(WATCH_TIMEOUT, 5000).

%% @doc Resolve every target; on an error the nodes already started are stopped.
%% `Cookie' is the `--cookie' option (or `undefined').
-spec resolve(#{atom() => beamscale_load_scenario:target()}, atom() | undefined) ->
    {ok, #{atom() => map()}, [beamscale_node:handle()]} | {error, {?MODULE, term()}}.
resolve(Targets, Cookie) ->
    %% Nodes beamscale starts come first: their init may start the server a host:port names.
    {Start, Other} = lists:partition(fun({_, T}) -> is_map_key(start, T) end,
                                     maps:to_list(Targets)),
    resolve(Start ++ Other, Cookie, #{}, []).

resolve([], _Cookie, Acc, Started) -> {ok, Acc, Started};
resolve([{Name, T} | Rest], Cookie, Acc, Started) ->
    case one(Name, T, Cookie) of
        {ok, R, nothing} -> resolve(Rest, Cookie, Acc#{Name => R}, Started);
        {ok, R, Handle} -> resolve(Rest, Cookie, Acc#{Name => R}, [Handle | Started]);
        {error, Reason} ->
            ok = stop(Started),
            {error, {?MODULE, {Name, Reason}}}
    end.

%% UDP has no connection to try: the first request's reply (or its timeout) tells.
one(_Name, #{host := _, transport := udp} = T, _Cookie) -> {ok, T, nothing};
one(_Name, #{host := H, port := P} = T, _Cookie) ->
    %% A server that does not listen is one clear error now rather than every request failing.
    %% The target is kept whole: its TLS options go to the users.
    case gen_tcp:connect(H, P, [], ?CONNECT_TIMEOUT) of
        {ok, S} -> ok = gen_tcp:close(S), {ok, T, nothing};
        {error, Reason} -> {error, {not_listening, H, P, Reason}}
    end;
%% The fs kind's directory: one clear error now if it is not there.
one(_Name, #{dir := D} = T, _Cookie) ->
    case filelib:is_dir(D) of
        true -> {ok, T, nothing};
        false -> {error, {not_a_directory, D}}
    end;
one(_Name, #{node := Node} = T, Cookie) ->
    case cookie(maps:get(cookie, T, Cookie)) of
        {ok, C} -> true = erlang:set_cookie(Node, C);
        none -> ok
    end,
    %% A hidden connection: global must not try to mesh this node with the target's cluster
    %% (other cookies), which ends in a disconnect to prevent overlapping partitions.
    case net_kernel:hidden_connect_node(Node) of
        true -> {ok, #{node => Node}, nothing};
        _ -> {error, {unreachable, Node}}
    end;
one(Name, #{start := S}, _Cookie) ->
    case executable(maps:get(erl, S)) of
        {ok, Erl} -> start(Name, Erl, S);
        error -> {error, {erl_not_found, maps:get(erl, S)}}
    end.

%% A bare name is looked up on PATH, as a shell would.
executable(Erl) ->
    case lists:member($/, Erl) of
        true -> {ok, Erl};
        false -> case os:find_executable(Erl) of
                     false -> error;
                     Path -> {ok, Path}
                 end
    end.

%% The code path takes globs and lib directories as a run's `code_path' does (beamscale_code).
start(Name, Erl, S) ->
    case beamscale_code:expand_path(maps:get(code_path, S)) of
        {ok, Paths} -> start(Name, Erl, S, Paths);
        {error, _} = E -> E
    end.

start(Name, Erl, S, Paths) ->
    Spec = #{erl => Erl, flags => maps:get(flags, S),
             schedulers => erlang:system_info(logical_processors), code_path => Paths},
    case beamscale_node:start(atom_to_list(Name), Spec) of
        {ok, #{node := Node} = H} ->
            case init(Node, S) of
                ok -> {ok, #{node => Node}, H};
                {error, _} = E -> beamscale_node:stop(H), E
            end;
        {error, _} = E -> E
    end.

%% The benchmark app's code (IO targets included) goes onto the node, then its init runs.
init(Node, S) ->
    try
        ok = beamscale_code:load(Node, beamscale_code:apps(?TARGET_APPS)),
        case S of
            #{init := {M, F, A}} -> init_result(erpc:call(Node, M, F, A, ?INIT_TIMEOUT));
            _ -> ok
        end
    catch Class:Reason -> {error, {init, Class, Reason}}
    end.

%% An init that returns `{error, _}' failed as surely as one that raised.
init_result({error, Reason}) -> {error, {init_returned, Reason}};
init_result(_) -> ok.

%% @doc Before any load: each request step, at any depth (`if', `repeat', `for', a dynamic
%% request's: `beamscale_load_steps'), asked of its kind against its resolved target (the
%% kind's `preflight/2', `beamscale_load_kinds'): an `rpc' step, that the function it calls is
%% there (a `code_path' that leaves its module out would fail every request of the run).
-spec check_calls(beamscale_load_scenario:scenario(), #{atom() => map()}) ->
    ok | {error, {?MODULE, term()}}.
check_calls(#{sessions := Sessions}, Targets) ->
    preflight(lists:usort([{Mod, T, Spec} || #{steps := S} <- Sessions,
                                             {request, Mod, T, Spec, _}
                                                 <- beamscale_load_steps:all(S)]),
              Targets).

preflight([], _Targets) -> ok;
preflight([{Mod, T, Spec} | Rest], Targets) ->
    case beamscale_load_kinds:preflight(Mod, Spec, maps:get(T, Targets)) of
        ok -> preflight(Rest, Targets);
        {error, Reason} -> {error, {?MODULE, {T, Reason}}}
    end.

%% The scenario's or --cookie's cookie; else ~/.erlang.cookie, as any Erlang tool would.
cookie(C) when is_atom(C), C =/= undefined -> {ok, C};
cookie(_) ->
    case init:get_argument(home) of
        {ok, [[Home]]} ->
            case file:read_file(filename:join(Home, ".erlang.cookie")) of
                {ok, Bin} -> {ok, binary_to_atom(string:trim(Bin))};
                {error, _} -> none
            end;
        _ -> none
    end.

%% @doc Watch the node targets during a load: one that goes down is said at once on the
%% terminal (unless `Quiet') with the second of the load (`Start': monotonic ms); `downs/1'
%% ends the watch and returns them.
-spec watch(#{atom() => map()}, #{start := integer(), quiet := boolean()}) -> pid().
watch(Targets, Opts) ->
    Nodes = [{Node, Name} || {Name, #{node := Node}} <- maps:to_list(Targets), Node =/= node()],
    Leader = group_leader(),
    spawn_link(fun() ->
                       group_leader(Leader, self()),
                       [erlang:monitor_node(N, true) || {N, _} <- Nodes],
                       watching(maps:from_list(Nodes), Opts, [])
               end).

watching(Nodes, #{start := Start, quiet := Quiet} = Opts, Downs) ->
    receive
        {nodedown, Node} when is_map_key(Node, Nodes) ->
            T = (erlang:monotonic_time(millisecond) - Start) / 1000,
            Name = maps:get(Node, Nodes),
            Quiet orelse io:format("target ~p: node ~p went down at ~.1f s~n", [Name, Node, T]),
            watching(Nodes, Opts, [#{target => Name, node => Node, at_s => T} | Downs]);
        {downs, From} -> From ! {self(), lists:reverse(Downs)}
    end.

%% @doc The targets that went down since `watch/2' (in order), and the watch ended.
-spec downs(pid()) -> [#{target := atom(), node := node(), at_s := float()}].
downs(Pid) ->
    Pid ! {downs, self()},
    receive {Pid, Downs} -> Downs
    after ?WATCH_TIMEOUT -> []
    end.

%% @doc Stop the nodes that were started.
-spec stop([beamscale_node:handle()]) -> ok.
stop(Handles) -> lists:foreach(fun beamscale_node:stop/1, Handles).

%% @doc One line for an error.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({Name, {unreachable, Node}}) ->
    io_lib:format("target ~p: node ~p unreachable (name or cookie wrong?)", [Name, Node]);
format_error({Name, {not_listening, H, P, Reason}}) ->
    io_lib:format("target ~p: nothing answers on ~ts:~b (~ts): start the server first",
                  [Name, H, P, inet:format_error(Reason)]);
format_error({Name, {not_a_directory, D}}) ->
    io_lib:format("target ~p: ~ts is not a directory", [Name, D]);
format_error({Name, {erl_not_found, Erl}}) ->
    io_lib:format("target ~p: no executable ~ts (give its path or put it on PATH)", [Name, Erl]);
format_error({Name, {init_returned, Reason}}) ->
    io_lib:format("target ~p: its set-up returned an error: ~ts",
                  [Name, beamscale_error:format(Reason)]);
format_error({Name, {init, Class, Reason}}) ->
    io_lib:format("target ~p: its set-up failed: ~ts", [Name, init_text(Class, Reason)]);
format_error({Name, Reason}) ->
    io_lib:format("target ~p: ~ts", [Name, beamscale_error:format(Reason)]).

%% A failed `ok = beamscale_code:load(...)' carries the loader's own reason.
init_text(error, {badmatch, {error, Reason}}) -> beamscale_error:format(Reason);
init_text(Class, Reason) -> beamscale_error:format({Class, Reason}).
