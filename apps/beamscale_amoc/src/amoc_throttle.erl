%% @doc amoc's `amoc_throttle': events limited to a rate per interval (default a minute), per
%% name, on the node the users run on (`beamscale_amoc_throttle'; docs/amoc.md for what differs).
-module(amoc_throttle).

-export([start/2, stop/1, pause/1, resume/1, unlock/1, change_rate/2, change_rate_gradually/2,
         send/2, send/3,
         send_and_wait/2, wait/1, run/2]).

-define(CALL(Request), beamscale_amoc_server:call(beamscale_amoc_throttle, Request)).

-type name() :: atom().
-type config() :: infinity | non_neg_integer()
                | #{rate := infinity | non_neg_integer(), interval => non_neg_integer()}
                | #{interarrival := infinity | non_neg_integer()}.
-export_type([name/0, config/0]).

%% @doc Start the throttle `Name' (`{ok, already_started}' if it runs: its rate is kept).
-spec start(name(), config()) -> {ok, started | already_started} | {error, term()}.
start(Name, Config) -> ?CALL({start, Name, Config}).

%% @doc Stop the throttle `Name'; callers still waiting get `{error, {throttle_stopped, Name}}'.
-spec stop(name()) -> ok | {error, term()}.
stop(Name) -> ?CALL({stop, Name, []}).

%% @doc Let nothing through until `resume/1'.
-spec pause(name()) -> ok | {error, term()}.
pause(Name) -> ?CALL({paused, Name, true}).

%% @doc Let events through again at the throttle's rate.
-spec resume(name()) -> ok | {error, term()}.
resume(Name) -> ?CALL({paused, Name, false}).

%% @doc No limit (`infinity').
-spec unlock(name()) -> ok | {error, term()}.
unlock(Name) -> change_rate(Name, infinity).

%% @doc A new rate from now.
-spec change_rate(name(), config()) -> ok | {error, term()}.
change_rate(Name, Config) -> ?CALL({change_rate, Name, Config}).

%% @doc amoc's gradual change: `#{throttle => #{from_rate, to_rate[, interval]} |
%% #{from_interarrival, to_interarrival}, plan => #{step_interval, step_count} | #{duration}}',
%% the first step's rate at once, each next one a step interval later (ms; a duration's steps
%% are 100 ms apart). A later `change_rate/2' or gradual change ends it.
-spec change_rate_gradually(name(), map()) -> ok | {error, term()}.
change_rate_gradually(Name, Gradual) -> ?CALL({gradually, Name, Gradual}).

%% @doc Send `Msg' to the caller when the rate allows (the call returns at once).
-spec send(name(), term()) -> ok | {error, term()}.
send(Name, Msg) -> send(Name, self(), Msg).

%% @doc Send `Msg' to `Pid' when the rate allows (the call returns at once).
-spec send(name(), pid(), term()) -> ok | {error, term()}.
send(Name, Pid, Msg) -> ?CALL({event, Name, {send, Pid, Msg}}).

%% @doc Wait until the rate allows, then send `Msg' to the caller.
-spec send_and_wait(name(), term()) -> ok | {error, term()}.
send_and_wait(Name, Msg) ->
    case wait(Name) of
        ok -> self() ! Msg, ok;
        Error -> Error
    end.

%% @doc Block the caller until the rate allows. For an amoc user it is a think time: its
%% requests before it are a page (Tsung's, `beamscale_amoc_request:page_done/0').
-spec wait(name()) -> ok | {error, term()}.
wait(Name) ->
    ok = beamscale_amoc_request:page_done(),
    ?CALL({wait, Name, []}).

%% @doc Run `Fun' in a new process when the rate allows (the call returns at once).
-spec run(name(), fun(() -> any())) -> ok | {error, term()}.
run(Name, Fun) when is_function(Fun, 0) -> ?CALL({event, Name, {run, Fun}}).
