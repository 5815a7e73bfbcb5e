-module(beamscale_amoc_value_tests).
-include_lib("eunit/include/eunit.hrl").

%% A word no module has made an atom of (checked: the test itself must not make it).
fresh_word() ->
    W = "zq_amoc_" ++ integer_to_list(erlang:unique_integer([positive])),
    ?assertError(badarg, list_to_existing_atom(W)),
    W.

terms_test() ->
    ?assertEqual({ok, 42}, beamscale_amoc_value:parse("42")),
    ?assertEqual({ok, "a b"}, beamscale_amoc_value:parse("\"a b\"")),
    ?assertEqual({ok, <<"x">>}, beamscale_amoc_value:parse("<<\"x\">>")),
    ?assertEqual({ok, [{ok, 1.5}, true]}, beamscale_amoc_value:parse("[{ok, 1.5}, true]")),
    ?assertEqual({ok, #{infinity => 16#ff}}, beamscale_amoc_value:parse("#{infinity => 16#ff}")),
    ?assertEqual({ok, 'EXIT'}, beamscale_amoc_value:parse("'EXIT'")).

no_atom_made_test() ->
    W = fresh_word(),
    ?assertMatch({error, {beamscale_amoc_value, {unknown_atom, W}}},
                 beamscale_amoc_value:parse("[ok, " ++ W ++ "]")),
    ?assertMatch({error, {beamscale_amoc_value, {unknown_atom, W}}},
                 beamscale_amoc_value:parse("'" ++ W ++ "'")),
    ?assertError(badarg, list_to_existing_atom(W)),
    %% Inside a string or a character it is text, not an atom.
    ?assertEqual({ok, "say " ++ W}, beamscale_amoc_value:parse("\"say " ++ W ++ "\"")),
    ?assertEqual({ok, [$', $a]}, beamscale_amoc_value:parse("[$', $a]")).

refused_test() ->
    {error, {beamscale_amoc_value, Syntax}} = beamscale_amoc_value:parse("{1,"),
    ?assertMatch("not an Erlang term: " ++ _,
                 lists:flatten(beamscale_amoc_value:format_error(Syntax))),
    ?assertMatch({error, {beamscale_amoc_value, too_long}},
                 beamscale_amoc_value:parse(lists:duplicate(70000, $1))).
