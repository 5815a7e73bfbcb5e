%% HPACK against RFC 7541's Appendix C examples (integers, literals, request and response
%% sequences with and without Huffman coding, eviction at a 256-byte table), the Huffman table
%% against codes Appendix B prints, and the bounds a hostile peer meets.
-module(beamscale_load_h2_hpack_tests).

-include_lib("eunit/include/eunit.hrl").

-define(H, beamscale_load_h2_hpack).

hex(S) -> binary:decode_hex(iolist_to_binary(string:replace(S, " ", "", all))).

ctx(Table) -> ?H:new({Table, 65536}).

%% C.1: 10 and 1337 in a 5-bit prefix, 42 at an octet boundary.
integers_test() ->
    ?assertEqual({10, <<>>}, ?H:int(<<2#11101010>>, 5)),
    ?assertEqual({1337, <<>>}, ?H:int(<<2#00011111, 2#10011010, 2#00001010>>, 5)),
    ?assertEqual({42, <<>>}, ?H:int(<<42>>, 8)).

%% C.2: one field of each literal kind and an indexed one.
literals_test() ->
    {ok, [{<<"custom-key">>, <<"custom-header">>}], #{size := 55}}
        = ?H:decode(hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"),
                    ctx(4096)),
    {ok, [{<<":path">>, <<"/sample/path">>}], #{size := 0}}
        = ?H:decode(hex("040c 2f73 616d 706c 652f 7061 7468"), ctx(4096)),
    {ok, [{<<"password">>, <<"secret">>}], #{size := 0}}
        = ?H:decode(hex("1008 7061 7373 776f 7264 0673 6563 7265 74"), ctx(4096)),
    ?assertMatch({ok, [{<<":method">>, <<"GET">>}], _}, ?H:decode(<<16#82>>, ctx(4096))).

req1() -> [{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"http">>}, {<<":path">>, <<"/">>},
           {<<":authority">>, <<"www.example.com">>}].
req2() -> req1() ++ [{<<"cache-control">>, <<"no-cache">>}].
req3() -> [{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"https">>},
           {<<":path">>, <<"/index.html">>}, {<<":authority">>, <<"www.example.com">>},
           {<<"custom-key">>, <<"custom-value">>}].

%% C.3 (plain) and C.4 (Huffman): three requests on one connection, the table growing.
requests_test_() ->
    [?_test(sequence([{"8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", req1(), 57},
                      {"8286 84be 5808 6e6f 2d63 6163 6865", req2(), 110},
                      {"8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
                       req3(), 164}], 4096)),
     ?_test(sequence([{"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", req1(), 57},
                      {"8286 84be 5886 a8eb 1064 9cbf", req2(), 110},
                      {"8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
                       req3(), 164}], 4096))].

%% C.5: three responses with a 256-byte table: entries evicted oldest first.
responses_test() ->
    Loc = {<<"location">>, <<"https://www.example.com">>},
    Date = fun(S) -> {<<"date">>, <<"Mon, 21 Oct 2013 20:13:", S/binary, " GMT">>} end,
    Priv = {<<"cache-control">>, <<"private">>},
    sequence([{"4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133"
               " 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861"
               " 6d70 6c65 2e63 6f6d",
               [{<<":status">>, <<"302">>}, Priv, Date(<<"21">>), Loc], 222},
              {"4803 3330 37c1 c0bf", [{<<":status">>, <<"307">>}, Priv, Date(<<"21">>), Loc], 222},
              {"88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d"
               " 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f"
               " 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572"
               " 7369 6f6e 3d31",
               [{<<":status">>, <<"200">>}, Priv, Date(<<"22">>), Loc,
                {<<"content-encoding">>, <<"gzip">>},
                {<<"set-cookie">>, <<"foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1">>}],
               215}], 256).

sequence(Steps, Table) ->
    lists:foldl(fun({Hex, Want, Size}, Ctx) ->
                        {ok, Got, #{size := S} = Ctx1} = ?H:decode(hex(Hex), Ctx),
                        ?assertEqual(Want, Got),
                        ?assertEqual(Size, S),
                        Ctx1
                end, ctx(Table), Steps).

%% Appendix B's printed codes; the code is complete (Kraft's sum is exactly 1).
huffman_table_test() ->
    H = beamscale_load_h2_huffman,
    ?assertEqual({16#1ff8, 13}, H:code(0)),
    ?assertEqual({16#14, 6}, H:code($\s)),
    ?assertEqual({16#3, 5}, H:code($a)),
    ?assertEqual({16#7fff0, 19}, H:code($\\)),
    ?assertEqual({16#3ffffee, 26}, H:code(255)),
    ?assertEqual({16#3fffffff, 30}, H:code(256)),
    ?assertEqual(257, length(H:lengths())),
    %% The decoder reads a symbol's first 5 bits at once: no code is shorter.
    ?assertEqual(5, lists:min(H:lengths())),
    ?assertEqual(1 bsl 30, lists:sum([1 bsl (30 - L) || L <- H:lengths()])).

%% C.4.1's string both ways; every octet round trips.
huffman_test() ->
    H = beamscale_load_h2_huffman,
    ?assertEqual(hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff"), H:encode(<<"www.example.com">>)),
    All = list_to_binary(lists:seq(0, 255)),
    ?assertEqual({ok, All}, H:decode(H:encode(All), 1000)),
    ?assertEqual({error, huffman_padding}, H:decode(<<16#f1, 16#e3, 16#c2, 16#e5, 16#00>>, 99)),
    ?assertEqual({error, huffman_eos}, H:decode(<<255, 255, 255, 255>>, 99)),
    ?assertEqual({error, huffman_too_long}, H:decode(H:encode(<<"abcdef">>), 3)).

%% What the encoder writes decodes back to the same list, the table untouched.
encode_test() ->
    Hs = [{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"https">>}, {<<":path">>, <<"/a/b">>},
          {<<":authority">>, <<"127.0.0.1:8443">>}, {<<"user-agent">>, <<"beamscale/0.1.0">>},
          {<<"x-custom">>, <<"v">>}],
    ?assertMatch({ok, Hs, #{size := 0}}, ?H:decode(?H:encode(Hs), ctx(4096))),
    ?assertEqual(<<16#82>>, ?H:encode([{<<":method">>, <<"GET">>}])).

%% A hostile peer: a table bigger than allowed, a size update after a field, a huge integer, a
%% header list past the limit, an index beyond the tables, a block cut short.
bounds_test() ->
    Err = fun(Bin, Ctx) -> {error, {?H, R}} = ?H:decode(Bin, Ctx), R end,
    ?assertEqual({table_size, 8192, 4096}, Err(<<2#00111111, 16#e1, 16#3f>>, ctx(4096))),
    ?assertEqual(late_size_update, Err(<<16#82, 2#00100000>>, ctx(4096))),
    ?assertEqual(integer_too_big, Err(<<16#ff, 255, 255, 255, 255, 255, 1>>, ctx(4096))),
    Big = binary:copy(<<"x">>, 100),
    Block = ?H:encode([{<<"x-a">>, Big}, {<<"x-b">>, Big}]),
    ?assertEqual(header_list_too_big, Err(Block, ?H:new({4096, 200}))),
    ?assertEqual({bad_index, 62}, Err(<<16#be>>, ctx(4096))),
    ?assertEqual(truncated, Err(<<16#40, 16#0a, "custom">>, ctx(4096))),
    ?assertEqual(zero_index, Err(<<16#80>>, ctx(4096))),
    %% Each reason its own words, not the catch-all's printed term.
    Text = fun(R) -> unicode:characters_to_binary(?H:format_error({?H, R})) end,
    ?assertEqual(<<"HPACK: integer above 2^28">>, Text(integer_too_big)),
    ?assertEqual(<<"HPACK: table size update to 1 above the 0 allowed">>,
                 Text({table_size, 1, 0})),
    ?assertEqual(<<"HPACK: truncated header block">>, Text(truncated)).
