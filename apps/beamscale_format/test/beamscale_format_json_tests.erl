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

%% Numbers as JSON writes them (an exponent without a fraction too), and the byte where one
%% that is not JSON stops being valid; a float beyond a double's range is an error, not a crash.
numbers_test() ->
    Ok = [{"0", 0}, {"-0", 0}, {"12", 12}, {"-3.25", -3.25}, {"1e5", 1.0e5}, {"1E+2", 100.0},
          {"2.5e-3", 0.0025}, {"-1.5E10", -1.5e10}, {"[1,-2.0e1,3]", [1, -20.0, 3]},
          {"{\"a\":10.0}", #{<<"a">> => 10.0}}, {"[0.000001]", [1.0e-6]},
          {"123456789012345678901234567890", 123456789012345678901234567890}],
    [?assertEqual({C, {ok, V}}, {C, beamscale_format_json:decode(list_to_binary(C))})
     || {C, V} <- Ok],
    Bad = [{"01", 1}, {"1.", 1}, {"-", 0}, {"1e", 1}, {".5", 0}, {"-01", 2}, {"1.e5", 1},
           {"1e+", 1}, {"1.5e400", 0}, {"[1, -1e999]", 4}],
    [?assertEqual({C, {error, {beamscale_format_json, {syntax, At}}}},
                  {C, beamscale_format_json:decode(list_to_binary(C))})
     || {C, At} <- Bad].

%% Strings through both ways: plain ASCII (taken whole), escapes, UTF-8, control bytes, DEL;
%% a plain string decoded holds its own bytes, not the document; the byte of an error is the
%% one the character reader stops at.
strings_test() ->
    Cases = [<<"plain">>, <<>>, <<"a\"b">>, <<"back\\slash">>, <<"tab\tnew\n">>,
             <<"é ü 中"/utf8>>, <<1, "ctl">>, <<"del", 127>>, <<"/">>, <<"x y z 0-9 ~">>],
    [?assertEqual({C, {ok, [C]}},
                  {C, beamscale_format_json:decode(iolist_to_binary(
                                                     beamscale_format_json:encode([C])))})
     || C <- Cases],
    {ok, #{<<"key">> := V} = M} = beamscale_format_json:decode(<<"{\"key\":\"value\"}">>),
    [K] = maps:keys(M),
    ?assertEqual({5, 3}, {binary:referenced_byte_size(V), binary:referenced_byte_size(K)}),
    ?assertEqual({ok, <<"a/b">>}, beamscale_format_json:decode(<<"\"a\\/b\"">>)),
    Bad = [{<<"\"abc">>, 4}, {<<"\"a", 1, "b\"">>, 2}, {<<"[\"ok\", \"x\\q\"]">>, 9}],
    [?assertEqual({B, {error, {beamscale_format_json, {syntax, At}}}},
                  {B, beamscale_format_json:decode(B)})
     || {B, At} <- Bad].
