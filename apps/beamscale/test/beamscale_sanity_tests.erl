-module(beamscale_sanity_tests).
-include_lib("eunit/include/eunit.hrl").

passed_ignores_white_space_test() ->
    ?assertEqual(passed, beamscale_sanity:verdict([{<<"a">>, <<"1  2\n3\n">>},
                                                   {<<"b">>, <<"1 2\r\n\n3">>}])).

unchecked_when_silent_test() ->
    ?assertEqual(unchecked, beamscale_sanity:verdict([{<<"a">>, <<>>}, {<<"b">>, <<"\n">>}])).

failed_names_first_difference_test() ->
    {failed, Why} = beamscale_sanity:verdict([{<<"o/d/1/1">>, <<"x\n42\n">>},
                                              {<<"o/d/2/1">>, <<"x\n43\n">>}]),
    ?assertEqual("line 2: o/d/1/1 printed <<\"42\">>, o/d/2/1 printed <<\"43\">>", Why).

one_silent_environment_fails_test() ->
    ?assertMatch({failed, _}, beamscale_sanity:verdict([{<<"a">>, <<"1">>}, {<<"b">>, <<>>}])).

combine_test() ->
    ?assertEqual(passed, beamscale_sanity:combine([unchecked, passed])),
    ?assertEqual(unchecked, beamscale_sanity:combine([unchecked])),
    ?assertEqual({failed, "x"}, beamscale_sanity:combine([passed, {failed, "x"}])).
