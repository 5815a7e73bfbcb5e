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

parse_test() ->
    Parse = fun beamscale_load_expect:parse/1,
    ?assertEqual({ok, {ok, '_', '_', '_'}}, Parse("{ok, _, _Rest, Value}")),
    ?assertEqual({ok, #{status => ok}}, Parse("#{status := ok}")),
    ?assertEqual({ok, [1.5, 255, $a, "s", <<"b">>, -3]},
                 Parse("[1.5, 16#ff, $a, \"s\", <<\"b\">>, -3]")),
    ?assertEqual({ok, 'quoted atom'}, Parse("'quoted atom'")),
    ?assertEqual({error, "a fun cannot be a pattern"}, Parse("fun erlang:node/0")),
    ?assertMatch({error, "variable X appears twice" ++ _}, Parse("{X, X}")),
    ?assertMatch({error, "not an Erlang pattern" ++ _}, Parse("{1 + 2}")),
    ?assertMatch({error, "not an Erlang pattern" ++ _}, Parse("case")),
    ?assertMatch({error, "longer than" ++ _}, Parse(lists:duplicate(5000, $a))),
    %% Unknown atoms (as values and map keys) are names, matched by name, never made.
    %% (Names made at run time: the compiler would make atoms of literal ones.)
    [A1, A2] = [lists:concat(["expect_tests_", N, erlang:unique_integer([positive])])
                || N <- ["x", "y"]],
    {ok, P} = Parse(lists:concat(["{ok, ", A1, ", #{", A2, " := 1}}"])),
    ?assertError(badarg, list_to_existing_atom(A1)),
    ?assertError(badarg, list_to_existing_atom(A2)),
    Result = {ok, list_to_atom(A1), #{list_to_atom(A2) => 1}},
    ?assert(beamscale_load_expect:match(P, Result)),
    ?assertNot(beamscale_load_expect:match(P, {ok, other, #{}})).

%% A term written with ~w reads back as itself (atoms it holds exist: PropEr made them).
prop_parse_written() ->
    ?FORALL(T, term(), beamscale_load_expect:parse(lists:flatten(io_lib:format("~w", [T])))
                =:= {ok, T}).

parse_written_test_() ->
    {timeout, 60, ?_assert(proper:quickcheck(prop_parse_written(), [quiet, {numtests, 300}]))}.

%% Every term matches itself, and '_' in place of any part of it.
prop_self_match() ->
    ?FORALL(T, term(), beamscale_load_expect:match(T, T)
                andalso beamscale_load_expect:match(wild(T), T)).

wild(T) when is_tuple(T), tuple_size(T) > 0 -> setelement(1, T, '_');
wild([_ | Rest]) -> ['_' | Rest];
wild(_) -> '_'.

self_match_test() -> ?assert(proper:quickcheck(prop_self_match(), [quiet, {numtests, 300}])).
