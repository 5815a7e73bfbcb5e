-module(beamscale_stats_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(FAST, #{resamples => 200}).

%%% Examples

describe_test() ->
    S = beamscale_stats:describe([3, 1, 2, 4]),
    ?assertMatch(#{n := 4, median := 2.5, mean := 2.5, min := 1.0, max := 4.0}, S),
    ?assert(abs(maps:get(stddev, S) - 1.2909944) < 1.0e-6),
    ?assert(maps:get(noisy, S)),
    ?assertMatch(#{noisy := false, cv := 0.0, ci95_low := 5.0, ci95_high := 5.0},
                 beamscale_stats:describe([5, 5, 5])),
    ?assertMatch(#{n := 1, stddev := 0.0, ci95_low := 7.0}, beamscale_stats:describe([7])).

reproducible_test() ->
    Xs = [1.0, 1.2, 0.9, 1.1, 1.5, 1.05, 0.95],
    ?assertEqual(beamscale_stats:describe(Xs), beamscale_stats:describe(Xs)).

mann_whitney_test() ->
    %% Fully separated samples of 10: p well under 0.01; identical samples: p = 1.
    A = [float(X) || X <- lists:seq(1, 10)],
    B = [X + 100 || X <- A],
    #{p := P} = beamscale_stats:mann_whitney(A, B),
    ?assert(P < 0.001),
    ?assertMatch(#{u := 50.0, p := 1.0}, beamscale_stats:mann_whitney(A, A)),
    %% Three against three can never reach 5 % (exact minimum is 0.1).
    #{p := P3} = beamscale_stats:mann_whitney([1, 2, 3], [4, 5, 6]),
    ?assert(P3 > 0.05).

report_stats_test() ->
    Row = fun(S, T) -> #{benchmark => <<"b">>, phase => <<"b">>, args => <<"[1]">>,
                         otp => <<"otp">>, erl_args => <<"default">>,
                         schedulers => integer_to_binary(S), nodes => <<"1">>,
                         seconds => float_to_binary(T)} end,
    Rows = [Row(1, 2.0), Row(1, 2.1), Row(1, 1.9), Row(2, 1.0), Row(2, 1.05), Row(2, 0.95)],
    [One, Two] = beamscale_stats:report_stats(Rows),
    ?assertMatch(#{schedulers := 1, speedup := 1.0, efficiency := 1.0}, One),
    ?assertMatch(#{schedulers := 2, n := 3, speedup := 2.0, efficiency := 1.0}, Two),
    #{speedup_low := L, speedup_high := H} = Two,
    ?assert(L =< 2.0 andalso 2.0 =< H).

json_decode_test() ->
    ?assertEqual({ok, #{<<"a">> => [1, 2.5, -3.0e5, true, null],
                        <<"é"/utf8>> => <<"x\"\n😀"/utf8>>}},
                 beamscale_format_json:decode(<<" {\"a\": [1, 2.5, -3e5, true, null],"
                                         " \"\\u00e9\": \"x\\\"\\n\\ud83d\\ude00\"} ">>)),
    Syntax = fun(Text) -> beamscale_format_json:decode(Text) end,
    ?assertMatch({error, {beamscale_format_json, {syntax, _}}}, Syntax(<<"{\"a\" 1}">>)),
    ?assertMatch({error, {beamscale_format_json, {syntax, _}}}, Syntax(<<"[1] x">>)),
    ?assertMatch({error, {beamscale_format_json, {syntax, _}}}, Syntax(<<"-">>)).

%%% Properties

properties_test_() ->
    [{timeout, 30, ?_assert(proper:quickcheck(P, [{numtests, 200}, {to_file, user}]))}
     || P <- [prop_ci_contains_median(), prop_permutation_invariant(), prop_order(),
              prop_ratio_of_scaled(), prop_mann_whitney_symmetric(), prop_json_roundtrip()]].

samples() -> non_empty(list(float(0.001, 100.0))).

prop_ci_contains_median() ->
    ?FORALL(Xs, samples(),
            begin
                #{median := M, ci95_low := L, ci95_high := H} = beamscale_stats:describe(Xs, ?FAST),
                L =< M andalso M =< H
            end).

prop_permutation_invariant() ->
    ?FORALL({Xs, Seed}, {samples(), integer()},
            begin
                Shuffled = [X || {_, X} <- lists:sort([{erlang:phash2({Seed, I}), X}
                                                        || {I, X} <- lists:enumerate(Xs)])],
                beamscale_stats:describe(Xs, ?FAST) =:= beamscale_stats:describe(Shuffled, ?FAST)
            end).

prop_order() ->
    ?FORALL(Xs, samples(),
            begin
                #{min := Min, max := Max, median := M, mean := Mean, ci95_low := L,
                  ci95_high := H, stddev := Sd} = beamscale_stats:describe(Xs, ?FAST),
                Min =< L andalso H =< Max andalso Min =< M andalso M =< Max
                    andalso Min =< Mean + 1.0e-9 andalso Mean =< Max + 1.0e-9 andalso Sd >= 0
            end).

%% A sample against itself scaled by K: the ratio is K and its interval holds K.
prop_ratio_of_scaled() ->
    ?FORALL({Xs, K}, {samples(), float(0.1, 10.0)},
            begin
                {R, L, H} = beamscale_stats:bootstrap_ratio([X * K || X <- Xs], Xs, ?FAST),
                abs(R - K) < 1.0e-9 * K andalso L =< R andalso R =< H
            end).

prop_mann_whitney_symmetric() ->
    ?FORALL({As, Bs}, {samples(), samples()},
            begin
                #{p := P1} = beamscale_stats:mann_whitney(As, Bs),
                #{p := P2} = beamscale_stats:mann_whitney(Bs, As),
                abs(P1 - P2) < 1.0e-9 andalso P1 >= 0 andalso P1 =< 1
            end).

json() -> ?SIZED(S, json(min(S, 20))).
json(0) -> oneof([integer(), float(), utf8(), true, false, null]);
json(S) -> oneof([json(0),
                  ?LAZY(resize(4, list(json(S div 3)))),
                  ?LAZY(?LET(KVs, resize(4, list({utf8(), json(S div 3)})),
                             maps:from_list(KVs)))]).

prop_json_roundtrip() ->
    ?FORALL(T, json(), beamscale_format_json:decode(beamscale_format_json:encode(T)) =:= {ok, T}).
