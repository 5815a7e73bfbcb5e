%% @doc The request kind of an amoc user: its one "request" is the scenario's `start/2' (or
%% `start/1') with a new user id and the state `init/0' returned, run in the user's process, so
%% that its duration is the user's and its crash the user's error. Not in beamscale_load_kinds'
%% list (the load app knows nothing of amoc): a session names it as `{request, ?MODULE, Spec}'.
-module(beamscale_amoc_kind).
-behaviour(beamscale_load_request).

-export([name/0, check/2, connect/1, request/3, close/1, sockets/1]).

%% amoc_user:stop/0's exit: the user ends as if its start had returned.
-define(STOP, {shutdown, amoc_user_stop}).

%% @doc The step name (not registered: see the module's doc).
-spec name() -> atom().
name() -> amoc.

%% @doc `#{scenario => Module}', a module loaded with `start/2' or `start/1'.
-spec check(map(), beamscale_load_scenario:target()) ->
    {ok, map()} | {error, atom(), string()}.
check(#{scenario := Mod} = Spec, _Target) when is_atom(Mod), map_size(Spec) =:= 1 ->
    case {erlang:function_exported(Mod, start, 2), erlang:function_exported(Mod, start, 1)} of
        {true, _} -> {ok, Spec#{arity => 2}};
        {_, true} -> {ok, Spec#{arity => 1}};
        _ -> {error, scenario, "expected a module exporting start/2 or start/1"}
    end;
check(_Spec, _Target) -> {error, scenario, "expected #{scenario => Module}"}.

%% @doc No connection: the scenario makes its own.
-spec connect(map()) -> {ok, none}.
connect(_Target) -> {ok, none}.

%% @doc One amoc user, start to end.
-spec request(map(), none, pos_integer()) -> beamscale_load_request:result().
request(#{scenario := Mod, arity := Arity}, none, _Timeout) ->
    #{state := State} = beamscale_amoc_node:run(),
    Id = beamscale_amoc_node:next_id(),
    try
        _ = case Arity of
                2 -> Mod:start(Id, State);
                1 -> Mod:start(Id)
            end,
        {ok, none}
    catch
        exit:?STOP -> {ok, none};
        Class:Reason -> {error, {amoc_user, Class, Reason}, none}
    end.

%% @doc Nothing to close.
-spec close(none) -> ok.
close(none) -> ok.

%% @doc No socket of its own (the scenario's are its own).
-spec sockets(map()) -> 0.
sockets(_Target) -> 0.
