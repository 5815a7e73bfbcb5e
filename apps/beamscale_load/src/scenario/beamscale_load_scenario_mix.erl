%% @doc A phase's own mix of sessions (docs/scenario.md, "Phases"; Tsung's `<session_setup>'):
%% `sessions => [{Name, Weight}]' in a phase replaces the sessions' weights while it runs. A
%% session of weight 0 runs only in the phases that name it.
-module(beamscale_load_scenario_mix).

-export([phase/1, check/2, sessions/2, users_at/2]).

%% Users at fixed times in one phase: each is a process started on its own, listed in the file
%% one by one (Tsung's `<user>'); more is a generated file better written as arrivals.
-define(MAX_USERS_AT, 100000).

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

%% @doc The checked `users_at' key of a phase of `D' seconds: `[{Seconds, Session}]', each user
%% starting that long after the phase starts (sorted by time).
-spec users_at(term(), number()) -> [{number(), atom() | binary()}].
users_at(L, D) when is_list(L), L =/= [], length(L) =< ?MAX_USERS_AT ->
    lists:keysort(1, [case X of
                          {T, N} when is_number(T), T >= 0, T < D,
                                      is_atom(N) orelse is_binary(N) -> {T, N};
                          _ -> bad_at("expected a list of {Seconds, Session}, seconds from 0 to "
                                      "below the phase's duration")
                      end || X <- L]);
users_at(_, _) ->
    bad_at(io_lib:format("expected a non-empty list of at most ~b {Seconds, Session}",
                         [?MAX_USERS_AT])).

%% @doc Every phase names existing sessions; a phase without a mix has a session of weight
%% above 0 to pick from.
-spec check([map()], [map()]) -> ok.
check(Phases, Sessions) ->
    Names = [N || #{name := N} <- Sessions],
    [throw({bad, [P, sessions], lists:flatten(io_lib:format("no session ~0tp", [N]))})
     || #{name := P, sessions := Mix} <- Phases, {N, _} <- Mix, not lists:member(N, Names)],
    [throw({bad, [P, users_at], lists:flatten(io_lib:format("no session ~0tp", [N]))})
     || #{name := P, users_at := At} <- Phases, {_, N} <- At, not lists:member(N, Names)],
    [throw({bad, [P], "every session has weight 0: give the phase its sessions"})
     || #{name := P, rate := R} = Phase <- Phases, R > 0, not is_map_key(sessions, Phase),
        lists:sum([W || #{weight := W} <- Sessions]) == 0],
    ok.

%% @doc The sessions a phase picks from, with its weights (all of them without a mix).
-spec sessions(map(), [map()]) -> [map()].
sessions(#{sessions := Mix}, Sessions) ->
    [S#{weight := W} || {N, W} <- Mix, W > 0, #{name := M} = S <- Sessions, M =:= N];
sessions(_Phase, Sessions) -> [S || #{weight := W} = S <- Sessions, W > 0].

-spec bad_at(iodata()) -> no_return().
bad_at(Msg) -> throw({bad, [users_at], lists:flatten(Msg)}).

-spec bad(iodata()) -> no_return().
bad(Msg) -> throw({bad, [sessions], lists:flatten(Msg)}).
