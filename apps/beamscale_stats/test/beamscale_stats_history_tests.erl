%% A history's records as series: commits in record order, replicates merged, regressions told
%% by the metric's better way, the newest commit's step.
-module(beamscale_stats_history_tests).
-include_lib("eunit/include/eunit.hrl").

-define(H, beamscale_stats_history).

entry(Bench, Metric, V, Better) ->
    #{<<"benchmark">> => Bench, <<"metric">> => Metric, <<"value">> => V,
      <<"low">> => V * 0.99, <<"high">> => V * 1.01, <<"primary">> => true,
      <<"better">> => Better, <<"environment">> => #{<<"schedulers">> => <<"1">>}}.

records(Values, Better) ->
    [#{<<"commit">> => iolist_to_binary(["c", integer_to_list(I)]), <<"seq">> => I,
       <<"clock">> => <<"cpu">>, <<"entries">> => [entry(<<"b">>, <<"m">>, V, Better)]}
     || {I, V} <- lists:enumerate(Values)].

wobble(N, Level) -> [Level * (1 + 0.01 * math:sin(I * 1.7)) || I <- lists:seq(1, N)].

series_in_record_order_with_replicates_test() ->
    [R1, R2, R3] = records([1.0, 2.0, 3.0], <<"lower">>),
    %% A second run of c1, recorded last: a replicate of c1's point, not a new commit.
    Again = R1#{<<"seq">> => 4, <<"entries">> => [entry(<<"b">>, <<"m">>, 1.2, <<"lower">>)]},
    [#{points := Ps, environment := Env, clock := <<"cpu">>}] =
        ?H:series([R1, R2, R3, Again], #{}),
    ?assertEqual([<<"c1">>, <<"c2">>, <<"c3">>], [C || #{commit := C} <- Ps]),
    ?assertEqual([1.0, 1.2], maps:get(values, hd(Ps))),
    ?assert(abs(maps:get(value, hd(Ps)) - 1.1) < 1.0e-9),
    ?assertEqual(<<"schedulers=1">>, Env).

filters_test() ->
    [R] = records([1.0], <<"lower">>),
    Other = entry(<<"b">>, <<"mean">>, 3.0, <<"lower">>),
    R2 = R#{<<"entries">> => [Other#{<<"primary">> => false} | maps:get(<<"entries">>, R)]},
    ?assertEqual([<<"m">>], [M || #{metric := M} <- ?H:series([R2], #{})]),
    ?assertEqual([<<"m">>, <<"mean">>],
                 [M || #{metric := M} <- ?H:series([R2], #{metrics => all})]),
    ?assertEqual([], ?H:series([R2], #{benchmarks => [<<"other">>]})).

regression_by_better_way_test() ->
    Up = wobble(15, 1.0) ++ wobble(15, 1.3),
    [{_, [#{commit := <<"c16">>, regression := true}]}] =
        ?H:analyse(?H:series(records(Up, <<"lower">>), #{}), #{}),
    [{_, [#{regression := false}]}] =
        ?H:analyse(?H:series(records(Up, <<"higher">>), #{}), #{}).

newest_test() ->
    [S] = ?H:series(records(wobble(12, 1.0) ++ [1.3], <<"lower">>), #{}),
    ?assertMatch(#{commit := <<"c13">>, regression := true, ratio := R} when R > 1.25,
                 ?H:newest(S, #{})),
    [Flat] = ?H:series(records(wobble(13, 1.0), <<"lower">>), #{}),
    ?assertEqual(none, ?H:newest(Flat, #{})),
    %% The step before the newest: the newest is measured against the segment after it.
    [Late] = ?H:series(records(wobble(8, 1.0) ++ wobble(6, 1.3), <<"lower">>), #{}),
    ?assertEqual(none, ?H:newest(Late, #{})),
    [Short] = ?H:series(records([1.0, 2.0], <<"lower">>), #{}),
    ?assertEqual(none, ?H:newest(Short, #{})).
