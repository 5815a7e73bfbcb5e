-module(beamscale_load_amqp_codec_tests).

-include_lib("eunit/include/eunit.hrl").

-define(C, beamscale_load_amqp_codec).

%% A frame as a broker sends it.
frame(Type, Ch, Payload) ->
    <<Type, Ch:16, (byte_size(Payload)):32, Payload/binary, 16#CE>>.

all_frames(Bin, Max) ->
    case ?C:decode(Bin, Max) of
        {ok, F, Rest} -> [F | all_frames(Rest, Max)];
        more -> []
    end.

known_bytes_test_() ->
    [?_assertEqual(<<"AMQP", 0, 0, 9, 1>>, ?C:protocol_header()),
     ?_assertEqual(<<8, 0, 0, 0, 0, 0, 0, 16#CE>>, ?C:heartbeat()),
     %% channel.open on channel 3: class 20, method 10, an empty short string.
     ?_assertEqual(frame(1, 3, <<20:16, 10:16, 0>>),
                   iolist_to_binary(?C:method(3, 'channel.open', #{}))),
     %% queue.declare's bits, low first: durable (2nd) and auto-delete (4th).
     ?_assertEqual(frame(1, 1, <<50:16, 10:16, 0:16, 1, "q", 2#01010, 0:32>>),
                   iolist_to_binary(?C:method(1, 'queue.declare',
                                              #{queue => <<"q">>, durable => true,
                                                exclusive => false, auto_delete => true})))].

server_methods_test_() ->
    Tune = frame(1, 0, <<10:16, 30:16, 2047:16, 131072:32, 60:16>>),
    Close = frame(1, 0, <<10:16, 50:16, 320:16, 4, "gone", 0:16, 0:16>>),
    Unknown = frame(1, 2, <<99:16, 1:16, "x">>),
    [?_assertEqual({ok, {method, 0, 'connection.tune',
                         #{channel_max => 2047, frame_max => 131072, heartbeat => 60}}, <<>>},
                   ?C:decode(Tune, 4096)),
     ?_assertEqual({ok, {method, 0, 'connection.close',
                         #{code => 320, text => <<"gone">>, method => {0, 0}}}, <<>>},
                   ?C:decode(Close, 4096)),
     %% A method not in the table: numbers, no atom made.
     ?_assertEqual({ok, {method, 2, {99, 1}, #{}}, <<>>}, ?C:decode(Unknown, 4096)),
     ?_assertEqual({ok, heartbeat, <<"x">>}, ?C:decode(<<(?C:heartbeat())/binary, "x">>, 8))].

content_split_test() ->
    Body = binary:copy(<<"ab">>, 150),
    Bin = iolist_to_binary(?C:content(1, Body, true, 108, [])),
    [{header, 1, 300, #{flags := 16#1000, properties := <<2>>}} | Bodies] =
        all_frames(Bin, 108),
    ?assertEqual([100, 100, 100], [byte_size(B) || {body, 1, B} <- Bodies]),
    ?assertEqual(Body, iolist_to_binary([B || {body, 1, B} <- Bodies])).

incomplete_test_() ->
    B = frame(3, 1, binary:copy(<<0>>, 50)),
    [?_assertEqual(more, ?C:decode(binary:part(B, 0, N), 4096))
     || N <- [0, 1, 6, 7, byte_size(B) - 1]].

hostile_test_() ->
    [%% 1 GiB announced in the 7-byte header: refused before any of it comes.
     ?_assertEqual({error, {?C, {frame_too_big, (1 bsl 30) + 8, 4096}}},
                   ?C:decode(<<1, 0:16, (1 bsl 30):32>>, 4096)),
     ?_assertEqual({error, {?C, bad_frame_end}}, ?C:decode(<<8, 0:16, 0:32, 0>>, 4096)),
     ?_assertEqual({error, {?C, protocol_refused}}, ?C:decode(<<"AMQP", 0, 0, 9, 1>>, 4096)),
     ?_assertEqual({error, {?C, {malformed, 1}}}, ?C:decode(frame(1, 0, <<10:16>>), 4096)),
     ?_assertEqual("404 not-found" , "404 " ++ ?C:reply_text(404)),
     ?_assertEqual("999", ?C:reply_text(999))].

%% A publish encoded once per spec (`wire') sends the bytes the per-publish encoding sends.
publish_wire_test_() ->
    Check = fun(Spec) ->
                    {ok, S} = beamscale_load_amqp_spec:check(
                                Spec#{type => 'basic.publish', routing_key => <<"q">>},
                                #{host => "h", port => 1}),
                    S
            end,
    Stamp = <<"bs", 0, "t", 1234:64>>,
    Slow = fun(S, Body) -> iolist_to_binary(?C:content(1, Body, maps:get(persistent, S), 4096,
                                                       ?C:method(1, 'basic.publish', S)))
           end,
    Fast = fun(#{wire := {H, St, T}}) -> iolist_to_binary([H, [Stamp || St] | T]) end,
    Sized = Check(#{size => 100, persistent => true}),
    Given = Check(#{payload => <<"hello">>, stamp => true}),
    Plain = Check(#{payload => <<"hello">>}),
    [?_assertEqual(Slow(Sized, <<Stamp/binary, 0:(88 * 8)>>), Fast(Sized)),
     ?_assertEqual(Slow(Given, <<Stamp/binary, "hello">>), Fast(Given)),
     ?_assertEqual(Slow(Plain, <<"hello">>), Fast(Plain)),
     %% A body above one frame of the smallest frame-max, or none: encoded per publish.
     ?_assertNot(is_map_key(wire, Check(#{size => 5000}))),
     ?_assertNot(is_map_key(wire, Check(#{payload => <<>>})))].
