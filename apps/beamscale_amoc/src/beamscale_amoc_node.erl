%% @doc An amoc scenario's state on the node its users run on: its settings (read by
%% `amoc_config'), the state `init/0' returned, the users' ids and the throttle server. As amoc
%% does on each node, `start/3' runs `init/0' once before any user, and `stop/0' runs
%% `terminate/0,1' after the last.
-module(beamscale_amoc_node).

-export([start/3, stop/0, run/0, config/0, next_id/0, format_error/1]).
-export_type([run/0]).

-define(RUN, {?MODULE, run}).
-define(CONFIG, {?MODULE, config}).

-type run() :: #{scenario := module(), state := term(), ids := atomics:atomics_ref(),
                 observe := [atom()]}.

%% @doc Settle `Mod''s settings and run its `init/0' here; `Observe': the names of the scenario's
%% own timings (`beamscale_amoc:observe/2'). On an error nothing is left running.
-spec start(module(), #{atom() => term()}, [atom()]) -> ok | {error, {?MODULE, term()}}.
start(Mod, Config, Observe) ->
    persistent_term:put(?CONFIG, Config),
    {ok, _} = beamscale_amoc_server:start(beamscale_amoc_throttle),
    {ok, _} = beamscale_amoc_server:start(beamscale_amoc_coordinator),
    case init(Mod) of
        {ok, State} ->
            persistent_term:put(?RUN, #{scenario => Mod, state => State,
                                        ids => atomics:new(1, []), observe => Observe}),
            ok;
        {error, _} = Error -> clean(), Error
    end.

%% amoc's reading of init/0's result: `{ok, State}', `ok' (the state is `ok'), `{error, R}'.
init(Mod) ->
    try Mod:init() of
        {ok, State} -> {ok, State};
        {error, R} -> {error, {?MODULE, {init_error, Mod, R}}};
        Other -> {ok, Other}
    catch Class:R -> {error, {?MODULE, {init_raised, Mod, Class, R}}}
    end.

%% @doc After the last user: the scenario's `terminate/1' (with the state) or `terminate/0', then
%% its throttles and coordinators stopped. What terminate returns or raises is its own.
-spec stop() -> ok | {error, {?MODULE, term()}}.
stop() ->
    Result = case persistent_term:get(?RUN, undefined) of
                 undefined -> ok;
                 #{scenario := Mod, state := State} -> terminate(Mod, State)
             end,
    clean(),
    Result.

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
    ok.

%% @doc The scenario running here (`undefined' when none).
-spec run() -> run() | undefined.
run() -> persistent_term:get(?RUN, undefined).

%% @doc The settings of the scenario running here (`#{}' when none).
-spec config() -> #{atom() => term()}.
config() -> persistent_term:get(?CONFIG, #{}).

%% @doc A user id of this run: 1, 2, 3... (amoc's `amoc_scenario:user_id()').
-spec next_id() -> pos_integer().
next_id() ->
    #{ids := Ids} = run(),
    atomics:add_get(Ids, 1, 1).

%% @doc The text of a reason of this module (one line).
-spec format_error(term()) -> iodata().
format_error({init_error, Mod, R}) ->
    io_lib:format("~ts:init/0 returned {error, ~0P}", [Mod, R, 10]);
format_error({init_raised, Mod, Class, R}) ->
    io_lib:format("~ts:init/0 raised ~ts:~0P", [Mod, Class, R, 10]);
format_error({terminate_raised, Mod, Class, R}) ->
    io_lib:format("~ts:terminate raised ~ts:~0P", [Mod, Class, R, 10]).
