%% @doc amoc's scenario behaviour: `init/0' once per node before any user (`ok', `{ok, State}'
%% or `{error, Reason}'), `start/2' (or `start/1') for each user with its id, `terminate/1' (or
%% `terminate/0') after the last. Run by `beamscale load --amoc FILE' (docs/amoc.md).
-module(amoc_scenario).

-export_type([user_id/0, state/0]).

-type user_id() :: pos_integer().
-type state() :: term().

-callback init() -> ok | {ok, state()} | {error, Reason :: term()}.
-callback start(user_id(), state()) -> any().
-callback start(user_id()) -> any().
-callback terminate(state()) -> any().
-callback terminate() -> any().

-optional_callbacks([start/1, start/2, terminate/0, terminate/1]).
