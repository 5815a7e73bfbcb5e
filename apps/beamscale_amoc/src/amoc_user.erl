%% @doc amoc's `amoc_user': a user ends itself with `stop/0' (its session ends as if its start
%% had returned: not an error).
-module(amoc_user).

-export([stop/0]).

%% @doc End the calling user.
-spec stop() -> no_return().
stop() -> exit({shutdown, amoc_user_stop}).
