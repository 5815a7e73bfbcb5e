-module(beamscale_plan_tests).
-include_lib("eunit/include/eunit.hrl").

config(Sweep) ->
    (beamscale_config:defaults())#{schedulers => [1, 2, 4], nodes => [1, 2, 3], sweep => Sweep,
                                   erls => [{a, "/x/erl"}, {b, "/y/erl"}],
                                   erl_args => [{plain, ""}, {nobw, "+sbwt none"}]}.

points(Jobs) -> [{maps:get(schedulers, E), maps:get(nodes, E)} || #{env := E} <- Jobs].

cross_test() ->
    Jobs = beamscale_plan:jobs(config(cross), [big]),
    ?assertEqual(2 * 2 * 9, length(Jobs)),
    ?assertEqual(lists:usort([{S, N} || S <- [1, 2, 4], N <- [1, 2, 3]]),
                 lists:usort(points(Jobs))).

bencherl_sweeps_test() ->
    Jobs = beamscale_plan:jobs(config(bencherl), [big]),
    %% Schedulers 1, 2, 4 on one node, then nodes 2 and 3 with one scheduler; {1, 1} once.
    Expected = [{1, 1}, {2, 1}, {4, 1}, {1, 2}, {1, 3}],
    ?assertEqual(4 * length(Expected), length(Jobs)),
    ?assertEqual(Expected, lists:sublist(points(Jobs), 5)),
    ?assertEqual([{a, nobw}, {a, plain}, {b, nobw}, {b, plain}],
                 lists:usort([{maps:get(otp, E), maps:get(erl_args, E)} || #{env := E} <- Jobs])).

overrides_test() ->
    C = (config(cross))#{overrides => #{big => #{iterations => 9, schedulers => [2]}}},
    [Big | _] = Jobs = beamscale_plan:jobs(C, [big, ets_test]),
    ?assertMatch(#{bench := big, iterations := 9}, Big),
    ?assertEqual([2], lists:usort([S || #{bench := big, env := #{schedulers := S}} <- Jobs])),
    ?assertEqual(3, maps:get(iterations, lists:last(Jobs))),
    ?assertEqual(length([J || #{bench := ets_test} = J <- Jobs]), 36).

env_key_test() ->
    [#{env := Env} | _] = beamscale_plan:jobs(config(cross), [big]),
    ?assertEqual(<<"a/plain/1/1">>, beamscale_format_env:key(Env)).
