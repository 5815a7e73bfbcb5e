-module(beamscale_format_json_tests).
-include_lib("eunit/include/eunit.hrl").

encode_test() ->
    ?assertEqual(unicode:characters_to_binary(
                   "{\"a\":[1,2.5,true,null],\"b\":\"x\\\"y\\n\",\"c\":\"\\u0001é\"}"),
                 iolist_to_binary(beamscale_format_json:encode(
                                    #{a => [1, 2.5, true, null], b => <<"x\"y\n">>,
                                      c => {string, [1, $é]}}))).
