-module(beamscale_format_json_tests).
-include_lib("eunit/include/eunit.hrl").

encode_test() ->
    ?assertEqual(unicode:characters_to_binary(
                   "{\"a\":[1,2.5,true,null],\"b\":\"x\\\"y\\n\",\"c\":\"\\u0001é\"}"),
                 iolist_to_binary(beamscale_format_json:encode(
                                    #{a => [1, 2.5, true, null], b => <<"x\"y\n">>,
                                      c => {string, [1, $é]}}))).

%% A decode error is said in words, with the byte where the JSON stops being valid.
format_error_test() ->
    {error, {beamscale_format_json, Reason}} = beamscale_format_json:decode(<<"[1, x]">>),
    ?assertEqual({syntax, 4}, Reason),
    ?assertEqual("not valid JSON at byte 4",
                 lists:flatten(beamscale_format_json:format_error(Reason))).
