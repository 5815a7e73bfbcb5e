%% MQTT 5.0 packets (`beamscale_load_mqtt_codec' with `beamscale_load_mqtt_v5'): round trips
%% of every packet with properties of every type, the standard's bytes, hostile property
%% lengths refused by name, and reason codes' names.
-module(beamscale_load_mqtt_v5_tests).

-include_lib("eunit/include/eunit.hrl").

-define(C, beamscale_load_mqtt_codec).
-define(MAX, 268435455).

round_trip(P) ->
    {ok, P1, <<"tail">>} = ?C:decode(iolist_to_binary([?C:encode(P), <<"tail">>]), ?MAX, 5),
    P1.

bytes(P) -> iolist_to_binary(?C:encode(P)).

%% One property of each type: byte, two and four bytes, variable, text, binary, pairs.
props() ->
    #{payload_format_indicator => 1, topic_alias => 3, message_expiry_interval => 60,
      subscription_identifier => [1, 300], content_type => <<"text/plain">>,
      correlation_data => <<0, 1, 2>>, user_property => [{<<"k">>, <<"v">>}, {<<"k">>, <<"w">>}]}.

round_trip_test_() ->
    Ack = fun(T) -> #{type => T, id => 5, reason_code => 16#10, properties => props()} end,
    Ps = [#{type => connect, version => 5, client_id => <<"c">>, keepalive_s => 30,
            clean => true, properties => #{session_expiry_interval => 0,
                                           receive_maximum => 10, topic_alias_maximum => 0}},
          #{type => connect, version => 5, client_id => <<>>, keepalive_s => 0, clean => false,
            user => <<"u">>, password => <<"p">>, properties => #{},
            will => #{topic => <<"w">>, message => <<"bye">>, qos => 1, retain => true,
                      properties => #{will_delay_interval => 5}}},
          #{type => connack, session_present => true, return_code => 0,
            properties => #{assigned_client_identifier => <<"auto-1">>, maximum_qos => 1}},
          #{type => publish, topic => <<"a/b">>, payload => <<"x">>, qos => 0, retain => false,
            dup => false, properties => props()},
          #{type => publish, topic => <<"a">>, payload => <<>>, qos => 2, retain => true,
            dup => true, id => 9, properties => #{}},
          Ack(puback), Ack(pubrec), Ack(pubrel), Ack(pubcomp),
          #{type => subscribe, id => 1, topics => [{<<"a/#">>, 1}], properties => #{}},
          #{type => suback, id => 1, codes => <<1, 16#87>>,
            properties => #{reason_string => <<"no">>}},
          #{type => unsubscribe, id => 2, topics => [<<"a/#">>, <<"b">>], properties => #{}},
          #{type => unsuback, id => 2, codes => <<0, 16#11>>, properties => #{}},
          #{type => disconnect, reason_code => 16#8E, properties => #{}},
          #{type => auth, reason_code => 16#18, properties => #{authentication_method => <<"m">>}},
          #{type => pingreq}, #{type => pingresp}],
    [?_assertEqual(P, round_trip(P)) || P <- Ps].

%% A 3.1.1 acknowledgement is a 5.0 success without properties (3.4.2.1); a CONNECT says its
%% own version.
short_forms_test_() ->
    [?_assertEqual({ok, #{type => puback, id => 7, reason_code => 0, properties => #{}}, <<>>},
                   ?C:decode(bytes(#{type => puback, id => 7}), ?MAX, 5)),
     ?_assertEqual({ok, #{type => pubrec, id => 7, reason_code => 16#87, properties => #{}},
                    <<>>}, ?C:decode(<<16#50, 3, 0, 7, 16#87>>, ?MAX, 5)),
     ?_assertEqual({ok, #{type => disconnect, reason_code => 0, properties => #{}}, <<>>},
                   ?C:decode(bytes(#{type => disconnect}), ?MAX, 5)),
     ?_assertMatch({ok, #{type := connect, version := 5}, <<>>},
                   ?C:decode(bytes(#{type => connect, version => 5, client_id => <<>>,
                                     keepalive_s => 1}), ?MAX, 4))].

%% The standard's CONNECT (3.1.2.1): protocol name, level 5, flags, keep alive, then the
%% properties (by name: receive maximum 0x21 two bytes, session expiry 0x11 four, topic alias
%% maximum 0x22 two: 11 bytes), then the client id.
known_bytes_test() ->
    B = bytes(#{type => connect, version => 5, client_id => <<"c">>, keepalive_s => 60,
                properties => #{session_expiry_interval => 10, receive_maximum => 20,
                                topic_alias_maximum => 0}}),
    ?assertEqual(<<16#10, 25, 0, 4, "MQTT", 5, 2, 0, 60,
                   11, 16#21, 0, 20, 16#11, 0, 0, 0, 10, 16#22, 0, 0,
                   0, 1, "c">>, B).

hostile_test_() ->
    D = fun(Bin) -> ?C:decode(Bin, 1024, 5) end,
    Err = fun(R) -> {error, {?C, R}} end,
    [%% PUBACK with properties announcing 268435455 bytes in a 7-byte packet.
     ?_assertEqual(Err({props_past_packet, puback, ?MAX, 0}),
                   D(<<16#40, 7, 0, 1, 16#80, 16#FF, 16#FF, 16#FF, 16#7F>>)),
     %% CONNACK's properties 10 bytes long, 2 there.
     ?_assertEqual(Err({props_past_packet, connack, 10, 2}),
                   D(<<16#20, 5, 0, 0, 10, 16#24, 1>>)),
     %% A PUBLISH whose properties would run past the packet into its payload's bound.
     ?_assertEqual(Err({props_past_packet, publish, 2000, 1}),
                   D(<<16#30, 6, 0, 1, "t", 16#D0, 16#0F, "x">>)),
     %% A property length of five bytes, an unknown property, a repeated one.
     ?_assertEqual(Err({malformed, suback}),
                   D(<<16#90, 8, 0, 1, 255, 255, 255, 255, 1, 0>>)),
     ?_assertEqual(Err({unknown_property, 16#05}), D(<<16#E0, 4, 0, 2, 16#05, 0>>)),
     ?_assertEqual(Err({repeated_property, maximum_qos}),
                   D(<<16#20, 7, 0, 0, 4, 16#24, 1, 16#24, 0>>)),
     %% A text inside the properties longer than they are: malformed, not read past them.
     ?_assertEqual(Err({malformed, disconnect}),
                   D(<<16#E0, 8, 16#8E, 4, 16#1F, 0, 200, "a", "tail">>)),
     %% The packet itself above the caller's bound: refused before its bytes.
     ?_assertEqual(Err({too_long, 2000}), D(<<16#30, 16#D0, 16#0F>>))].

names_test_() ->
    F = fun(R) -> lists:flatten(?C:format_error(R)) end,
    [?_assertEqual("PUBACK: not authorized (0x87)", F({reason, puback, 16#87})),
     ?_assertEqual("CONNACK: bad user name or password (0x86)", F({reason, connack, 16#86})),
     ?_assertEqual("SUBACK: unknown reason code (0xFF)", F({reason, suback, 16#FF})),
     ?_assertEqual("server DISCONNECT: session taken over (0x8E)", F({disconnected, 16#8E})),
     ?_assertEqual("server DISCONNECT: normal disconnection (0x00)", F({disconnected, 0})),
     ?_assertEqual("MQTT 5 puback properties' length 9 past the packet (bytes left: 2): "
                   "connection closed", F({props_past_packet, puback, 9, 2}))].

%% The kind's spec: version 5's CONNECT properties, 5.0 keys refused on 3.1.1.
spec_test_() ->
    T = #{host => "h", port => 1},
    C = fun(S) -> beamscale_load_mqtt:check(S, T) end,
    [?_assertMatch({ok, #{version := 5,
                          properties := #{session_expiry_interval := 16#FFFFFFFF,
                                          receive_maximum := 65535,
                                          topic_alias_maximum := 0}}},
                   C(#{type => connect, version => 5, clean => false})),
     ?_assertMatch({ok, #{properties := #{session_expiry_interval := 30,
                                          receive_maximum := 4}}},
                   C(#{type => connect, version => 5, session_expiry_s => 30,
                       receive_maximum => 4})),
     ?_assertEqual({error, session_expiry_s, "an MQTT 5 setting: needs version => 5"},
                   C(#{type => connect, session_expiry_s => 30})),
     ?_assertEqual({error, version, "expected 4 (MQTT 3.1.1) or 5 (MQTT 5.0)"},
                   C(#{type => connect, version => 3})),
     ?_assertEqual({error, receive_maximum, "expected 1 to 65535"},
                   C(#{type => connect, version => 5, receive_maximum => 0})),
     ?_assertMatch({ok, #{properties := #{user_property := [{<<"a">>, <<"b">>}]}}},
                   C(#{type => publish, topic => <<"t">>, user_properties => [{"a", "b"}]})),
     ?_assertEqual({error, user_properties, "expected [{Key, Value}] strings"},
                   C(#{type => publish, topic => <<"t">>, user_properties => [a]}))].
