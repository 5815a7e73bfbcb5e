%% WebSocket frames: RFC 6455's own examples, the errors a client must fail on, and PropEr: any
%% frames a server sends decode back, whatever the split points of the byte stream.
-module(beamscale_load_ws_frame_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(MAX, 1 bsl 20).

%% RFC 6455, 5.7: "Hello" unmasked from a server, masked from a client with key 37 fa 21 3d.
rfc_examples_test() ->
    ?assertEqual({ok, #{fin => true, opcode => text, payload => <<"Hello">>}, <<>>},
                 beamscale_load_ws_frame:decode(<<16#81, 16#05, "Hello">>, ?MAX)),
    ?assertEqual(<<16#81, 16#85, 16#37, 16#fa, 16#21, 16#3d, 16#7f, 16#9f, 16#4d, 16#51, 16#58>>,
                 iolist_to_binary(beamscale_load_ws_frame:encode({text, true}, <<"Hello">>,
                                                                 <<16#37, 16#fa, 16#21, 16#3d>>))),
    %% A fragmented "Hel" "lo".
    {ok, #{fin := false, opcode := text, payload := <<"Hel">>}, Rest}
        = beamscale_load_ws_frame:decode(<<16#01, 16#03, "Hel", 16#80, 16#02, "lo">>, ?MAX),
    ?assertMatch({ok, #{fin := true, opcode := continuation, payload := <<"lo">>}, <<>>},
                 beamscale_load_ws_frame:decode(Rest, ?MAX)),
    %% 256 bytes and 64 KiB: the 16-bit and 64-bit length forms.
    ?assertMatch({ok, #{payload := <<_:256/binary>>}, <<>>},
                 beamscale_load_ws_frame:decode(<<16#82, 126, 256:16, 0:2048>>, ?MAX)),
    ?assertMatch({ok, #{payload := <<_:65536/binary>>}, <<>>},
                 beamscale_load_ws_frame:decode(<<16#82, 127, 65536:64, 0:524288>>, ?MAX)).

%% RFC 6455, 1.3: the accept value of the sample key.
accept_test() ->
    ?assertEqual(<<"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=">>,
                 beamscale_load_ws_frame:accept(<<"dGhlIHNhbXBsZSBub25jZQ==">>)).

errors_test_() ->
    D = fun(B) -> beamscale_load_ws_frame:decode(B, 100) end,
    [?_assertEqual({error, masked_server_frame}, D(<<16#81, 16#85, 1, 2, 3, 4, "Hello">>)),
     ?_assertEqual({error, {rsv_bits, 4}}, D(<<16#C1, 0>>)),
     ?_assertEqual({error, {reserved_opcode, 3}}, D(<<16#83, 0>>)),
     ?_assertEqual({error, {frame_too_big, 101}}, D(<<16#82, 101, 0:808>>)),
     %% A huge length is refused from its header, before any payload arrives.
     ?_assertEqual({error, {frame_too_big, 1 bsl 62}}, D(<<16#82, 127, (1 bsl 62):64>>)),
     ?_assertEqual({error, {bad_control_frame, ping}}, D(<<16#09, 0>>)),
     ?_assertEqual({error, {bad_control_frame, close}},
                   beamscale_load_ws_frame:decode(<<16#88, 126, 126:16>>, ?MAX)),
     ?_assertEqual(more, D(<<16#81>>)),
     ?_assertEqual(more, D(<<16#81, 126, 0>>)),
     ?_assertEqual(more, D(<<16#81, 5, "Hel">>))].

mask_test() ->
    Key = <<1, 2, 3, 4>>,
    Data = <<"any bytes of an odd length">>,
    ?assertNotEqual(Data, beamscale_load_ws_frame:mask(Data, Key)),
    ?assertEqual(Data, beamscale_load_ws_frame:mask(beamscale_load_ws_frame:mask(Data, Key), Key)).

%% ---- properties ----

properties_test_() ->
    {timeout, 120, fun properties/0}.

properties() ->
    ?assert(proper:quickcheck(prop_stream_round_trip(), [{numtests, 300}, {to_file, user}])),
    ?assert(proper:quickcheck(prop_client_frame(), [{numtests, 300}, {to_file, user}])).

frame() ->
    ?LET({Op, Fin, P},
         oneof([{oneof([text, binary, continuation]), boolean(), payload()},
                {oneof([ping, pong, close]), true,
                  ?LET(B, binary(), binary:part(B, 0, min(125, byte_size(B))))}]),
         #{opcode => Op, fin => Fin, payload => P}).

%% Mostly short payloads, some across the 125 and 65535 length boundaries (the long ones of one
%% repeated random byte: PropEr builds random binaries byte by byte, slowly).
payload() ->
    frequency([{8, binary()}, {3, ?LET(N, integer(120, 300), binary(N))},
               {1, ?LET({N, B}, {integer(65530, 65540), byte()}, binary:copy(<<B>>, N))}]).

%% A server's frame: unmasked.
server_bytes(#{opcode := Op, fin := Fin, payload := P}) ->
    Client = iolist_to_binary(beamscale_load_ws_frame:encode({Op, Fin}, P, <<0:32>>)),
    unmask_bit(Client).

unmask_bit(<<H:8, 1:1, Len:7, Rest/binary>>) ->
    {Ext, <<0:32, Payload/binary>>} = case Len of
                                          126 -> split_binary(Rest, 2);
                                          127 -> split_binary(Rest, 8);
                                          _ -> {<<>>, Rest}
                                      end,
    <<H:8, 0:1, Len:7, Ext/binary, Payload/binary>>.

%% The frames' bytes cut at arbitrary points and fed piece by piece decode to the same frames.
prop_stream_round_trip() ->
    ?FORALL({Frames, Cuts}, {list(frame()), list(integer(0, 70000))},
            begin
                Bytes = iolist_to_binary([server_bytes(F) || F <- Frames]),
                Pieces = cut(Bytes, lists:usort([C || C <- Cuts, C < byte_size(Bytes)])),
                decode_stream(Pieces, <<>>, []) =:= Frames
            end).

cut(Bytes, Cuts) -> cut(Bytes, Cuts, 0).

cut(Bytes, [], At) -> [binary:part(Bytes, At, byte_size(Bytes) - At)];
cut(Bytes, [C | Cs], At) -> [binary:part(Bytes, At, C - At) | cut(Bytes, Cs, C)].

decode_stream([], <<>>, Acc) -> lists:reverse(Acc);
decode_stream([], Buf, Acc) -> {left_over, Buf, lists:reverse(Acc)};
decode_stream([P | Ps], Buf, Acc) -> frames(Ps, <<Buf/binary, P/binary>>, Acc).

frames(Ps, Buf, Acc) ->
    case beamscale_load_ws_frame:decode(Buf, ?MAX) of
        {ok, F, Rest} -> frames(Ps, Rest, [F | Acc]);
        more -> decode_stream(Ps, Buf, Acc);
        {error, _} = E -> E
    end.

%% A client frame carries the mask bit and the key, and unmasking gives the payload back.
prop_client_frame() ->
    ?FORALL({F, Key}, {frame(), binary(4)},
            begin
                #{opcode := Op, fin := Fin, payload := P} = F,
                B = iolist_to_binary(beamscale_load_ws_frame:encode({Op, Fin}, P, Key)),
                <<_:8, 1:1, _/bitstring>> = B,
                Masked = binary:part(B, byte_size(B) - byte_size(P), byte_size(P)),
                <<_:(byte_size(B) - byte_size(P) - 4)/binary, Key:4/binary, _/binary>> = B,
                beamscale_load_ws_frame:mask(Masked, Key) =:= P
            end).
