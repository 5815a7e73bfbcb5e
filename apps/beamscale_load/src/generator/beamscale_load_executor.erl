%% @doc Runs one phase of a k6 executor (`beamscale_load_scenario_exec', docs/executors.md) for
%% the launcher: open ones start a session at each iteration's time, against the clock, unless
%% their in-flight bound is reached (the iteration is dropped and counted, never delayed); closed
%% ones keep their users' sessions back to back (externally_controlled as many as `ctl' set).
%% The launcher's own work (spawning a user, the messages it handles, counting) is handed in as
%% funs.
-module(beamscale_load_executor).

-export([run/4, arrival_s/3, target_at/3]).
-export_type([funs/0]).

%% How often ramping_users sets its users to the target of the moment.
-define(TICK_S, 0.1).

%% spawn: start a session whose intended start is the given native time; handle: the launcher's
%% handling of any message (a user's exit, a stop); count: one event of a named counter;
%% late: whether an iteration due then is over a second late (the launcher's node stalled), if
%% so counted late and noted in the stall; tick: a tick due then noted in the stall if over a
%% second late; on_time: time to wait again, so a stall is over (an event of the run).
-type funs() :: #{spawn := fun((integer(), map()) -> {pid(), map()}),
                  handle := fun((term(), map()) -> map()),
                  count := fun((map(), binary()) -> ok),
                  late := fun((integer(), map()) -> {boolean(), map()}),
                  tick := fun((integer(), map()) -> map()),
                  on_time := fun((map()) -> map())}.

%% @doc Run phase `P' that starts at native time `From'; the launcher's state after.
-spec run(map(), integer(), map(), funs()) -> map().
run(#{executor := #{kind := K} = E}, From, St, F)
  when K =:= constant_arrival_rate; K =:= ramping_arrival_rate ->
    open(E, From, 1, #{}, St, F);
run(#{executor := #{kind := K} = E, duration_s := D}, From, St0, F)
  when K =:= ramping_users; K =:= externally_controlled ->
    {Mine, St} = wait(From, #{}, St0, F),
    ramping(E, From, From + native(D), Mine, St, F);
run(#{executor := E, duration_s := D}, From, St, F) ->
    closed(E, From + native(D), wait(From, #{}, St, F), F).

%% ---- open model ----

open(#{start_rate := R0, stages := Stages, max_in_flight := Max} = E, From, K, Mine, St, F) ->
    case arrival_s(K, R0, Stages) of
        done -> St;
        T ->
            Due = From + native(T),
            {Mine1, St1} = wait(Due, Mine, St, F),
            #{count := Count, spawn := Spawn, late := Late} = F,
            ok = Count(St1, <<"offered_iterations">>),
            %% Late (the node stalled): dropped as k6 drops one that cannot start on time, not
            %% started in a burst on resume; also `sessions_late', the stall's count.
            case Late(Due, St1) of
                {false, St2} when map_size(Mine1) < Max ->
                    {Pid, St3} = Spawn(Due, St2),
                    open(E, From, K + 1, Mine1#{Pid => true}, St3, F);
                {_, St2} ->
                    ok = Count(St2, <<"dropped_iterations">>),
                    open(E, From, K + 1, Mine1, St2, F)
            end
    end.

%% @doc When (seconds into the phase) iteration `K' (1, 2...) is due: where the arrivals owed,
%% the rate's integral, reach K - 1/2 (so a constant rate R over D seconds offers round(R * D));
%% `done' past the last stage. The rate goes linearly from each stage's start to its target.
-spec arrival_s(pos_integer(), float(), [{float(), float()}]) -> float() | done.
arrival_s(K, R0, Stages) -> arrival_s(K - 0.5, R0, Stages, 0.0).

arrival_s(_C, _A, [], _T) -> done;
arrival_s(C, A, [{D, B} | Rest], T) ->
    Owed = (A + B) / 2 * D,
    case C =< Owed of
        false -> arrival_s(C - Owed, B, Rest, T + D);
        true when A == B -> T + C / A;
        %% A + (B - A) x / D integrated to x is C: the positive root.
        true -> Slope = (B - A) / D,
                T + (-A + math:sqrt(max(0.0, A * A + 2 * Slope * C))) / Slope
    end.

%% ---- closed model ----

%% Each user's sessions left (`infinity' for constant_users), and the iterations left to share.
closed(#{kind := Kind, users := N} = E, End, {Mine0, St0}, F) ->
    {Budget, PerUser} = case Kind of
                            constant_users -> {infinity, infinity};
                            per_user_iterations -> {infinity, maps:get(iterations, E)};
                            shared_iterations -> {maps:get(iterations, E), infinity}
                        end,
    First = case Budget of infinity -> N; B -> min(N, B) end,
    Spawn = maps:get(spawn, F),
    {Mine, St} = lists:foldl(fun(_, {M, S}) ->
                                     {Pid, S1} = Spawn(erlang:monotonic_time(), S),
                                     {M#{Pid => less(PerUser, 1)}, S1}
                             end, {Mine0, St0}, lists:seq(1, First)),
    loop(Mine, less(Budget, First), End, St, F).

loop(Mine, _Budget, _End, St, _F) when map_size(Mine) =:= 0 -> St;
loop(Mine, Budget, End, St, #{handle := Handle, spawn := Spawn} = F) ->
    receive
        {'EXIT', Pid, _} = Msg when is_map_key(Pid, Mine) ->
            St1 = Handle(Msg, St),
            Left = maps:get(Pid, Mine),
            Mine1 = maps:remove(Pid, Mine),
            Now = erlang:monotonic_time(),
            case Now < End andalso more(Left) andalso more(Budget) of
                true -> {New, St2} = Spawn(Now, St1),
                        loop(Mine1#{New => less(Left, 1)}, less(Budget, 1), End, St2, F);
                false -> loop(Mine1, Budget, End, St1, F)
            end;
        Msg -> loop(Mine, Budget, End, Handle(Msg, St), F)
    after ms_to(End) -> St
    end.

%% ramping_users and externally_controlled: at each tick, each user's end and each number set
%% by `ctl', users start up to the target of the moment; one above it ends after its session,
%% not replaced.
ramping(E, From, End, Mine, St, F) ->
    Now = erlang:monotonic_time(),
    case Now >= End of
        true -> St;
        false ->
            {Mine1, St1} = top_up(target(E, Now - From) - map_size(Mine), Now, Mine, St, F),
            Tick = min(End, Now + native(?TICK_S)),
            {E2, Mine2, St2} = wait_end(Tick, E, Mine1, St1, F),
            %% A tick over a second late: the node stalled (no user is late: they run back to
            %% back), an event all the same.
            ramping(E2, From, End, Mine2, (maps:get(tick, F))(Tick, St2), F)
    end.

target(#{kind := ramping_users, start_users := U0, stages := Stages}, Since) ->
    round(target_at(seconds(Since), U0, Stages));
target(#{users := Users}, _Since) -> Users.

top_up(N, Now, Mine, St, #{spawn := Spawn}) when N > 0 ->
    lists:foldl(fun(_, {M, S}) -> {Pid, S1} = Spawn(Now, S), {M#{Pid => true}, S1} end,
                {Mine, St}, lists:seq(1, N));
top_up(_N, _Now, Mine, St, _F) -> {Mine, St}.

%% @doc The users ramping_users aims at `T' seconds into its phase: linear from each stage's
%% start to its target.
-spec target_at(float(), float(), [{float(), float()}]) -> float().
target_at(_T, U, []) -> U;
target_at(T, U, [{D, B} | _]) when T < D -> U + (B - U) * T / D;
target_at(T, _U, [{D, B} | Rest]) -> target_at(T - D, B, Rest).

seconds(Native) -> erlang:convert_time_unit(Native, native, microsecond) / 1.0e6.

more(infinity) -> true;
more(N) -> N > 0.

less(infinity, _) -> infinity;
less(N, K) -> N - K.

%% Until native time `T', every message handed to the launcher; an exit of one of `Mine'
%% (in-flight users of this phase) also takes it off. Time to wait: a stall is over.
wait(T, Mine, St0, #{handle := Handle} = F) ->
    St = on_time(T, St0, F),
    receive
        {'EXIT', Pid, _} = Msg -> wait(T, maps:remove(Pid, Mine), Handle(Msg, St), F);
        Msg -> wait(T, Mine, Handle(Msg, St), F)
    after ms_to(T) -> {Mine, St}
    end.

%% As `wait/4', but back at the first end of one of `Mine' (to start its successor at once),
%% or at a number of users set by `ctl' (`beamscale_load_control', this agent's share).
wait_end(T, E, Mine, St0, #{handle := Handle} = F) ->
    St = on_time(T, St0, F),
    receive
        {'EXIT', Pid, _} = Msg when is_map_key(Pid, Mine) ->
            {E, maps:remove(Pid, Mine), Handle(Msg, St)};
        {set_users, N} when map_get(kind, E) =:= externally_controlled ->
            {E#{users := N}, Mine, St};
        Msg -> wait_end(T, E, Mine, Handle(Msg, St), F)
    after ms_to(T) -> {E, Mine, St}
    end.

on_time(T, St, #{on_time := OnTime}) ->
    case ms_to(T) > 0 of
        true -> OnTime(St);
        false -> St
    end.

ms_to(T) -> max(0, erlang:convert_time_unit(T - erlang:monotonic_time(), native, millisecond)).

native(Seconds) -> erlang:convert_time_unit(round(Seconds * 1000000), microsecond, native).
