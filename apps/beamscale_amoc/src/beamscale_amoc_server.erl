%% @doc A per-node server of the amoc scenario running here (its throttles, its coordinators):
%% a locally registered `gen_server' started before `init/0' and stopped after `terminate'.
-module(beamscale_amoc_server).

-export([start/1, stop/1, call/2]).

%% @doc Start the server `Mod' (a stale one, from a run that died, is replaced).
-spec start(module()) -> {ok, pid()}.
start(Mod) ->
    ok = stop(Mod),
    gen_server:start({local, Mod}, Mod, [], []).

%% @doc Stop the server `Mod' if it runs (callers still waiting fail).
-spec stop(module()) -> ok.
stop(Mod) ->
    case whereis(Mod) of
        undefined -> ok;
        Pid -> try gen_server:stop(Pid) catch exit:_ -> ok end
    end.

%% @doc One request to the server `Mod': `{error, no_amoc_run}' when no scenario runs here.
-spec call(module(), term()) -> term().
call(Mod, Request) ->
    case whereis(Mod) of
        undefined -> {error, no_amoc_run};
        _ -> gen_server:call(Mod, Request, infinity)
    end.
