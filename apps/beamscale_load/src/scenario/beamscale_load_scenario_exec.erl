%% @doc A phase run by an executor of k6's (docs/executors.md) in place of Tsung's Poisson
%% arrivals: `#{executor => Kind, ...}', each kind with its own options, checked here (thrown as
%% `{bad, Path, Message}' otherwise). Pure.
%%
%% Open model: `constant_arrival_rate' (`rate' iterations a second for `duration_s') and
%% `ramping_arrival_rate' (`start_rate', then `stages' of `{Seconds, TargetRate}', linear), at
%% most `max_users' sessions in flight (default `pre_allocated'): an iteration due when that many
%% are in flight is dropped and counted (`dropped_iterations'), never delayed. Closed model:
%% `constant_users' (`users' each running sessions back to back for `duration_s'),
%% `per_user_iterations' (`users' each running `iterations' sessions) and `shared_iterations'
%% (`users' running `iterations' sessions in all), both within `duration_s' (k6's maxDuration);
%% `ramping_users' (from `start_users' through `stages' of `{Seconds, TargetUsers}', linear; a
%% user above the target ends after its session, as k6's gracefulRampDown);
%% `externally_controlled' (`users' busy as constant_users, until `beamscale ctl DIR users N'
%% sets another number, at most `max_users', default `users'; for `duration_s').
-module(beamscale_load_scenario_exec).

-export([phase/2, count_keys/1, kinds/0]).
-export_type([executor/0]).

-type executor() :: #{kind := kind(), users => non_neg_integer(), iterations => pos_integer(),
                      start_users => float(),
                      max_in_flight => pos_integer(), start_rate => float(),
                      stages => [{float(), float()}]}.
-type kind() :: constant_arrival_rate | ramping_arrival_rate | constant_users | ramping_users
              | per_user_iterations | shared_iterations | externally_controlled.

%% Bounds as the phases': a rate of at most 10^6 a second, at most 10^6 users or sessions in
%% flight, 10^9 iterations, 1000 stages.
-define(MAX_RATE, 1.0e6).
-define(MAX_USERS, 1000000).
-define(MAX_ITERATIONS, 1000000000).
-define(MAX_STAGES, 1000).
-define(KEYS, #{constant_arrival_rate => [rate, duration_s, pre_allocated, max_users],
                ramping_arrival_rate => [start_rate, stages, pre_allocated, max_users],
                constant_users => [users, duration_s],
                ramping_users => [start_users, stages],
                per_user_iterations => [users, iterations, duration_s],
                shared_iterations => [users, iterations, duration_s],
                externally_controlled => [users, max_users, duration_s]}).

%% @doc The executors, by their name in a scenario.
-spec kinds() -> [kind()].
kinds() -> lists:sort(maps:keys(?KEYS)).

%% @doc A checked executor phase: its duration and the rate shown as offered (the mean rate of
%% an open one, 0 of a closed one), with its `executor'. `Sessions' and `name' are kept.
-spec phase(atom(), map()) -> map().
phase(Name, #{executor := Kind} = P) ->
    Keys = case maps:find(Kind, ?KEYS) of
               {ok, K} -> K;
               error -> bad([executor], io_lib:format("expected one of ~ts",
                                                      [lists:join(", ", [atom_to_list(X)
                                                                         || X <- kinds()])]))
           end,
    [bad([K], "unknown key of " ++ atom_to_list(Kind) ++ " (known: " ++
              lists:join(", ", [atom_to_list(X) || X <- [executor, sessions | Keys]]) ++ ")")
     || K <- maps:keys(P), not lists:member(K, [executor, sessions | Keys])],
    Exec = executor(Kind, P),
    D = case Kind of
            ramping_arrival_rate -> lists:sum([S || {S, _} <- maps:get(stages, Exec)]);
            ramping_users -> lists:sum([S || {S, _} <- maps:get(stages, Exec)]);
            _ -> seconds(duration_s, P)
        end,
    Mix = maps:from_list([{sessions, beamscale_load_scenario_mix:phase(M)}
                          || M <- [maps:get(sessions, P, none)], M =/= none]),
    maps:merge(Mix, #{name => Name, duration_s => D, rate => mean_rate(Exec, D),
                      max_users => infinity, executor => Exec}).

executor(constant_arrival_rate, P) ->
    in_flight(P, #{kind => constant_arrival_rate, start_rate => rate(rate, P),
                   stages => [{float(seconds(duration_s, P)), rate(rate, P)}]});
executor(ramping_arrival_rate, P) ->
    in_flight(P, #{kind => ramping_arrival_rate, start_rate => rate(start_rate, P),
                   stages => stages(maps:get(stages, P, none))});
executor(constant_users, P) -> #{kind => constant_users, users => count(users, P, ?MAX_USERS)};
executor(ramping_users, P) ->
    Start = case maps:get(start_users, P, 0) of
                N when is_integer(N), N >= 0, N =< ?MAX_USERS -> N;
                _ -> bad([start_users], "expected an integer from 0 to 10^6")
            end,
    Raw = maps:get(stages, P, none),
    [bad([stages], "expected {Seconds, TargetUsers}, users an integer from 0 to 10^6")
     || is_list(Raw), {_, U} <- Raw, not (is_integer(U) andalso U =< ?MAX_USERS)],
    #{kind => ramping_users, start_users => float(Start), stages => stages(Raw)};
executor(externally_controlled, P) ->
    Users = case maps:get(users, P, none) of
                N when is_integer(N), N >= 0, N =< ?MAX_USERS -> N;
                none -> bad([users], "missing");
                _ -> bad([users], "expected an integer from 0 to 10^6")
            end,
    Max = case maps:is_key(max_users, P) of
              true -> count(max_users, P, ?MAX_USERS);
              false when Users > 0 -> Users;
              false -> bad([max_users], "missing (users is 0: ctl could set none)")
          end,
    [bad([max_users], "is at least users") || Max < Users],
    #{kind => externally_controlled, users => Users, max_in_flight => Max};
executor(Kind, P) ->
    #{kind => Kind, users => count(users, P, ?MAX_USERS),
      iterations => count(iterations, P, ?MAX_ITERATIONS)}.

%% `pre_allocated' users are what k6 starts before the load; here a user is a process started
%% for its session, so it is the in-flight bound when `max_users' is not given.
in_flight(P, Exec) ->
    Pre = count(pre_allocated, P, ?MAX_USERS),
    Max = case maps:is_key(max_users, P) of
              true -> count(max_users, P, ?MAX_USERS);
              false -> Pre
          end,
    [bad([max_users], "is at least pre_allocated") || Max < Pre],
    Exec#{max_in_flight => Max}.

stages(L) when is_list(L), L =/= [], length(L) =< ?MAX_STAGES ->
    [case S of
         {D, R} when is_number(D), D > 0, D =< 4294967, is_number(R), R >= 0, R =< ?MAX_RATE ->
             {float(D), float(R)};
         _ -> bad([stages], "expected {Seconds, TargetRate}, seconds above 0, rates from 0 to "
                            "10^6 a second")
     end || S <- L];
stages(_) -> bad([stages], io_lib:format("expected a list of 1 to ~b {Seconds, TargetRate}",
                                         [?MAX_STAGES])).

%% The mean arrival rate over the phase (the offered rate of its rows).
mean_rate(#{start_rate := R0, stages := Stages}, D) ->
    integral(R0, Stages) / D;
mean_rate(_Closed, _D) -> 0.0.

integral(R0, Stages) ->
    {Sum, _} = lists:foldl(fun({S, R}, {Acc, From}) -> {Acc + (From + R) / 2 * S, R} end,
                           {0.0, R0}, Stages),
    Sum.

rate(K, P) ->
    case maps:get(K, P, none) of
        R when is_number(R), R >= 0, R =< ?MAX_RATE -> float(R);
        none -> bad([K], "missing");
        _ -> bad([K], "expected iterations a second from 0 to 10^6")
    end.

count(K, P, Max) ->
    case maps:get(K, P, none) of
        N when is_integer(N), N > 0, N =< Max -> N;
        none -> bad([K], "missing");
        _ -> bad([K], io_lib:format("expected an integer from 1 to ~b", [Max]))
    end.

seconds(K, P) ->
    case maps:get(K, P, none) of
        S when is_number(S), S > 0, S =< 4294967 -> S;
        none -> bad([K], "missing");
        _ -> bad([K], "expected a positive number of seconds")
    end.

%% @doc The counters the executors of these phases count (known before the run).
-spec count_keys([map()]) -> [binary()].
count_keys(Phases) ->
    case [K || #{executor := #{kind := K}} <- Phases,
               K =:= constant_arrival_rate orelse K =:= ramping_arrival_rate] of
        [] -> [];
        _ -> [<<"offered_iterations">>, <<"dropped_iterations">>]
    end.

-spec bad([term()], iodata()) -> no_return().
bad(Path, Msg) -> throw({bad, Path, lists:flatten(io_lib:format("~ts", [Msg]))}).
