-module(beamscale_plan_tests).
-include_lib("eunit/include/eunit.hrl").

%% One launch: the environment tests count points (launches have their own tests below).
config(Sweep) ->
    (beamscale_config:defaults())#{launches => 1, schedulers => [1, 2, 4], nodes => [1, 2, 3],
                                   sweep => Sweep,
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

%% A benchmark's flag sets merge with the run's by alias, not replace the whole list.
erl_args_merge_test() ->
    C = (config(cross))#{overrides => #{big => #{erl_args => [{nobw, "+sbwt very_short"},
                                                              {extra, "+P 400000"}]}}},
    ?assertEqual([{plain, ""}, {nobw, "+sbwt very_short"}, {extra, "+P 400000"}],
                 maps:get(erl_args, beamscale_plan:settings(C, big))),
    ?assertEqual([{plain, ""}, {nobw, "+sbwt none"}],
                 maps:get(erl_args, beamscale_plan:settings(C, ets_test))).

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

%% Launches are interleaved: launch 1 of every point, then launch 2 of every point; each
%% launch numbers its iterations on from the one before, so no two launches share a number.
launches_interleaved_test() ->
    C = (config(cross))#{launches => 3, iterations => 4, schedulers => [1, 2], nodes => [1],
                         erls => [{a, "/x/erl"}], erl_args => [{plain, ""}]},
    Jobs = beamscale_plan:jobs(C, [big, ets_test]),
    Point = fun(#{bench := B, env := #{schedulers := S}}) -> {B, S} end,
    Points = [{big, 1}, {big, 2}, {ets_test, 1}, {ets_test, 2}],
    ?assertEqual(lists:append([[{P, L} || P <- Points] || L <- [1, 2, 3]]),
                 [{Point(J), L} || #{launch := L} = J <- Jobs]),
    [?assertEqual(lists:seq(1, 12),
                  lists:append([beamscale_plan:iterations(J) || J <- Jobs, Point(J) =:= P]))
     || P <- Points],
    ?assertEqual([1, 1, 1, 1, 2, 2, 2, 2, 3], [beamscale_plan:launch_of(N, 4)
                                               || N <- lists:seq(1, 9)]).

%% A benchmark with fewer launches (an override) drops out of the later rounds only.
launches_override_test() ->
    C = (config(cross))#{launches => 2, schedulers => [1], nodes => [1], erls => [{a, "/x/erl"}],
                         erl_args => [{plain, ""}], overrides => #{big => #{launches => 1}}},
    ?assertEqual([{big, 1}, {ets_test, 1}, {ets_test, 2}],
                 [{B, L} || #{bench := B, launch := L} <- beamscale_plan:jobs(C, [big, ets_test])]).

%% One launch is the plan of before launches: iterations 1..N in one job per point.
one_launch_test() ->
    C = (config(cross))#{launches => 1},
    Jobs = beamscale_plan:jobs(C, [big]),
    ?assertEqual(36, length(Jobs)),
    [?assertEqual([1, 2, 3], beamscale_plan:iterations(J)) || J <- Jobs].

%% Each launch's jobs in an order drawn from the seed: every job once, launch by launch, the
%% same seed the same order, and some seed orders two launches differently.
order_test() ->
    C = (config(cross))#{launches => 3, schedulers => [1, 2], nodes => [1]},
    Jobs = beamscale_plan:jobs(C, [big, ets_test]),
    Key = fun(#{bench := B, env := E, launch := L}) -> {L, B, beamscale_format_env:key(E)} end,
    Round = fun(L, Js) -> [{B, E} || {L1, B, E} <- lists:map(Key, Js), L1 =:= L] end,
    Orders = [beamscale_plan:order(Jobs, Seed) || Seed <- lists:seq(1, 20)],
    [begin
         ?assertEqual(lists:sort(lists:map(Key, Jobs)), lists:sort(lists:map(Key, O))),
         ?assertEqual([L || #{launch := L} <- Jobs], [L || #{launch := L} <- O])
     end || O <- Orders],
    ?assertEqual(beamscale_plan:order(Jobs, 7), beamscale_plan:order(Jobs, 7)),
    ?assertNotEqual(beamscale_plan:order(Jobs, 7), beamscale_plan:order(Jobs, 8)),
    ?assert(lists:any(fun(O) -> Round(1, O) =/= Round(2, O) end, Orders)),
    %% Not the plan's order every time: the order is drawn.
    ?assert(lists:any(fun(O) -> Round(1, O) =/= Round(1, Jobs) end, Orders)).
