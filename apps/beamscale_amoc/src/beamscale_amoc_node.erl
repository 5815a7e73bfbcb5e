%% @doc An amoc scenario's state on the node its users run on: its settings (read by
%% `amoc_config'), the state `init/0' returned, the users' ids and the throttle server. As amoc
%% does on each node, `start/3' runs `init/0' once before any user, and `stop/0' runs
%% `terminate/0,1' after the last.
-module(beamscale_amoc_node).

-export([start/3, start/4, start/5, stop/0, run/0, config/0, nodes/0, coordinator/0, next_id/0,
         format_error/1]).
-export_type([run/0]).

-define(RUN, {?MODULE, run}).
-define(CONFIG, {?MODULE, config}).
-define(NODES, {?MODULE, nodes}).
-define(HUB, {?MODULE, coordinator}).

-type run() :: #{scenario := module(), state := term(), ids := atomics:atomics_ref(),
                 observe := [atom()], holder := pid(), index := pos_integer(),
                 count := pos_integer()}.

%% @doc Settle `Mod''s settings and run its `init/0' here; `Observe': the names of the scenario's
%% own timings (`beamscale_amoc:observe/2'). On an error nothing is left running.
-spec start(module(), #{atom() => term()}, [atom()]) -> ok | {error, {?MODULE, term()}}.
start(Mod, Config, Observe) -> start(Mod, Config, Observe, {1, 1}).

%% @doc As `start/3' on the node `Index' of `Count' that run the users: this node's users take
%% the ids `Index', `Index + Count', ... (the load's users go round the nodes in turn, so the
%% ids of all are 1..N, as amoc_dist's across its nodes).
-spec start(module(), #{atom() => term()}, [atom()], {pos_integer(), pos_integer()}) ->
    ok | {error, {?MODULE, term()}}.
start(Mod, Config, Observe, Where) -> start(Mod, Config, Observe, Where, node()).

%% @doc As `start/4', the run's coordinators on the node `Hub' (beamscale's own node over load
%% nodes: one for the users of all of them); started here when it is this node.
-spec start(module(), #{atom() => term()}, [atom()], {pos_integer(), pos_integer()}, node()) ->
    ok | {error, {?MODULE, term()}}.
start(Mod, Config, Observe, {Index, Count}, Hub) ->
    persistent_term:put(?CONFIG, Config),
    persistent_term:put(?NODES, Count),
    %% This node may be made distributed after (a load without load nodes): its name changes.
    persistent_term:put(?HUB, case Hub =:= node() of
                                  true -> local;
                                  false -> Hub
                              end),
    {ok, _} = beamscale_amoc_server:start(beamscale_amoc_throttle),
    _ = Hub =:= node() andalso beamscale_amoc_server:start(beamscale_amoc_coordinator),
    Ref = make_ref(),
    Me = self(),
    %% init/0 runs in a process that outlives this call (an erpc from the command's node) and
    %% the load, as amoc's controller: what it owns (an ETS table) lives as long as the run.
    {Holder, Mon} = spawn_monitor(fun() -> holder(Me, Ref, Mod) end),
    receive
        {Ref, {ok, State}} ->
            demonitor(Mon, [flush]),
            persistent_term:put(?RUN, #{scenario => Mod, state => State, holder => Holder,
                                        ids => atomics:new(1, []), observe => Observe,
                                        index => Index, count => Count}),
            ok;
        {Ref, {error, _} = Error} -> demonitor(Mon, [flush]), clean(), Error;
        {'DOWN', Mon, process, _, Why} ->
            clean(), {error, {?MODULE, {init_raised, Mod, exit, Why}}}
    end.

holder(Parent, Ref, Mod) ->
    case init(Mod) of
        {ok, State} ->
            Parent ! {Ref, {ok, State}},
            receive {stop, From, StopRef} -> From ! {StopRef, terminate(Mod, State)} end;
        {error, _} = Error -> Parent ! {Ref, Error}
    end.

%% amoc's reading of init/0's result: `{ok, State}', `ok' (the state is `ok'), `{error, R}'.
init(Mod) ->
    try Mod:init() of
        {ok, State} -> {ok, State};
        {error, R} -> {error, {?MODULE, {init_error, Mod, R}}};
        Other -> {ok, Other}
    catch Class:R -> {error, {?MODULE, {init_raised, Mod, Class, R}}}
    end.

%% @doc After the last user: the scenario's `terminate/1' (with the state) or `terminate/0' in
%% the process that ran `init/0', then its throttles and coordinators stopped. What terminate
%% returns is its own; a raise is an error.
-spec stop() -> ok | {error, {?MODULE, term()}}.
stop() ->
    Result = case persistent_term:get(?RUN, undefined) of
                 undefined -> ok;
                 #{scenario := Mod, holder := Holder} -> stop(Mod, Holder)
             end,
    clean(),
    Result.

stop(Mod, Holder) ->
    Ref = monitor(process, Holder),
    Holder ! {stop, self(), Ref},
    receive
        {Ref, Result} -> demonitor(Ref, [flush]), Result;
        {'DOWN', Ref, process, _, Why} -> {error, {?MODULE, {terminate_raised, Mod, exit, Why}}}
    end.

terminate(Mod, State) ->
    try
        _ = case {erlang:function_exported(Mod, terminate, 1),
                  erlang:function_exported(Mod, terminate, 0)} of
                {true, _} -> Mod:terminate(State);
                {_, true} -> Mod:terminate();
                _ -> ok
            end,
        ok
    catch Class:R -> {error, {?MODULE, {terminate_raised, Mod, Class, R}}}
    end.

clean() ->
    ok = beamscale_amoc_server:stop(beamscale_amoc_coordinator),
    ok = beamscale_amoc_server:stop(beamscale_amoc_throttle),
    _ = persistent_term:erase(?RUN),
    _ = persistent_term:erase(?CONFIG),
    _ = persistent_term:erase(?NODES),
    _ = persistent_term:erase(?HUB),
    ok.

%% @doc The scenario running here (`undefined' when none).
-spec run() -> run() | undefined.
run() -> persistent_term:get(?RUN, undefined).

%% @doc The settings of the scenario running here (`#{}' when none).
-spec config() -> #{atom() => term()}.
config() -> persistent_term:get(?CONFIG, #{}).

%% @doc How many nodes run this scenario's users (1 when none runs here).
-spec nodes() -> pos_integer().
nodes() -> persistent_term:get(?NODES, 1).

%% @doc The node of the run's coordinators: `local' when it is this one (or none runs).
-spec coordinator() -> local | node().
coordinator() -> persistent_term:get(?HUB, local).

%% @doc A user id of this run (amoc's `amoc_scenario:user_id()'): this node's Index, then one
%% Count of nodes further for each next user (1, 2, 3... on one node).
-spec next_id() -> pos_integer().
next_id() ->
    #{ids := Ids, index := Index, count := Count} = run(),
    (atomics:add_get(Ids, 1, 1) - 1) * Count + Index.

%% @doc The text of a reason of this module (one line).
-spec format_error(term()) -> iodata().
format_error({init_error, Mod, R}) ->
    io_lib:format("~ts:init/0 returned {error, ~0P}", [Mod, R, 10]);
format_error({init_raised, Mod, Class, R}) ->
    io_lib:format("~ts:init/0 raised ~ts:~0P", [Mod, Class, R, 10]);
format_error({terminate_raised, Mod, Class, R}) ->
    io_lib:format("~ts:terminate raised ~ts:~0P", [Mod, Class, R, 10]).
