-module(beamscale_amoc_throttle_tests).
-include_lib("eunit/include/eunit.hrl").

interarrival_test() ->
    Ia = fun beamscale_amoc_throttle:interarrival/1,
    %% amoc's plain rate is per minute.
    ?assertEqual({ok, 60000 * 1000 / 100}, Ia(100)),
    ?assertEqual({ok, 20000.0}, Ia(#{rate => 50, interval => 1000})),
    ?assertEqual({ok, 5000}, Ia(#{interarrival => 5})),
    ?assertEqual({ok, 0}, Ia(infinity)),
    ?assertEqual({ok, infinity}, Ia(0)),
    ?assertEqual({error, parallel_limit_not_supported}, Ia(#{rate => 5, interval => 0})),
    ?assertMatch({error, {bad_throttle, _}}, Ia(#{rate => -1})),
    ?assertMatch({error, {bad_throttle, _}}, Ia(#{rate => 1, speed => 2})).

%% The server in this node, as on a load node; each test starts and stops it.
with_server(Test) ->
    {setup, fun() -> {ok, _} = beamscale_amoc_server:start(beamscale_amoc_throttle) end,
     fun(_) -> beamscale_amoc_server:stop(beamscale_amoc_throttle) end, Test}.

api_test_() -> with_server(fun api/0).

api() ->
    ?assertEqual({ok, started}, amoc_throttle:start(t, infinity)),
    ?assertEqual({ok, already_started}, amoc_throttle:start(t, 5)),
    ?assertEqual({error, {no_throttle, other}}, amoc_throttle:wait(other)),
    ?assertEqual(ok, amoc_throttle:wait(t)),
    ok = amoc_throttle:send(t, hello),
    receive hello -> ok after 5000 -> error(no_message) end,
    Me = self(),
    ok = amoc_throttle:run(t, fun() -> Me ! {ran, self()} end),
    receive {ran, Pid} -> ?assertNotEqual(Me, Pid) after 5000 -> error(not_run) end.

%% Paused: nothing goes through (a send waits); resumed: it goes.
pause_test_() -> with_server(fun pause/0).

pause() ->
    {ok, started} = amoc_throttle:start(p, infinity),
    ok = amoc_throttle:pause(p),
    ok = amoc_throttle:send(p, late),
    receive late -> error(sent_while_paused) after 300 -> ok end,
    ok = amoc_throttle:resume(p),
    receive late -> ok after 5000 -> error(not_resumed) end.

%% A rate of 0 holds callers; stop answers them with an error rather than leaving them.
stop_test_() -> with_server(fun stop/0).

stop() ->
    {ok, started} = amoc_throttle:start(s, 0),
    Me = self(),
    spawn_link(fun() -> Me ! {waited, amoc_throttle:wait(s)} end),
    receive {waited, _} -> error(not_held) after 300 -> ok end,
    ok = amoc_throttle:stop(s),
    receive {waited, R} -> ?assertEqual({error, {throttle_stopped, s}}, R)
    after 5000 -> error(not_answered)
    end,
    ?assertEqual({error, {no_throttle, s}}, amoc_throttle:change_rate(s, 10)).

no_run_test() ->
    ?assertEqual({error, no_amoc_run}, amoc_throttle:wait(t)).

gradual_test() ->
    G = fun beamscale_amoc_throttle:gradual/1,
    ?assertEqual({ok, {[0, 50, 100], 1000, 10}},
                 G(#{throttle => #{from_rate => 0, to_rate => 100, interval => 1000},
                     plan => #{step_interval => 10, step_count => 2}})),
    %% amoc's defaults: a minute's rate, steps of 100 ms over a duration.
    ?assertEqual({ok, {[10, 15, 20], 60000, 100}},
                 G(#{throttle => #{from_rate => 10, to_rate => 20}, plan => #{duration => 200}})),
    ?assertEqual({ok, {[600, 300], 60000, 5}},
                 G(#{throttle => #{from_interarrival => 100, to_interarrival => 200},
                     plan => #{step_interval => 5, step_count => 1}})),
    ?assertMatch({error, {bad_gradual, _}},
                 G(#{throttle => #{from_rate => 1, to_rate => 2}, plan => #{step_count => 0}})).

%% From 0 (nothing passes) to a high rate a step later: a waiter passes, not before the step.
gradually_test_() -> with_server(fun gradually/0).

gradually() ->
    {ok, started} = amoc_throttle:start(g, 0),
    T0 = erlang:monotonic_time(millisecond),
    ok = amoc_throttle:change_rate_gradually(
           g, #{throttle => #{from_rate => 0, to_rate => 6000, interval => 1000},
                plan => #{step_interval => 100, step_count => 2}}),
    ok = amoc_throttle:wait(g),
    %% A timer never fires early: the first step (3000/s) comes 100 ms on at the soonest.
    ?assert(erlang:monotonic_time(millisecond) - T0 >= 100),
    ?assertMatch({error, {bad_gradual, _}}, amoc_throttle:change_rate_gradually(g, #{})).

%% A throttle of one per minute made fast: its next slot is not left a minute ahead.
faster_test_() -> with_server(fun faster/0).

faster() ->
    {ok, started} = amoc_throttle:start(f, 1),
    ok = amoc_throttle:wait(f),
    ok = amoc_throttle:change_rate(f, #{rate => 1000, interval => 1000}),
    T0 = erlang:monotonic_time(millisecond),
    [ok = amoc_throttle:wait(f) || _ <- lists:seq(1, 3)],
    ?assert(erlang:monotonic_time(millisecond) - T0 < 4000).
