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
