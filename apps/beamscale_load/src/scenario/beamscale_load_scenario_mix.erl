%% @doc A phase's own mix of sessions (docs/scenario.md, "Phases"; Tsung's `<session_setup>'):
%% `sessions => [{Name, Weight}]' in a phase replaces the sessions' weights while it runs. A
%% session of weight 0 runs only in the phases that name it.
-module(beamscale_load_scenario_mix).

-export([phase/1, check/2, sessions/2]).

%% @doc The checked `sessions' key of a phase (thrown as `{bad, Path, Message}' otherwise).
-spec phase(term()) -> [{atom() | binary(), number()}].
phase(L) when is_list(L), L =/= [] ->
    Mix = [case X of
               {N, W} when (is_atom(N) orelse is_binary(N)), is_number(W), W >= 0 -> {N, W};
               _ -> bad("expected a list of {Session, Weight}, weights 0 or more")
           end || X <- L],
    [bad("the weights add up to 0") || lists:sum([W || {_, W} <- Mix]) == 0],
    [bad(io_lib:format("session ~0tp is given twice", [N]))
     || {N, _} <- Mix, length([N || {M, _} <- Mix, M =:= N]) > 1],
    Mix;
phase(_) -> bad("expected a non-empty list of {Session, Weight}").

%% @doc Every phase names existing sessions; a phase without a mix has a session of weight
%% above 0 to pick from.
-spec check([map()], [map()]) -> ok.
check(Phases, Sessions) ->
    Names = [N || #{name := N} <- Sessions],
    [throw({bad, [P, sessions], lists:flatten(io_lib:format("no session ~0tp", [N]))})
     || #{name := P, sessions := Mix} <- Phases, {N, _} <- Mix, not lists:member(N, Names)],
    [throw({bad, [P], "every session has weight 0: give the phase its sessions"})
     || #{name := P} = Phase <- Phases, not is_map_key(sessions, Phase),
        lists:sum([W || #{weight := W} <- Sessions]) == 0],
    ok.

%% @doc The sessions a phase picks from, with its weights (all of them without a mix).
-spec sessions(map(), [map()]) -> [map()].
sessions(#{sessions := Mix}, Sessions) ->
    [S#{weight := W} || {N, W} <- Mix, W > 0, #{name := M} = S <- Sessions, M =:= N];
sessions(_Phase, Sessions) -> [S || #{weight := W} = S <- Sessions, W > 0].

-spec bad(iodata()) -> no_return().
bad(Msg) -> throw({bad, [sessions], lists:flatten(Msg)}).
