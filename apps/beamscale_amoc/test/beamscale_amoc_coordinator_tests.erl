-module(beamscale_amoc_coordinator_tests).
-include_lib("eunit/include/eunit.hrl").

with_server(Test) ->
    {setup, fun() -> {ok, _} = beamscale_amoc_server:start(beamscale_amoc_coordinator) end,
     fun(_) -> beamscale_amoc_server:stop(beamscale_amoc_coordinator) end, Test}.

%% What the actions were called with, in order.
calls() -> calls([]).
calls(Acc) ->
    receive {call, C} -> calls([C | Acc])
    after 200 -> lists:reverse(Acc)
    end.

plan_test_() -> with_server(fun plan/0).

%% [{2, F}, {all, G}] (amoc's example): F for every pair, G with everyone at the reset, after
%% the numbered items; an arity-2 action gets the batch.
plan() ->
    Me = self(),
    F = fun(Event, U1, U2) -> Me ! {call, {pair, Event, data(U1), data(U2)}} end,
    B = fun(Event, Batch) -> Me ! {call, {batch, Event, [D || {_, D} <- Batch]}} end,
    G = fun(Event) -> Me ! {call, {all, Event}} end,
    ok = amoc_coordinator:start(c, [{2, [F, B]}, {all, G}]),
    ?assertEqual(error, amoc_coordinator:start(c, [{2, F}])),
    [ok = amoc_coordinator:add(c, I) || I <- [1, 2, 3, 4, 5]],
    ?assertEqual([{pair, {coordinate, 2}, 1, 2}, {batch, {coordinate, 2}, [1, 2]},
                  {pair, {coordinate, 2}, 3, 4}, {batch, {coordinate, 2}, [3, 4]}], calls()),
    ok = amoc_coordinator:reset(c),
    ?assertEqual([{pair, {reset, 1}, 5, undefined}, {batch, {reset, 1}, [5]},
                  {all, {reset, 5}}], calls()),
    ok = amoc_coordinator:stop(c),
    ?assertEqual([{pair, {stop, 0}, undefined, undefined}, {batch, {stop, 0}, []},
                  {all, {stop, 0}}], calls()),
    ?assertError({no_coordinator, c}, amoc_coordinator:add(c, 6)).

%% A user's data; amoc passes `undefined' for the second user of a batch of one.
data({_Pid, D}) -> D;
data(undefined) -> undefined.

pairs_test_() -> with_server(fun pairs/0).

%% Three users in a batch: amoc's distinct pairs, each once.
pairs() ->
    Me = self(),
    ok = amoc_coordinator:start(p, {3, fun(_, {_, A}, {_, B}) -> Me ! {call, {A, B}} end}),
    [ok = amoc_coordinator:add(p, I) || I <- [a, b, c]],
    ?assertEqual([{a, b}, {a, c}, {b, c}], calls()).

timeout_test_() -> with_server(fun timeout/0).

%% One second with no add: every item gets what is left, `all' with everyone.
timeout() ->
    Me = self(),
    ok = amoc_coordinator:start(t, [{all, fun(E) -> Me ! {call, E} end}], 1),
    ok = amoc_coordinator:add(t, x),
    receive {call, E} -> ?assertEqual({timeout, 1}, E) after 5000 -> error(no_timeout) end.

range_test_() -> with_server(fun range/0).

%% A range {2, 3}: each batch of 2 or 3 users, drawn anew; 30 users make 10 to 15 batches.
range() ->
    Me = self(),
    ok = amoc_coordinator:start(r, {{2, 3}, fun(E, Batch) -> Me ! {call, {E, length(Batch)}} end}),
    [ok = amoc_coordinator:add(r, I) || I <- lists:seq(1, 30)],
    Sizes = [N || {{coordinate, N}, N} <- calls()],
    ?assertEqual([], [N || N <- Sizes, N < 2 orelse N > 3]),
    ?assert(lists:sum(Sizes) >= 28),
    ?assertEqual(error, amoc_coordinator:start(r2, {{3, 2}, fun(_) -> ok end})).

bad_plan_test_() -> with_server(fun bad_plan/0).

bad_plan() ->
    ?assertEqual(error, amoc_coordinator:start(b, [{0, fun(_) -> ok end}])),
    ?assertEqual(error, amoc_coordinator:start(b, [{2, not_a_fun}])),
    ?assertEqual(error, amoc_coordinator:start(b, [{2, fun(_) -> ok end}], 0)).

executor_down_test_() -> with_server(fun executor_down/0).

%% The process running a coordinator's actions gone (as when its node goes down) mid-reset: the
%% reset is answered all the same, and the coordinator goes on without actions to run.
executor_down() ->
    Me = self(),
    Block = fun(_Event) -> Me ! {call, blocked}, receive never -> ok end end,
    ok = amoc_coordinator:start(d, [{all, Block}], infinity),
    ok = amoc_coordinator:add(d, 1),
    {Caller, Mon} = spawn_monitor(fun() -> exit(amoc_coordinator:reset(d)) end),
    ?assertEqual([blocked], calls()),
    #{coords := #{d := #{execs := Execs}}} = sys:get_state(beamscale_amoc_coordinator),
    [{Exec, _}] = maps:values(Execs),
    exit(Exec, kill),
    receive {'DOWN', Mon, process, Caller, Result} -> ?assertEqual(ok, Result)
    after 5000 -> error(reset_hung)
    end,
    ok = amoc_coordinator:add(d, 2),
    ok = amoc_coordinator:stop(d).

reentrant_test_() -> with_server(fun reentrant/0).

%% An action may call the coordinator (it runs in a process of its own, not in the server).
reentrant() ->
    Me = self(),
    Again = fun(_Event, [{_, N}]) when N < 3 -> amoc_coordinator:add(r, N + 1);
               (_Event, [{_, N}]) -> Me ! {call, N}
            end,
    ok = amoc_coordinator:start(r, [{1, Again}]),
    ok = amoc_coordinator:add(r, 1),
    ?assertEqual([3], calls()).
