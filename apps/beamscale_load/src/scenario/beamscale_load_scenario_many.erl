%% @doc Several scenarios in one run (k6's `scenarios', docs/executors.md): `{scenarios, [{Name,
%% #{executor => ..., start_s => S, tags => #{...}, exec => Session}}]}' in place of `phases'.
%% Each is one phase (an executor's, or Tsung's arrivals) that starts `start_s' after the run
%% does, beside the others; each load node runs it with a launcher of its own. Its sessions are
%% copies tagged `scenario=Name' (and its own `tags'), so its figures, thresholds and Prometheus
%% series are those of a tag pair. Pure: checks throw `{bad, Path, Message}'.
-module(beamscale_load_scenario_many).

-export([check/3, sessions/2, running/2, end_s/1]).

-define(OWN_KEYS, [start_s, tags, exec]).
-define(MAX_S, 4294967).

%% @doc The checked scenarios, as phases (each with its `start_s'), and each one's sessions,
%% tagged; `Phase' checks a phase's own keys (`beamscale_load_scenario''s); `Sessions' are the
%% file's, already checked.
-spec check(term(), fun((atom(), map()) -> map()), [map()]) ->
    {[map()], [{atom(), [map()]}]}.
check(L, Phase, Sessions) when is_list(L), L =/= [] ->
    Names = [N || {N, _} <- L],
    [bad([N], "given twice: each scenario has a name of its own")
     || {K, N} <- lists:enumerate(Names), lists:member(N, lists:nthtail(K, Names))],
    lists:unzip([one(Item, Phase, Sessions) || Item <- L]);
check(_, _Phase, _Sessions) ->
    bad([], "expected a non-empty list of {Name, #{executor => ..., start_s => S}}").

one({Name, #{} = S}, Phase, Sessions) when is_atom(Name) ->
    try
        Start = case maps:get(start_s, S, 0) of
                    T when is_number(T), T >= 0, T =< ?MAX_S -> T;
                    _ -> bad([start_s], "expected a number of seconds from 0")
                end,
        Mix = exec(S),
        P = phase(Phase, Name, maps:merge(maps:without(?OWN_KEYS, S), Mix)),
        Tags = beamscale_load_tags:check(maps:get(tags, S, #{}), [tags]),
        Own = <<"scenario=", (atom_to_binary(Name))/binary>>,
        {P#{start_s => Start}, {Name, tagged([Own | Tags], P, Sessions)}}
    catch throw:{bad, Path, Msg} -> bad([Name | Path], Msg)
    end;
one(_, _Phase, _Sessions) ->
    bad([], "expected a list of {Name, #{executor => ..., start_s => S}}").

%% A phase's check, whose list of known keys then names a scenario's own too.
phase(Phase, Name, P) ->
    try Phase(Name, P)
    catch throw:{bad, Path, "unknown key of " ++ _ = Msg} ->
            bad(Path, [lists:droplast(Msg), ", ", lists:join(", ", [atom_to_list(K)
                                                                  || K <- ?OWN_KEYS]), ")"])
    end.

%% k6's `exec' (the function an iteration runs) names the one session it runs.
exec(#{exec := _, sessions := _}) -> bad([exec], "give exec or sessions, not both");
exec(#{exec := N}) when is_atom(N); is_binary(N) -> #{sessions => [{N, 1}]};
exec(#{exec := _}) -> bad([exec], "expected a session's name");
exec(_) -> #{}.

%% The sessions this scenario picks (its mix, or every session of weight above 0), each request
%% tagged. A request or session of its own `scenario' tag would count elsewhere: refused.
tagged(Pairs, P, Sessions) ->
    Picked = beamscale_load_scenario_mix:sessions(P, Sessions),
    [begin
         Steps = beamscale_load_tags:inherit(Pairs, St),
         [bad([tags], io_lib:format("session ~0tp tags its requests scenario=...: that tag is "
                                    "the scenario's name", [SName]))
          || {tagged, Ps, _} <- beamscale_load_steps:all(Steps), not lists:member(hd(Pairs), Ps)],
         S#{steps := Steps}
     end || #{name := SName, steps := St} = S <- Picked].

%% @doc The sessions scenario `Name' runs (those of the whole file when it has no scenarios).
-spec sessions(map(), atom()) -> [map()].
sessions(#{scenarios := Many}, Name) -> proplists:get_value(Name, Many);
sessions(#{sessions := Sessions}, _Name) -> Sessions.

%% @doc The scenarios running `T' seconds into the run.
-spec running([map()], number()) -> [map()].
running(Phases, T) ->
    [P || #{start_s := S, duration_s := D} = P <- Phases, S =< T, T < S + D].

%% @doc When the last scenario ends (seconds into the run).
-spec end_s([map()]) -> number().
end_s(Phases) -> lists:max([S + D || #{start_s := S, duration_s := D} <- Phases]).

-spec bad([term()], iodata()) -> no_return().
bad(Path, Msg) -> throw({bad, Path, lists:flatten(io_lib:format("~ts", [Msg]))}).
