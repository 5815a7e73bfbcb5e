%% @doc The throttles of the amoc scenario running on this node (`amoc_throttle''s server): per
%% name, the events it lets through (a caller of `wait/1' answered, a message sent, a function
%% run) spaced by its interarrival, queued in their order. The next event's slot moves on by
%% one interarrival per event, so a timer that fires late lets the events it owes through at
%% once: the rate holds on average and a burst is never more than what a late tick owes.
%% Over N load nodes each has a throttle of its own at 1/N of the rate (amoc's master splits a
%% throttle's rate over its nodes too): together they keep the scenario's rate.
-module(beamscale_amoc_throttle).
-behaviour(gen_server).

-export([interarrival/1, gradual/1, figures/0]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

%% amoc's default interval of a rate: a minute.
-define(DEFAULT_INTERVAL_MS, 60000).
%% amoc's step of a gradual change given by its duration.
-define(DEFAULT_STEP_MS, 100).
%% Where the figures of the throttles stopped are kept (no atom: no throttle's name).
-define(STOPPED, {stopped}).

-type action() :: {reply, gen_server:from()} | {send, pid(), term()} | {run, fun(() -> any())}.

%% @doc A throttle's configuration (amoc's: a rate per minute, `#{rate, interval}' in ms,
%% `#{interarrival}' in ms) as the time between two events in microseconds.
-spec interarrival(term()) -> {ok, number() | infinity} | {error, term()}.
interarrival(infinity) -> {ok, 0};
interarrival(Rate) when is_integer(Rate), Rate >= 0 ->
    interarrival(#{rate => Rate, interval => ?DEFAULT_INTERVAL_MS});
interarrival(#{interarrival := infinity} = C) when map_size(C) =:= 1 -> {ok, infinity};
interarrival(#{interarrival := Ms} = C) when is_integer(Ms), Ms >= 0, map_size(C) =:= 1 ->
    {ok, Ms * 1000};
interarrival(#{rate := _} = C) when map_size(C) =:= 1 ->
    interarrival(C#{interval => ?DEFAULT_INTERVAL_MS});
interarrival(#{rate := _, interval := 0} = C) when map_size(C) =:= 2 ->
    {error, parallel_limit_not_supported};
interarrival(#{rate := infinity, interval := I} = C)
  when is_integer(I), I > 0, map_size(C) =:= 2 -> {ok, 0};
interarrival(#{rate := 0, interval := I} = C) when is_integer(I), I > 0, map_size(C) =:= 2 ->
    {ok, infinity};
interarrival(#{rate := R, interval := I} = C)
  when is_integer(R), R > 0, is_integer(I), I > 0, map_size(C) =:= 2 -> {ok, I * 1000 / R};
interarrival(Other) -> {error, {bad_throttle, Other}}.

%% @doc amoc's plan of a gradual change (`change_rate_gradually/2'): the rates of its steps
%% (the first at once), their interval (ms) and the time between two steps (ms).
-spec gradual(term()) ->
    {ok, {[non_neg_integer()], pos_integer(), pos_integer()}} | {error, term()}.
gradual(#{throttle := #{from_interarrival := F, to_interarrival := T} = Th} = G)
  when is_integer(F), F > 0, is_integer(T), T > 0, map_size(Th) =:= 2 ->
    gradual(G#{throttle := #{from_rate => ?DEFAULT_INTERVAL_MS div F,
                             to_rate => ?DEFAULT_INTERVAL_MS div T}});
gradual(#{throttle := #{from_rate := _, to_rate := _} = Th} = G) when map_size(Th) =:= 2 ->
    gradual(G#{throttle := Th#{interval => ?DEFAULT_INTERVAL_MS}});
gradual(#{plan := #{duration := D} = P} = G) when is_integer(D), D > 0, map_size(P) =:= 1 ->
    gradual(G#{plan := #{step_interval => ?DEFAULT_STEP_MS,
                         step_count => max(1, D div ?DEFAULT_STEP_MS)}});
gradual(#{throttle := #{from_rate := F, to_rate := T, interval := I} = Th,
          plan := #{step_interval := S, step_count := N} = P} = G)
  when map_size(G) =:= 2, map_size(Th) =:= 3, map_size(P) =:= 2, is_integer(F), F >= 0,
       is_integer(T), T >= 0, is_integer(I), I > 0, is_integer(S), S > 0,
       is_integer(N), N > 0 ->
    {ok, {[F + round((T - F) * K / N) || K <- lists:seq(0, N)], I, S}};
gradual(Other) -> {error, {bad_gradual, Other}}.

%% @doc Per throttle of this node (running or stopped): the events it let through, when the
%% first and the last went (system time, microseconds), the scenario's rate set last (per
%% second over all the nodes: `unlimited' or a number) and how many times it was changed.
-spec figures() -> #{atom() => map()}.
figures() ->
    case beamscale_amoc_server:call(?MODULE, figures) of
        #{} = Figures -> Figures;
        {error, no_amoc_run} -> #{}
    end.

%% @private
-spec init([]) -> {ok, map()}.
init([]) -> {ok, #{}}.

%% @private
-spec handle_call(term(), gen_server:from(), map()) -> {reply, term(), map()} | {noreply, map()}.
handle_call({start, Name, Config}, _From, Ts) when is_map_key(Name, Ts) ->
    case interarrival(Config) of
        {ok, _} -> {reply, {ok, already_started}, Ts};
        {error, _} = E -> {reply, E, Ts}
    end;
handle_call({start, Name, Config}, _From, Ts) ->
    case interarrival(Config) of
        {ok, Ia} -> {reply, {ok, started},
                     Ts#{Name => #{ia => shared(Ia), paused => false, queue => queue:new(),
                                   next => now_us(), timer => none, plan => none,
                                   figures => #{released => 0, first_us => none, last_us => none,
                                                rate_per_s => per_s(Ia), changes => 0}}}};
        {error, _} = E -> {reply, E, Ts}
    end;
handle_call(figures, _From, Ts) ->
    Stopped = maps:get(?STOPPED, Ts, #{}),
    Running = maps:fold(fun(Name, #{figures := F}, Acc) when is_atom(Name) -> Acc#{Name => F};
                           (_, _, Acc) -> Acc
                        end, #{}, Ts),
    {reply, maps:merge(Stopped, Running), Ts};
handle_call({_, Name, _}, _From, Ts) when not is_map_key(Name, Ts) ->
    {reply, {error, {no_throttle, Name}}, Ts};
handle_call({change_rate, Name, Config}, _From, Ts) ->
    case interarrival(Config) of
        {ok, Ia} ->
            T = maps:get(Name, Ts),
            {reply, ok, dispatch(Name, rated(T#{plan := none}, Ia, change), Ts)};
        {error, _} = E -> {reply, E, Ts}
    end;
%% A gradual change replaces any before it (and a change_rate/2 ends it).
handle_call({gradually, Name, Gradual}, _From, Ts) ->
    case gradual(Gradual) of
        {ok, {Rates, Interval, Step}} ->
            Ref = make_ref(),
            T = (maps:get(Name, Ts))#{plan := Ref},
            {reply, ok, step(Name, Ref, Rates, Interval, Step, Ts#{Name := T})};
        {error, _} = E -> {reply, E, Ts}
    end;
handle_call({paused, Name, P}, _From, Ts) ->
    {reply, ok, dispatch(Name, (maps:get(Name, Ts))#{paused := P}, Ts)};
handle_call({stop, Name, _}, _From, Ts) ->
    #{queue := Q, figures := Figures} = maps:get(Name, Ts),
    [gen_server:reply(F, {error, {throttle_stopped, Name}}) || {reply, F} <- queue:to_list(Q)],
    {reply, ok, (maps:remove(Name, Ts))#{?STOPPED => (maps:get(?STOPPED, Ts, #{}))#{
                                                         Name => Figures}}};
handle_call({wait, Name, _}, From, Ts) -> {noreply, enqueue(Name, {reply, From}, Ts)};
handle_call({event, Name, Action}, _From, Ts) -> {reply, ok, enqueue(Name, Action, Ts)}.

%% @private
-spec handle_cast(term(), map()) -> {noreply, map()}.
handle_cast(_Msg, Ts) -> {noreply, Ts}.

%% @private
-spec handle_info(term(), map()) -> {noreply, map()}.
handle_info({tick, Name}, Ts) when is_map_key(Name, Ts) ->
    {noreply, dispatch(Name, (maps:get(Name, Ts))#{timer := none}, Ts)};
handle_info({step, Name, Ref, Rates, Interval, Step}, Ts) ->
    case Ts of
        #{Name := #{plan := Ref}} -> {noreply, step(Name, Ref, Rates, Interval, Step, Ts)};
        _ -> {noreply, Ts}
    end;
handle_info(_Msg, Ts) -> {noreply, Ts}.

%% The next rate of a gradual change now, the one after it in `Step' ms.
step(Name, _Ref, [], _Interval, _Step, Ts) -> Ts#{Name := (maps:get(Name, Ts))#{plan := none}};
step(Name, Ref, [Rate | Rates], Interval, Step, Ts) ->
    {ok, Ia} = interarrival(#{rate => Rate, interval => Interval}),
    [erlang:send_after(Step, self(), {step, Name, Ref, Rates, Interval, Step}) || Rates =/= []],
    dispatch(Name, rated(maps:get(Name, Ts), Ia, step), Ts).

%% A new rate from now: the next slot no later than one new interarrival away (a slot of the
%% old, slower rate may be far ahead), its timer set again. A change is counted in the figures
%% (a gradual one's steps once, at its first).
rated(#{next := Next, timer := Timer, figures := F} = T0, Ia0, Why) ->
    T = T0#{figures := F#{rate_per_s := per_s(Ia0),
                          changes := maps:get(changes, F) + changes(Why)}},
    Ia = shared(Ia0),
    _ = Timer =:= none orelse erlang:cancel_timer(Timer),
    case Ia of
        infinity -> T#{ia := Ia, timer := none};
        _ -> T#{ia := Ia, timer := none, next := min(Next, now_us() + Ia)}
    end.

changes(step) -> 0;
changes(_) -> 1.

%% The scenario's rate (over all the nodes) per second, of an interarrival in microseconds.
per_s(infinity) -> 0;
per_s(Ia) when Ia == 0 -> unlimited;
per_s(Ia) -> 1.0e6 / Ia.

%% This node's share of a rate: N nodes, N times the interarrival.
shared(infinity) -> infinity;
shared(Ia) -> Ia * beamscale_amoc_node:nodes().

-spec enqueue(term(), action(), map()) -> map().
enqueue(Name, Action, Ts) ->
    #{queue := Q, next := Next} = T = maps:get(Name, Ts),
    %% An idle throttle owes nothing: its next slot is now at the earliest.
    T1 = case queue:is_empty(Q) of
             true -> T#{next := max(Next, now_us())};
             false -> T
         end,
    dispatch(Name, T1#{queue := queue:in(Action, Q)}, Ts).

%% Let through what is due; a timer for the next slot if more waits.
dispatch(Name, #{paused := true} = T, Ts) -> Ts#{Name := T};
dispatch(Name, #{ia := infinity} = T, Ts) -> Ts#{Name := T};
dispatch(Name, #{queue := Q, next := Next, ia := Ia} = T, Ts) ->
    Now = now_us(),
    case queue:out(Q) of
        {empty, _} -> Ts#{Name := T};
        {{value, Action}, Q1} when Next =< Now ->
            release(Action),
            dispatch(Name, released(T#{queue := Q1, next := Next + Ia}), Ts);
        {{value, _}, _} -> Ts#{Name := timer(Name, T, Next - Now)}
    end.

timer(_Name, #{timer := Ref} = T, _Us) when Ref =/= none -> T;
timer(Name, T, Us) ->
    T#{timer := erlang:send_after(max(1, ceil(Us / 1000)), self(), {tick, Name})}.

%% One more event let through, stamped with the host's clock (the same on its load nodes).
released(#{figures := #{released := N, first_us := First} = F} = T) ->
    Now = erlang:system_time(microsecond),
    T#{figures := F#{released := N + 1, last_us := Now,
                     first_us := case First of
                                     none -> Now;
                                     _ -> First
                                 end}}.

release({reply, From}) -> gen_server:reply(From, ok);
release({send, Pid, Msg}) -> Pid ! Msg;
release({run, Fun}) -> _ = spawn(Fun), ok.

now_us() -> erlang:monotonic_time(microsecond).
