%% @doc Starts the users of a load run: arrivals by a Poisson process at each phase's rate,
%% scheduled against the clock (never after a previous user finishes), so a late target never
%% slows them. Users are linked to the launcher: when it stops or dies, they die with it.
%%
%% What every user reads and none writes (the sessions' steps, the context) is kept once in a
%% persistent term of the launcher's: a user is spawned with its key and a session's number, so
%% that its heap holds only its own state (a closure capturing them would copy them into every
%% user's heap: about 2 KB a user, measured).
-module(beamscale_load_launcher).

-export([start_link/4, stop/1, stop_arrivals/1]).

-define(STOP_TIMEOUT, 5000).
%% An arrival this late is counted, not started (`due_user/2').
-define(LATE_S, 1).

%% @doc Start launching at monotonic time `Start' (native); tells its parent
%% `{arrivals_done, Pid}' after the last phase (or `stop_arrivals/1') and `{users_done, Pid}'
%% when no user is left.
-spec start_link(beamscale_load_scenario:scenario(), beamscale_load_user:ctx(), integer(),
                 rand:state()) -> pid().
start_link(Scenario, Ctx, Start, Rand) ->
    Parent = self(),
    spawn_link(fun() ->
                       process_flag(trap_exit, true),
                       init(Parent, Scenario, Ctx, Start, Rand)
               end).

%% @doc Stop the launcher and every user it started; waits for it to go.
-spec stop(pid()) -> ok.
stop(Pid) ->
    Ref = monitor(process, Pid),
    Pid ! stop,
    receive {'DOWN', Ref, process, Pid, _} -> ok
    after ?STOP_TIMEOUT -> exit(Pid, kill), ok
    end.

%% @doc No more arrivals (the load was interrupted): the users started go on to their end.
-spec stop_arrivals(pid()) -> ok.
stop_arrivals(Pid) ->
    Pid ! stop_arrivals,
    ok.

init(Parent, #{phases := Phases, sessions := Sessions0}, Ctx, Start, Rand) ->
    Key = {?MODULE, self()},
    Sessions = [S#{slot => I} || {I, S} <- lists:enumerate(Sessions0)],
    %% Users of this launcher meet at rendezvous through one coordinator, linked to it.
    persistent_term:put(Key, {list_to_tuple(Sessions0),
                              Ctx#{rendezvous => beamscale_load_rendezvous:start_link()}}),
    St = #{parent => Parent, users => #{}, sessions => Sessions, all => Sessions, key => Key,
           rand => Rand, pending => 0, fixed_off => false, began => erlang:monotonic_time(),
           start => Start, stall => none},
    try
        St2 = try phases(Phases, Start + native(start_s(Phases)), St)
              catch throw:{stop_arrivals, S2} -> S2#{fixed_off := true}
              end,
        Parent ! {arrivals_done, self()},
        drain(stall_over(St2))
    after
        %% Only this launcher's users read it, and they are gone (or killed with it).
        persistent_term:erase(Key)
    end.

%% One of several scenarios (`beamscale_load_scenario_many') starts that long after the run.
start_s([#{start_s := S}]) -> S;
start_s(_Phases) -> 0.

%% Each phase from the end of the one before, on the clock; after a phase that waits for its
%% users' end (Tsung's `wait_all_sessions_end'), from when this launcher's last user ended, as
%% each Tsung launcher waits for its own node's users. The last phase does not wait: the drain
%% follows it.
phases([], _From, St) -> St;
phases([P | Rest], From, St) ->
    End = From + native(maps:get(duration_s, P)),
    St1 = phase(P, From, St),
    case maps:get(wait_sessions_end, P, false) andalso Rest =/= [] of
        true -> St2 = users_ended(St1),
                phases(Rest, max(End, erlang:monotonic_time()), St2);
        false -> phases(Rest, End, St1)
    end.

%% Handle what comes until no user of this launcher is left.
users_ended(#{users := Users} = St) when map_size(Users) =:= 0 -> St;
users_ended(St) ->
    receive Msg -> users_ended(handle(Msg, St))
    end.

%% A phase picks from its own mix of sessions when it has one (`beamscale_load_scenario_mix').
%% A k6 executor's phase is run by `beamscale_load_executor' (`ctl rate' is refused there).
phase(#{executor := _} = P, From, #{all := All} = St) ->
    St1 = beamscale_load_executor:run(
            P, From, St#{sessions := beamscale_load_scenario_mix:sessions(P, All)},
            #{spawn => fun spawn_one/2, handle => fun handle/2,
              count => fun(S, Name) -> beamscale_load_metrics:count(metrics(S), Name) end,
              late => fun late_one/2, tick => fun late_tick/2, on_time => fun stall_over/1}),
    St1#{sessions := All};
%% A rate set by `beamscale ctl' holds to the end of the phase it was set in.
phase(#{duration_s := D, rate := Rate, max_users := Max} = P, From, #{all := All} = St) ->
    Sessions = beamscale_load_scenario_mix:sessions(P, All),
    St0 = fixed(maps:get(users_at, P, []), From, St),
    St1 = arrive(From, From + native(D), Rate, Max, 0,
                 (maps:remove(rate, St0))#{sessions := Sessions}),
    St1#{sessions := All}.

%% A new rate while waiting: the next arrival is drawn again from now (Poisson arrivals have no
%% memory, so nothing is owed from the old rate's draw).
arrive(T, End, Rate, Max, N, #{rand := R0} = St) ->
    case maps:get(rate, St, Rate) of
        %% A phase of users at fixed times only (`users_at').
        Zero when Zero == 0 -> arrived(wait(End, St), none, End, Rate, Max, N);
        R ->
            {Gap, R1} = beamscale_load_arrival:gap(R, R0),
            Next = T + native(Gap),
            case Next < End andalso N < Max of
                true -> arrived(wait(Next, St#{rand := R1}), Next, End, Rate, Max, N);
                false -> arrived(wait(End, St#{rand := R1}), none, End, Rate, Max, N)
            end
    end.

%% A phase's users at fixed times (Tsung's `<user start_time>'): a timer each, against the clock
%% as arrivals are; started by `handle/2' wherever the launcher waits.
fixed(At, From, #{pending := P} = St) ->
    Ms = fun(T) -> erlang:convert_time_unit(From + native(T), native, millisecond) end,
    [erlang:send_after(Ms(T), self(), {fixed_user, Name, From + native(T)}, [{abs, true}])
     || {T, Name} <- At],
    St#{pending := P + length(At)}.

arrived({replan, St}, _Due, End, Rate, Max, N) ->
    arrive(erlang:monotonic_time(), End, Rate, Max, N, St);
arrived(St, none, _End, _Rate, _Max, _N) -> St;
arrived(St, Due, End, Rate, Max, N) -> arrive(Due, End, Rate, Max, N + 1, due_user(Due, St)).

%% A user due over ?LATE_S ago, once this launcher ran, is not started but counted
%% (`sessions_late'): the launcher could not run meanwhile (its node stopped, SIGSTOP), and
%% starting them at once on resume would be a burst the scenario never asked for. Users due
%% before it began (a node that joined late) start as before.
due_user(Due, St) -> unless_late(Due, St, fun spawn_user/2).

%% `Start(Due, St)', or the user counted late (and in the stall it belongs to).
unless_late(Due, St, Start) ->
    case late_one(Due, St) of
        {true, St1} -> St1;
        {false, St1} -> Start(Due, St1)
    end.

%% Whether a user due at `Due' is late; if so counted (`sessions_late') and in its stall.
late_one(Due, St) ->
    case late(Due, St) of
        true -> beamscale_load_metrics:incr(metrics(St), sessions_late),
                {true, stalled(Due, 1, St)};
        false -> {false, St}
    end.

%% A closed executor's tick due at `T' (its users run back to back: none is late): a stall too
%% when the tick is late.
late_tick(T, St) ->
    case late(T, St) of
        true -> stalled(T, 0, St);
        false -> St
    end.

%% A stall: from the first late user's due time to the last late user seen (the launcher ran
%% again then), and how many were late (`K' more). Over once the launcher has time to wait
%% again (`stall_over/1'), when it is told to the controller: a stall is an event of the run.
stalled(Due, K, #{stall := none} = St) ->
    St#{stall := #{from => Due, seen => erlang:monotonic_time(), late => K}};
stalled(_Due, K, #{stall := #{late := N} = Stall} = St) ->
    St#{stall := Stall#{seen := erlang:monotonic_time(), late := N + K}}.

stall_over(#{stall := none} = St) -> St;
stall_over(#{stall := #{from := From, seen := Seen, late := N}, start := Start} = St) ->
    {_, Ctx} = persistent_term:get(maps:get(key, St)),
    _ = [C ! {stall, node(), #{at_s => seconds(From - Start), lasted_s => seconds(Seen - From),
                               late => N}} || C <- [maps:get(controller, Ctx, none)], C =/= none],
    St#{stall := none}.

seconds(Native) -> erlang:convert_time_unit(Native, native, microsecond) / 1.0e6.

late(Due, #{began := Began}) ->
    Due > Began andalso erlang:monotonic_time() - Due > native(?LATE_S).

spawn_user(Due, St) -> element(2, spawn_one(Due, St)).

%% One user of a session picked by weight: its pid and the state after.
spawn_one(Due, #{sessions := Sessions, rand := R0} = St) ->
    {Session, R1} = beamscale_load_arrival:pick(Sessions, R0),
    spawn_session(Session, Due, St#{rand := R1}).

spawn_session(#{slot := Slot}, Due, #{key := Key, rand := R1, users := Users} = St) ->
    {Seed, R2} = rand:uniform_s(1 bsl 40, R1),
    %% The closure captures only small terms (see the module's doc).
    Pid = spawn_link(fun() ->
                             {Shared, Ctx} = persistent_term:get(Key),
                             UserRand = rand:seed_s(exsss, Seed),
                             beamscale_load_user:run(element(Slot, Shared), Ctx, Due, UserRand)
                     end),
    {Pid, St#{users := Users#{Pid => true}, rand := R2}}.

%% Wait until `T', handling users that end and a stop meanwhile. Time to wait: a stall is over.
wait(T, St0) ->
    Ms = erlang:convert_time_unit(T - erlang:monotonic_time(), native, millisecond),
    St = case Ms > 0 of
             true -> stall_over(St0);
             false -> St0
         end,
    receive
        {set_rate, Rate} -> {replan, St#{rate => Rate}};
        Msg -> wait(T, handle(Msg, St))
    after max(Ms, 0) -> St
    end.

drain(#{users := Users, parent := Parent, pending := 0} = St) when map_size(Users) =:= 0 ->
    _ = stall_over(St),
    Parent ! {users_done, self()};
drain(St0) ->
    %% Nothing queued: the launcher has caught up, a stall is over.
    St = case process_info(self(), message_queue_len) of
             {_, 0} -> stall_over(St0);
             _ -> St0
         end,
    receive
        stop_arrivals -> drain(St#{fixed_off := true});
        Msg -> drain(handle(Msg, St))
    end.

handle({'EXIT', Pid, Why}, #{users := Users} = St) when is_map_key(Pid, Users) ->
    %% Killed by `users -N' (not done first): counted stopped, so that started = done +
    %% stopped + in flight. (A kill landing between the user's `sessions_done' and its exit
    %% would count it twice: a few instructions' window.)
    _ = maps:get(Pid, Users) =:= stopping andalso Why =:= killed
        andalso beamscale_load_metrics:incr(metrics(St), sessions_stopped) =:= ok,
    St#{users := maps:remove(Pid, Users)};
handle({'EXIT', Parent, Reason}, #{parent := Parent} = St) -> halt_users(St, Reason);
handle(stop, St) -> halt_users(St, normal);
handle(stop_arrivals, St) -> throw({stop_arrivals, St});
handle({fixed_user, _, _}, #{fixed_off := true, pending := P} = St) -> St#{pending := P - 1};
handle({fixed_user, Name, Due}, #{all := All, pending := P} = St) ->
    [Session] = [S || #{name := N} = S <- All, N =:= Name],
    unless_late(Due, St#{pending := P - 1},
                fun(D, S) -> element(2, spawn_session(Session, D, S)) end);
%% `beamscale ctl DIR users +N | -N': users started now, or users in flight ended (killed: their
%% sessions count as stopped, not done, when their exit comes). Still linked: the exit says
%% whether the kill ended the user or it had ended on its own.
handle({add_users, K}, St) ->
    lists:foldl(fun(_, S) -> spawn_user(erlang:monotonic_time(), S) end, St, lists:seq(1, K));
handle({remove_users, K}, #{users := Users} = St) ->
    Gone = lists:sublist([Pid || {Pid, true} <- maps:to_list(Users)], K),
    [exit(Pid, kill) || Pid <- Gone],
    St#{users := maps:merge(Users, maps:from_keys(Gone, stopping))};
handle(_, St) -> St.

metrics(#{key := Key}) ->
    {_, #{metrics := M}} = persistent_term:get(Key),
    M.

-spec halt_users(map(), term()) -> no_return().
halt_users(#{users := Users}, Reason) ->
    [exit(Pid, kill) || Pid <- maps:keys(Users)],
    exit(Reason).

native(Seconds) -> erlang:convert_time_unit(round(Seconds * 1000000), microsecond, native).
