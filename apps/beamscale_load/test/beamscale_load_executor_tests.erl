-module(beamscale_load_executor_tests).
-include_lib("eunit/include/eunit.hrl").

-define(E, beamscale_load_executor).

%% A constant rate R over D seconds: round(R * D) iterations, 1/R apart, the first at half a gap.
constant_test() ->
    Ts = arrivals(10.0, [{2.0, 10.0}]),
    ?assertEqual(20, length(Ts)),
    ?assert(abs(hd(Ts) - 0.05) < 1.0e-9),
    ?assert(abs(lists:last(Ts) - 1.95) < 1.0e-9).

%% 0 to 100 a second over 4 s: 200 iterations, ever closer together; then a flat stage.
ramp_test() ->
    Ts = arrivals(0.0, [{4.0, 100.0}, {1.0, 100.0}]),
    ?assertEqual(300, length(Ts)),
    ?assertEqual(Ts, lists:sort(Ts)),
    %% Half the ramp's iterations are due after 4 / sqrt(2) s (its integral is 12.5 t^2).
    ?assert(abs(lists:nth(100, Ts) - math:sqrt(99.5 / 12.5)) < 1.0e-6),
    ?assert(lists:last(Ts) < 5.0).

zero_test() ->
    ?assertEqual(done, ?E:arrival_s(1, 0.0, [{3.0, 0.0}])).

arrivals(R0, Stages) -> arrivals(1, R0, Stages, []).

arrivals(K, R0, Stages, Acc) ->
    case ?E:arrival_s(K, R0, Stages) of
        done -> lists:reverse(Acc);
        T -> arrivals(K + 1, R0, Stages, [T | Acc])
    end.

%% ramping_users: linear within a stage, then held at the last target.
target_test() ->
    Stages = [{2.0, 10.0}, {1.0, 10.0}, {2.0, 0.0}],
    ?assertEqual(0.0, ?E:target_at(0.0, 0.0, Stages)),
    ?assertEqual(5.0, ?E:target_at(1.0, 0.0, Stages)),
    ?assertEqual(10.0, ?E:target_at(2.5, 0.0, Stages)),
    ?assertEqual(5.0, ?E:target_at(4.0, 0.0, Stages)),
    ?assertEqual(0.0, ?E:target_at(9.0, 0.0, Stages)).

%% per_user_iterations: each user's chain of sessions (a session's successor starts when it
%% ends) runs exactly `iterations', not only the total; shared_iterations: the total exactly.
per_user_exact_test() ->
    Chains = chains(#{kind => per_user_iterations, users => 4, iterations => 5}),
    ?assertEqual([5, 5, 5, 5], lists:sort(maps:values(Chains))).

shared_exact_test() ->
    Chains = chains(#{kind => shared_iterations, users => 3, iterations => 10}),
    ?assertEqual(10, lists:sum(maps:values(Chains))),
    ?assertEqual(3, map_size(Chains)).

%% Sessions of a few ms each under `run/4'; a session started after another's end belongs to
%% that one's chain (the launcher handles the end, then spawns its successor).
chains(E) ->
    Trap = process_flag(trap_exit, true),
    try
        Now = erlang:monotonic_time(),
        Spawn = fun(_At, #{last := Last, chain_of := Of} = S) ->
                        Pid = spawn_link(fun() -> timer:sleep(rand:uniform(4)) end),
                        Chain = case Last of none -> make_ref(); C -> C end,
                        {Pid, S#{chain_of := Of#{Pid => Chain}, last := none,
                                 n := maps:update_with(Chain, fun(K) -> K + 1 end, 1,
                                                       maps:get(n, S))}}
                end,
        Handle = fun({'EXIT', P, _}, #{chain_of := Of} = S) when is_map_key(P, Of) ->
                         S#{last := maps:get(P, Of)};
                    (_, S) -> S
                 end,
        F = #{spawn => Spawn, handle => Handle, count => fun(_, _) -> ok end,
              late => fun(_, S) -> {false, S} end, tick => fun(_, S) -> S end,
              on_time => fun(S) -> S end},
        #{n := N} = ?E:run(#{executor => E, duration_s => 10}, Now,
                           #{last => none, chain_of => #{}, n => #{}}, F),
        N
    after
        process_flag(trap_exit, Trap)
    end.
