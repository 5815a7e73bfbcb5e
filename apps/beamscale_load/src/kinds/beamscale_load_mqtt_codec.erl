%% @doc MQTT 3.1.1 packets (OASIS standard, 2014; QoS 0, 1 and 2) and MQTT 5.0's, pure: terms
%% to bytes and back, both ways for every packet the `mqtt' kind sends or reads (a test broker
%% decodes what a client encodes).
%% MQTT 5.0 (`beamscale_load_mqtt_v5'): a packet with `properties' (a CONNECT with `version => 5')
%% is encoded in 5.0's layout, and `decode/3' with version 5 reads 5.0's, with its properties
%% and `reason_code'. An acknowledgement without them is the same bytes in both.
%% A packet is a map with `type'; `decode/2' refuses a remaining length above MQTT's own bound
%% (268435455) or the caller's (the target's `max_reply_bytes') before any of its bytes arrive,
%% so a hostile length costs nothing to hold.
-module(beamscale_load_mqtt_codec).

-export([encode/1, encode/2, publish_v4/5, decode/2, decode/3, max_length/0, format_error/1]).
-export_type([packet/0]).

-type packet() :: #{type := atom(), _ => _}.

-define(V5, beamscale_load_mqtt_v5).

-define(MAX_LENGTH, 268435455).
-define(CONNECT, 1).
-define(CONNACK, 2).
-define(PUBLISH, 3).
-define(PUBACK, 4).
-define(PUBREC, 5).
-define(PUBREL, 6).
-define(PUBCOMP, 7).
-define(SUBSCRIBE, 8).
-define(SUBACK, 9).
-define(UNSUBSCRIBE, 10).
-define(UNSUBACK, 11).
-define(PINGREQ, 12).
-define(PINGRESP, 13).
-define(DISCONNECT, 14).
-define(AUTH, 15).

%% @doc MQTT's largest remaining length.
-spec max_length() -> pos_integer().
max_length() -> ?MAX_LENGTH.

%% @doc A packet's bytes.
-spec encode(packet()) -> iodata().
encode(#{type := connect, client_id := Id, keepalive_s := Keep} = P) ->
    Will = maps:get(will, P, undefined),
    User = maps:get(user, P, undefined),
    Pass = maps:get(password, P, undefined),
    Flags = flag(User, 16#80) bor flag(Pass, 16#40) bor will_flags(Will)
        bor case maps:get(clean, P, true) of true -> 16#02; false -> 0 end,
    V = maps:get(version, P, 4),
    Props = case V of 4 -> []; 5 -> ?V5:props(maps:get(properties, P, #{})) end,
    Payload = [str(Id), will_payload(Will, V), opt_str(User), opt_str(Pass)],
    packet(?CONNECT, 0, [str(<<"MQTT">>), V, Flags, <<Keep:16>>, Props, Payload]);
encode(#{type := connack, return_code := Rc} = P) ->
    Sp = case maps:get(session_present, P, false) of true -> 1; false -> 0 end,
    packet(?CONNACK, 0, [<<Sp, Rc>>, props(P)]);
encode(#{type := publish, topic := T, payload := Pl, qos := Q} = P) ->
    Flags = (Q bsl 1) bor flag(maps:get(retain, P, false), 1)
        bor flag(maps:get(dup, P, false), 8),
    Id = case Q of 0 -> <<>>; _ -> <<(maps:get(id, P)):16>> end,
    packet(?PUBLISH, Flags, [str(T), Id, props(P), Pl]);
%% An acknowledgement, DISCONNECT or AUTH with a reason code: MQTT 5.0's layout.
encode(#{type := Type, reason_code := Rc} = P) ->
    {Code, Flags, Id} = ack_head(Type, P),
    packet(Code, Flags, [Id, Rc, ?V5:props(maps:get(properties, P, #{}))]);
encode(#{type := puback, id := Id}) -> packet(?PUBACK, 0, <<Id:16>>);
encode(#{type := pubrec, id := Id}) -> packet(?PUBREC, 0, <<Id:16>>);
%% PUBREL's flags are 0010 (MQTT 3.1.1, 3.6.1).
encode(#{type := pubrel, id := Id}) -> packet(?PUBREL, 2, <<Id:16>>);
encode(#{type := pubcomp, id := Id}) -> packet(?PUBCOMP, 0, <<Id:16>>);
encode(#{type := subscribe, id := Id, topics := Ts} = P) ->
    packet(?SUBSCRIBE, 2, [<<Id:16>>, props(P) | [[str(T), Q] || {T, Q} <- Ts]]);
encode(#{type := suback, id := Id, codes := Cs} = P) ->
    packet(?SUBACK, 0, [<<Id:16>>, props(P), Cs]);
encode(#{type := unsubscribe, id := Id, topics := Ts} = P) ->
    packet(?UNSUBSCRIBE, 2, [<<Id:16>>, props(P) | [str(T) || T <- Ts]]);
encode(#{type := unsuback, id := Id} = P) ->
    packet(?UNSUBACK, 0, [<<Id:16>>, props(P), maps:get(codes, P, <<>>)]);
encode(#{type := pingreq}) -> packet(?PINGREQ, 0, <<>>);
encode(#{type := pingresp}) -> packet(?PINGRESP, 0, <<>>);
encode(#{type := disconnect}) -> packet(?DISCONNECT, 0, <<>>).

%% @doc `encode/1' on a session of protocol level `Version' (`false' before CONNACK): a 3.1.1
%% publish of every field (a client's, once per message) built by `publish_v4/5'.
-spec encode(packet(), false | 4 | 5) -> iodata().
encode(#{type := publish, topic := T, payload := Pl, qos := Q, retain := R} = P, 4) ->
    publish_v4(T, Pl, Q, R, maps:get(id, P, 0));
encode(Packet, _Version) -> encode(Packet).

%% @doc An MQTT 3.1.1 PUBLISH (not a duplicate) of binaries: `encode/1''s bytes, built with
%% no walk of the packet to size it (a client's publish, once per message).
-spec publish_v4(binary(), binary(), 0..2, boolean(), 0..65535) -> iodata().
publish_v4(T, Pl, Q, Retain, Id) when is_binary(T), is_binary(Pl) ->
    TLen = byte_size(T),
    {IdBytes, Len} = case Q of
                         0 -> {<<>>, 2 + TLen + byte_size(Pl)};
                         _ -> {<<Id:16>>, 4 + TLen + byte_size(Pl)}
                     end,
    [<<?PUBLISH:4, (Q bsl 1 bor flag(Retain, 1)):4>>, length_bytes(Len), <<TLen:16>>, T,
     IdBytes, Pl];
publish_v4(T, Pl, Q, Retain, Id) ->
    publish_v4(iolist_to_binary(T), iolist_to_binary(Pl), Q, Retain, Id).

flag(undefined, _) -> 0;
flag(false, _) -> 0;
flag(_, Bit) -> Bit.

will_flags(undefined) -> 0;
will_flags(#{qos := Q} = W) ->
    16#04 bor (Q bsl 3) bor flag(maps:get(retain, W, false), 16#20).

will_payload(undefined, _V) -> [];
will_payload(#{topic := T, message := M}, 4) -> [str(T), str(M)];
will_payload(#{topic := T, message := M} = W, 5) ->
    [?V5:props(maps:get(properties, W, #{})), str(T), str(M)].

%% MQTT 5.0's properties of a packet that has them; none in 3.1.1.
props(#{properties := Props}) -> ?V5:props(Props);
props(_P) -> [].

ack_head(puback, #{id := Id}) -> {?PUBACK, 0, <<Id:16>>};
ack_head(pubrec, #{id := Id}) -> {?PUBREC, 0, <<Id:16>>};
ack_head(pubrel, #{id := Id}) -> {?PUBREL, 2, <<Id:16>>};
ack_head(pubcomp, #{id := Id}) -> {?PUBCOMP, 0, <<Id:16>>};
ack_head(disconnect, _P) -> {?DISCONNECT, 0, <<>>};
ack_head(auth, _P) -> {?AUTH, 0, <<>>}.

opt_str(undefined) -> [];
opt_str(S) -> str(S).

str(S) ->
    B = iolist_to_binary(S),
    [<<(byte_size(B)):16>>, B].

packet(Type, Flags, Body) ->
    [<<Type:4, Flags:4>>, length_bytes(iolist_size(Body)), Body].

%% The remaining length: 7 bits a byte, low first, the top bit saying more follow.
length_bytes(N) when N < 128 -> <<N>>;
length_bytes(N) -> [<<(128 bor (N band 127))>>, length_bytes(N bsr 7)].

%% @doc The first MQTT 3.1.1 packet of `Bin' (`decode/3').
-spec decode(binary(), pos_integer()) ->
    {ok, packet(), binary()} | more | {error, {?MODULE, term()}}.
decode(Bin, Max) -> decode(Bin, Max, 4).

%% @doc The first packet of `Bin' in MQTT `Version' (4: 3.1.1, 5: 5.0; a CONNECT says its own):
%% `{ok, Packet, Rest}', `more' (incomplete), or an error for a length above `Max' (or MQTT's
%% bound), properties past their packet, or bytes that are not an MQTT packet.
-spec decode(binary(), pos_integer(), 4 | 5) ->
    {ok, packet(), binary()} | more | {error, {?MODULE, term()}}.
decode(<<H, Rest/binary>>, Max, V) ->
    case remaining_length(Rest, 0, 0) of
        more -> more;
        {error, _} = E -> E;
        {ok, Len, _} when Len > Max; Len > ?MAX_LENGTH -> {error, {?MODULE, {too_long, Len}}};
        {ok, Len, More} when byte_size(More) < Len -> more;
        {ok, Len, More} ->
            <<Body:Len/binary, Tail/binary>> = More,
            try body(V, H bsr 4, H band 15, Body) of
                P -> {ok, P, Tail}
            catch
                throw:{?V5, R} -> {error, {?MODULE, R}};
                error:_ -> {error, {?MODULE, {malformed, type_name(H bsr 4)}}}
            end
    end;
decode(<<>>, _Max, _V) -> more.

%% At most four length bytes (MQTT 3.1.1, 2.2.3): a fifth is a malformed packet.
remaining_length(_, 4, _) -> {error, {?MODULE, bad_length}};
remaining_length(<<1:1, D:7, Rest/binary>>, I, Acc) ->
    remaining_length(Rest, I + 1, Acc bor (D bsl (7 * I)));
remaining_length(<<0:1, D:7, Rest/binary>>, I, Acc) -> {ok, Acc bor (D bsl (7 * I)), Rest};
remaining_length(<<>>, _, _) -> more.

%% MQTT 5.0's packets: those without properties are read as 3.1.1's.
body(4, Type, Flags, Body) -> body(Type, Flags, Body);
body(5, ?CONNACK, 0, <<0:7, Sp:1, Rc, Rest/binary>>) ->
    {Props, <<>>} = ?V5:take_props(Rest, connack),
    #{type => connack, session_present => Sp =:= 1, return_code => Rc, properties => Props};
body(5, ?PUBLISH, Flags, Body) ->
    P = #{payload := Rest} = body(?PUBLISH, Flags, Body),
    {Props, Payload} = ?V5:take_props(Rest, publish),
    P#{payload := Payload, properties => Props};
body(5, Type, Flags, <<Id:16, Rest/binary>>) when Type >= ?PUBACK, Type =< ?PUBCOMP ->
    reason(Rest, body(Type, Flags, <<Id:16>>));
body(5, Type, Flags, <<Id:16, Rest/binary>>) when Type >= ?SUBSCRIBE, Type =< ?UNSUBACK ->
    {Props, R1} = ?V5:take_props(Rest, type_name(Type)),
    case Type of
        ?UNSUBACK when Flags =:= 0 -> #{type => unsuback, id => Id, codes => R1,
                                        properties => Props};
        _ -> (body(Type, Flags, <<Id:16, R1/binary>>))#{properties => Props}
    end;
body(5, ?DISCONNECT, 0, Body) -> reason(Body, #{type => disconnect});
body(5, ?AUTH, 0, Body) -> reason(Body, #{type => auth});
body(5, Type, Flags, Body) -> body(Type, Flags, Body).

%% A reason code and properties, both left out when 0 and none (MQTT 5.0, 3.4.2.1).
reason(<<>>, P) -> P#{reason_code => 0, properties => #{}};
reason(<<Rc>>, P) -> P#{reason_code => Rc, properties => #{}};
reason(<<Rc, Rest/binary>>, P) ->
    {Props, <<>>} = ?V5:take_props(Rest, maps:get(type, P)),
    P#{reason_code => Rc, properties => Props}.

body(?CONNECT, 0, <<4:16, "MQTT", V, Flags, Keep:16, Rest/binary>>) when V =:= 4; V =:= 5 ->
    {Props, R0} = case V of 4 -> {undefined, Rest}; 5 -> ?V5:take_props(Rest, connect) end,
    {Id, R1} = take_str(R0),
    {Will, R2} = take_will(V, Flags, R1),
    {User, R3} = take_opt(Flags band 16#80, R2),
    {Pass, <<>>} = take_opt(Flags band 16#40, R3),
    maps:filter(fun(_, X) -> X =/= undefined end,
                #{type => connect, client_id => Id, keepalive_s => Keep,
                  clean => Flags band 2 =/= 0, will => Will, user => User, password => Pass,
                  version => case V of 5 -> 5; 4 -> undefined end, properties => Props});
body(?CONNACK, 0, <<0:7, Sp:1, Rc>>) ->
    #{type => connack, session_present => Sp =:= 1, return_code => Rc};
body(?PUBLISH, Flags, Body) ->
    Q = (Flags bsr 1) band 3,
    true = Q =< 2,
    {Topic, R1} = take_str(Body),
    {Id, Payload} = case Q of
                        0 -> {undefined, R1};
                        _ -> <<I:16, P/binary>> = R1, {I, P}
                    end,
    P0 = #{type => publish, topic => Topic, payload => Payload, qos => Q,
           retain => Flags band 1 =:= 1, dup => Flags band 8 =:= 8},
    case Id of undefined -> P0; _ -> P0#{id => Id} end;
body(?PUBACK, 0, <<Id:16>>) -> #{type => puback, id => Id};
body(?PUBREC, 0, <<Id:16>>) -> #{type => pubrec, id => Id};
body(?PUBREL, 2, <<Id:16>>) -> #{type => pubrel, id => Id};
body(?PUBCOMP, 0, <<Id:16>>) -> #{type => pubcomp, id => Id};
body(?SUBSCRIBE, 2, <<Id:16, Rest/binary>>) ->
    #{type => subscribe, id => Id, topics => filters(Rest)};
body(?SUBACK, 0, <<Id:16, Codes/binary>>) -> #{type => suback, id => Id, codes => Codes};
body(?UNSUBSCRIBE, 2, <<Id:16, Rest/binary>>) ->
    #{type => unsubscribe, id => Id, topics => strs(Rest)};
body(?UNSUBACK, 0, <<Id:16>>) -> #{type => unsuback, id => Id};
body(?PINGREQ, 0, <<>>) -> #{type => pingreq};
body(?PINGRESP, 0, <<>>) -> #{type => pingresp};
body(?DISCONNECT, 0, <<>>) -> #{type => disconnect}.

take_str(<<N:16, S:N/binary, Rest/binary>>) -> {S, Rest}.

take_opt(0, Bin) -> {undefined, Bin};
take_opt(_, Bin) -> take_str(Bin).

take_will(_V, Flags, Bin) when Flags band 4 =:= 0 -> {undefined, Bin};
take_will(4, Flags, Bin) ->
    {T, R1} = take_str(Bin),
    {M, R2} = take_str(R1),
    {#{topic => T, message => M, qos => (Flags bsr 3) band 3,
       retain => Flags band 16#20 =/= 0}, R2};
take_will(5, Flags, Bin) ->
    {Props, R1} = ?V5:take_props(Bin, will),
    {W, R2} = take_will(4, Flags, R1),
    {W#{properties => Props}, R2}.

filters(<<>>) -> [];
filters(Bin) ->
    {T, <<Q, Rest/binary>>} = take_str(Bin),
    [{T, Q} | filters(Rest)].

strs(<<>>) -> [];
strs(Bin) ->
    {T, Rest} = take_str(Bin),
    [T | strs(Rest)].

type_name(T) ->
    element(T + 1, {reserved, connect, connack, publish, puback, pubrec, pubrel, pubcomp,
                    subscribe, suback, unsubscribe, unsuback, pingreq, pingresp, disconnect,
                    auth}).

%% @doc The text of a codec's reason (never the bytes received).
-spec format_error(term()) -> iodata().
format_error({too_long, Len}) ->
    io_lib:format("MQTT packet's remaining length ~b above the bound: connection closed", [Len]);
format_error(bad_length) -> "malformed MQTT remaining length (more than 4 bytes)";
format_error({malformed, Type}) -> io_lib:format("malformed MQTT ~ts packet", [Type]);
format_error(Other) -> ?V5:format_error(Other).

-ifdef(TEST).
-include_lib("eunit/include/eunit.hrl").

round_trip(P) ->
    {ok, P1, <<"tail">>} = decode(iolist_to_binary([encode(P), <<"tail">>]), ?MAX_LENGTH),
    P1.

round_trip_test_() ->
    Ps = [#{type => connect, client_id => <<"c1">>, keepalive_s => 30, clean => true},
          #{type => connect, client_id => <<>>, keepalive_s => 0, clean => false,
            user => <<"u">>, password => <<"p">>,
            will => #{topic => <<"w">>, message => <<"bye">>, qos => 1, retain => true}},
          #{type => connack, session_present => false, return_code => 0},
          #{type => publish, topic => <<"a/b">>, payload => <<"x">>, qos => 0,
            retain => true, dup => false},
          #{type => publish, topic => <<"a">>, payload => binary:copy(<<1>>, 300), qos => 1,
            retain => false, dup => false, id => 7},
          #{type => puback, id => 65535},
          #{type => publish, topic => <<"q2">>, payload => <<>>, qos => 2, retain => false,
            dup => true, id => 9},
          #{type => pubrec, id => 9}, #{type => pubrel, id => 9}, #{type => pubcomp, id => 9},
          #{type => subscribe, id => 1, topics => [{<<"a/#">>, 1}, {<<"b">>, 0}]},
          #{type => suback, id => 1, codes => <<1, 128>>},
          #{type => unsubscribe, id => 2, topics => [<<"a/#">>]},
          #{type => unsuback, id => 2},
          #{type => pingreq}, #{type => pingresp}, #{type => disconnect}],
    [?_assertEqual(P, round_trip(P)) || P <- Ps].

known_bytes_test_() ->
    [?_assertEqual(<<16#C0, 0>>, iolist_to_binary(encode(#{type => pingreq}))),
     ?_assertEqual(<<16#20, 2, 0, 0>>,
                   iolist_to_binary(encode(#{type => connack, return_code => 0}))),
     %% Remaining length 321 = 16#C1 16#02 (the spec's table, 2.2.3).
     ?_assertMatch(<<16#30, 16#C1, 16#02, _/binary>>,
                   iolist_to_binary(encode(#{type => publish, topic => <<"t">>, qos => 0,
                                             payload => binary:copy(<<0>>, 318)})))].

publish_v4_test_() ->
    [?_assertEqual(iolist_to_binary(encode(#{type => publish, topic => T, payload => Pl, qos => Q,
                                             retain => R, id => 7})),
                   iolist_to_binary(encode(#{type => publish, topic => T, payload => Pl,
                                             qos => Q, retain => R, id => 7}, 4)))
     || T <- [<<"t">>, "a/b"], Pl <- [<<>>, binary:copy(<<1>>, 300)], Q <- [0, 1, 2],
        R <- [false, true]].

incomplete_test_() ->
    B = iolist_to_binary(encode(#{type => publish, topic => <<"t">>, qos => 0,
                                  payload => binary:copy(<<0>>, 200)})),
    [?_assertEqual(more, decode(binary:part(B, 0, N), ?MAX_LENGTH))
     || N <- [0, 1, 2, 3, byte_size(B) - 1]].

hostile_length_test_() ->
    %% 268435455 announced in four bytes: refused at once, not awaited.
    Huge = <<16#30, 16#FF, 16#FF, 16#FF, 16#7F>>,
    [?_assertEqual({error, {?MODULE, {too_long, ?MAX_LENGTH}}}, decode(Huge, 1024)),
     ?_assertEqual({error, {?MODULE, {too_long, 200}}},
                   decode(<<16#30, 16#C8, 16#01>>, 100)),
     ?_assertEqual({error, {?MODULE, bad_length}},
                   decode(<<16#30, 255, 255, 255, 255, 1>>, ?MAX_LENGTH)),
     ?_assertMatch({error, {?MODULE, {malformed, connack}}},
                   decode(<<16#20, 1, 0>>, ?MAX_LENGTH))].
-endif.
