%% @doc Checks on a response (Tsung's `<match>'): a regular expression that matches or not, and
%% what the session does then. Every check counts its outcome under its name (`match.NAME' or
%% `nomatch.NAME' in the results), whatever it does.
-module(beamscale_load_match).

-export([check/2, count_keys/1]).
-export_type([match/0, action/0]).

-type match() :: #{name := binary(), re := beamscale_load_extract:mp(), 'when' := match | nomatch,
                   do := continue | log | dump | abort | restart | loop | abort_test,
                   text := body | headers, max_restart => non_neg_integer(),
                   max_loop := pos_integer(), sleep_loop_ms := non_neg_integer()}.
%% What the user does after a request: go on, end the session, start it again, or send the same
%% request again after a pause, at most a number of times.
%% `{restart, Max}': at most `Max' restarts of the session; `abort_test': this session ends and
%% the whole run stops (as an interrupt: arrivals stop, the users in flight drain).
-type action() :: continue | abort | {restart, non_neg_integer()} | abort_test
                | {loop, pos_integer(), non_neg_integer()}.

%% @doc The counter keys that fired and the action of the first check whose condition holds
%% (Tsung applies the first one too).
-spec check([match()], beamscale_load_extract:response()) -> {[binary()], action()}.
check(Matches, Response) ->
    lists:foldl(fun(M, {Keys, Action}) ->
                        {Key, Hit} = one(M, Response),
                        {[Key | Keys], first(Action, Hit, M)}
                end, {[], continue}, Matches).

one(#{name := Name, re := MP, 'when' := When, text := Text}, Response) ->
    Subject = beamscale_load_extract:response_text(Response, Text),
    Outcome = case beamscale_load_extract:run(Subject, MP, [{capture, none}]) of
                  match -> match;
                  nomatch -> nomatch
              end,
    {<<(atom_to_binary(Outcome))/binary, ".", Name/binary>>, Outcome =:= When}.

first(continue, true, #{do := loop, max_loop := Max, sleep_loop_ms := Sleep}) ->
    {loop, Max, Sleep};
first(continue, true, #{do := restart} = M) -> {restart, maps:get(max_restart, M, 3)};
first(continue, true, #{do := Do}) when Do =:= abort; Do =:= abort_test -> Do;
first(Action, _, _) -> Action.

%% @doc The counter keys of a list of checks (both outcomes of each).
-spec count_keys([match()]) -> [binary()].
count_keys(Matches) ->
    [<<P/binary, ".", N/binary>> || #{name := N} <- Matches, P <- [<<"match">>, <<"nomatch">>]].
