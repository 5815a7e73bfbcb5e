%% @doc The per-second outputs of a load run as a list of handlers fed in turn, as cowboy feeds
%% a stream's handlers: each is a module with this behaviour and its state, started by its own
%% start function. `beamscale_loadtest' feeds load.csv (`beamscale_seconds_csv'), errors.csv
%% (the same module), the memory tracker (`beamscale_loadtest_memory'), the sampler's phase
%% (`beamscale_seconds_phase'), the live page (`beamscale_web_load') and the terminal line
%% (`beamscale_seconds_line'). A new output is one module and one element of that list.
-module(beamscale_seconds).

-export([on_second/1, stop/1]).
-export_type([handlers/0]).

-type handlers() :: [{module(), term()}].

%% @doc One second's row (`beamscale_load_run:row()'), handed over as the run merged it.
-callback second(State :: term(), beamscale_load_run:row()) -> ok.
%% @doc The run is over (or failed): files closed, pages told.
-callback stop(State :: term()) -> ok.

%% @doc The `on_second' function of `beamscale_load_run' that feeds `Handlers' in turn.
-spec on_second(handlers()) -> fun((beamscale_load_run:row()) -> ok).
on_second(Handlers) ->
    fun(Row) -> lists:foreach(fun({M, S}) -> ok = M:second(S, Row) end, Handlers) end.

%% @doc Stop every handler, in turn.
-spec stop(handlers()) -> ok.
stop(Handlers) -> lists:foreach(fun({M, S}) -> ok = M:stop(S) end, Handlers).
