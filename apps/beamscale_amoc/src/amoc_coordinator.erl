%% @doc amoc's `amoc_coordinator': users grouped by a plan (`beamscale_amoc_coordinator'; one
%% for the run, whichever node its users run on).
-module(amoc_coordinator).

-export([start/2, start/3, add/2, add/3, stop/1, reset/1]).

-define(CALL(Request), beamscale_amoc_coordinator:call(Request)).

%% amoc's default: a coordinator times out after 30 s with no user added.
-define(DEFAULT_TIMEOUT_S, 30).

%% @doc Start the coordinator `Name' with `Plan' (`error' if it runs or the plan is bad).
-spec start(term(), term()) -> ok | error.
start(Name, Plan) -> start(Name, Plan, ?DEFAULT_TIMEOUT_S).

%% @doc Start the coordinator `Name' with `Plan', timing out after `Timeout' s with no add.
-spec start(term(), term(), pos_integer() | infinity) -> ok | error.
start(Name, Plan, Timeout) ->
    case ?CALL({start, Name, Plan, Timeout}) of
        ok -> ok;
        _ -> error
    end.

%% @doc Add the caller with `Data' (a coordinator not started raises).
-spec add(term(), term()) -> ok.
add(Name, Data) -> add(Name, self(), Data).

%% @doc Add `Pid' with `Data'.
-spec add(term(), pid(), term()) -> ok.
add(Name, Pid, Data) ->
    case ?CALL({add, Name, {Pid, Data}}) of
        ok -> ok;
        {error, Reason} -> error(Reason)
    end.

%% @doc Call every action with what is left (`{stop, Count}') and remove the coordinator.
-spec stop(term()) -> ok.
stop(Name) -> ok(?CALL({reset, Name, stop})).

%% @doc Call every action with what is left (`{reset, Count}') and start the batches again.
-spec reset(term()) -> ok.
reset(Name) -> ok(?CALL({reset, Name, reset})).

ok(_) -> ok.
