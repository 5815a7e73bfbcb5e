-module(beamscale_load_expect_tests).
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

match_test() ->
    M = fun beamscale_load_expect:match/2,
    ?assert(M('_', {anything, [1]})),
    ?assert(M({ok, '_'}, {ok, 3})),
    ?assertNot(M({ok, '_'}, {error, 3})),
    ?assertNot(M({ok, '_'}, {ok, 1, 2})),
    ?assert(M([a, '_'], [a, b])),
    ?assertNot(M([a, '_'], [a, b, c])),
    ?assert(M(#{k => '_'}, #{k => 1, other => 2})),
    ?assertNot(M(#{k => '_'}, #{other => 2})),
    ?assertNot(M(1, 1.0)),
    ?assert(M(<<"x">>, <<"x">>)).

check_test() ->
    ?assertEqual(ok, beamscale_load_expect:check({ok, [a | b], #{k => '_'}})),
    ?assertMatch({error, _}, beamscale_load_expect:check({ok, [fun() -> x end]})).

rpc_check_test() ->
    T = #{node => n@h},
    %% No expect: {error, _} is an error (the default of request/3).
    ?assertEqual({ok, #{type => call, module => m, function => f, args => []}},
                 beamscale_load_rpc:check(#{call => {m, f, []}}, T)),
    ?assertMatch({ok, #{expect := {pattern, {ok, '_'}}}},
                 beamscale_load_rpc:check(#{call => {m, f, []}, expect => {ok, '_'}}, T)),
    ?assertMatch({error, expect, _},
                 beamscale_load_rpc:check(#{cast => {m, f, []}, expect => ok}, T)).

%% Every term matches itself, and '_' in place of any part of it.
prop_self_match() ->
    ?FORALL(T, term(), beamscale_load_expect:match(T, T)
                andalso beamscale_load_expect:match(wild(T), T)).

wild(T) when is_tuple(T), tuple_size(T) > 0 -> setelement(1, T, '_');
wild([_ | Rest]) -> ['_' | Rest];
wild(_) -> '_'.

self_match_test() -> ?assert(proper:quickcheck(prop_self_match(), [quiet, {numtests, 300}])).
