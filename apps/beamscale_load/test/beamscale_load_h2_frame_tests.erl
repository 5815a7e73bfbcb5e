%% HTTP/2 frames: each type encoded and decoded back, a block split into CONTINUATIONs, frames
%% split at every byte, and the malformed frames a client must refuse (RFC 9113, 4 and 6).
-module(beamscale_load_h2_frame_tests).

-include_lib("eunit/include/eunit.hrl").

-define(F, beamscale_load_h2_frame).
-define(MAX, 16384).

dec(IoData) -> ?F:decode(iolist_to_binary(IoData), ?MAX).

round_trip_test() ->
    ?assertEqual({ok, {settings, [{3, 100}, {4, 65535}]}, <<>>},
                 dec(?F:settings([{3, 100}, {4, 65535}]))),
    ?assertEqual({ok, settings_ack, <<>>}, dec(?F:settings_ack())),
    ?assertEqual({ok, {ping, <<"12345678">>}, <<>>}, dec(?F:ping(false, <<"12345678">>))),
    ?assertEqual({ok, {ping_ack, <<"12345678">>}, <<>>}, dec(?F:ping(true, <<"12345678">>))),
    ?assertEqual({ok, {data, 3, true, <<"body">>, 4}, <<>>}, dec(?F:data(3, <<"body">>, true))),
    ?assertEqual({ok, {window_update, 0, 1000}, <<>>}, dec(?F:window_update(0, 1000))),
    ?assertEqual({ok, {rst_stream, 5, 8}, <<>>}, dec(?F:rst_stream(5, 8))),
    ?assertEqual({ok, {goaway, 7, 0, <<>>}, <<>>}, dec(?F:goaway(7, 0))),
    ?assertEqual({ok, {headers, 1, true, true, <<16#82>>}, <<>>},
                 dec(?F:headers(1, <<16#82>>, true, ?MAX))).

%% The RFC's own layout: SETTINGS_INITIAL_WINDOW_SIZE 65535 is 00 00 06 04 00 00 00 00 00 00 04
%% 00 00 ff ff; the preface is 24 octets.
bytes_test() ->
    ?assertEqual(<<0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 4, 0, 0, 255, 255>>,
                 iolist_to_binary(?F:settings([{4, 65535}]))),
    ?assertEqual(24, byte_size(?F:preface())).

continuation_test() ->
    Block = binary:copy(<<"a">>, 25),
    {ok, {headers, 1, false, false, <<_:10/binary>>}, R1} = dec(?F:headers(1, Block, false, 10)),
    {ok, {continuation, 1, false, <<_:10/binary>>}, R2} = ?F:decode(R1, ?MAX),
    ?assertEqual({ok, {continuation, 1, true, <<"aaaaa">>}, <<>>}, ?F:decode(R2, ?MAX)).

%% Padded and prioritised frames as servers may send them.
padded_test() ->
    ?assertEqual({ok, {data, 1, false, <<"ab">>, 6}, <<>>},
                 ?F:decode(<<0, 0, 6, 0, 16#8, 0, 0, 0, 1, 3, "ab", 0, 0, 0>>, ?MAX)),
    ?assertEqual({ok, {headers, 1, false, true, <<16#88>>}, <<>>},
                 ?F:decode(<<0, 0, 6, 1, 16#24, 0, 0, 0, 1, 0, 0, 0, 0, 16, 16#88>>, ?MAX)).

%% Any split of a run of frames: `more' until each is whole.
split_test() ->
    All = iolist_to_binary([?F:settings([{3, 1}]), ?F:ping(false, <<"abcdefgh">>),
                            ?F:data(1, <<"xyz">>, true)]),
    [?assertEqual(more, ?F:decode(binary:part(All, 0, N), ?MAX)) || N <- lists:seq(0, 14)],
    {ok, _, R1} = ?F:decode(All, ?MAX),
    {ok, {ping, _}, R2} = ?F:decode(R1, ?MAX),
    ?assertMatch({ok, {data, 1, true, <<"xyz">>, 3}, <<>>}, ?F:decode(R2, ?MAX)).

bad_test() ->
    Err = fun(B) -> {error, {?F, R}} = ?F:decode(B, ?MAX), R end,
    %% A length above the maximum fails from the header alone.
    ?assertEqual({frame_size, 16385}, Err(<<0, 64, 1, 0, 0, 0, 0, 0, 1>>)),
    ?assertEqual(padding, Err(<<0, 0, 2, 0, 16#8, 0, 0, 0, 1, 9, 0>>)),
    ?assertEqual({stream_zero, data}, Err(<<0, 0, 0, 0, 0, 0, 0, 0, 0>>)),
    ?assertEqual({bad_length, settings}, Err(<<0, 0, 5, 4, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5>>)),
    ?assertEqual({bad_length, ping}, Err(<<0, 0, 1, 6, 0, 0, 0, 0, 0, 1>>)),
    ?assertEqual({ok, {unknown, 42}, <<>>}, ?F:decode(<<0, 0, 1, 42, 0, 0, 0, 0, 1, 0>>, ?MAX)),
    ?assertEqual(enhance_your_calm, ?F:error_name(11)),
    ?assertEqual(<<"HTTP/2 frame of 1 bytes above our SETTINGS_MAX_FRAME_SIZE">>,
                 unicode:characters_to_binary(?F:format_error({frame_size, 1}))).
