%% @doc An amoc user in beamscale's load generator: the code step of its session (`{code,
%% beamscale_amoc_user, run, [Module, Arity]}', beamscale_load_user) calls the scenario's
%% `start/2' (or `start/1') with a new user id and the state `init/0' returned, in the user's
%% process: the session's duration is the user's, its crash the session's error, and the
%% requests it makes through `beamscale_amoc:request/3,4' the run's requests.
-module(beamscale_amoc_user).

-export([run/3]).

%% amoc_user:stop/0's exit: the user ends as if its start had returned.
-define(STOP, {shutdown, amoc_user_stop}).

%% @doc One amoc user, start to end, recording into `Metrics'.
-spec run(beamscale_load_metrics:metrics(), module(), 1 | 2) -> ok | {error, term()}.
run(Metrics, Mod, Arity) ->
    #{state := State} = beamscale_amoc_node:run(),
    Id = beamscale_amoc_node:next_id(),
    ok = beamscale_amoc_request:begin_user(Metrics),
    try
        _ = case Arity of
                2 -> Mod:start(Id, State);
                1 -> Mod:start(Id)
            end,
        ok
    catch
        exit:?STOP -> ok;
        Class:Reason -> {error, {amoc_user, Class, Reason}}
    after
        beamscale_amoc_request:end_user()
    end.
