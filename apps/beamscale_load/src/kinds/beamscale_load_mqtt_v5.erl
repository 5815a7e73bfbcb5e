%% @doc What MQTT 5.0 (OASIS standard, 2019) adds to the packets of `beamscale_load_mqtt_codec',
%% pure: properties (2.2.2) and the names of reason codes (2.4).
%% Properties are a map by name (`session_expiry_interval', `user_property'...); the two that may
%% repeat, `user_property' (`[{Key, Value}]') and `subscription_identifier', are lists in their
%% order. Decoding is bounded: a property length past the bytes of its packet left (the packet
%% itself is bounded by the target's `max_reply_bytes') is refused with a named reason before a
%% property is read, and each value is read inside the properties' own bytes.
-module(beamscale_load_mqtt_v5).

-export([props/1, take_props/2, varint/1, take_varint/1, reason_name/1, format_error/1]).
-export_type([props/0]).

-type props() :: #{atom() => term()}.

%% Identifier, name and type of every property (2.2.2.2).
-define(PROPS, [{16#01, payload_format_indicator, byte}, {16#02, message_expiry_interval, int32},
                {16#03, content_type, utf8}, {16#08, response_topic, utf8},
                {16#09, correlation_data, bin}, {16#0B, subscription_identifier, varint},
                {16#11, session_expiry_interval, int32},
                {16#12, assigned_client_identifier, utf8}, {16#13, server_keep_alive, int16},
                {16#15, authentication_method, utf8}, {16#16, authentication_data, bin},
                {16#17, request_problem_information, byte}, {16#18, will_delay_interval, int32},
                {16#19, request_response_information, byte},
                {16#1A, response_information, utf8}, {16#1C, server_reference, utf8},
                {16#1F, reason_string, utf8}, {16#21, receive_maximum, int16},
                {16#22, topic_alias_maximum, int16}, {16#23, topic_alias, int16},
                {16#24, maximum_qos, byte}, {16#25, retain_available, byte},
                {16#26, user_property, pair}, {16#27, maximum_packet_size, int32},
                {16#28, wildcard_subscription_available, byte},
                {16#29, subscription_identifier_available, byte},
                {16#2A, shared_subscription_available, byte}]).
-define(LISTS, [user_property, subscription_identifier]).

%% The names of the reason codes that are not success (2.4); the others are said by number.
-define(NAMES, #{16#04 => "disconnect with will message", 16#10 => "no matching subscribers",
                 16#11 => "no subscription existed", 16#18 => "continue authentication",
                 16#19 => "re-authenticate", 16#80 => "unspecified error",
                 16#81 => "malformed packet", 16#82 => "protocol error",
                 16#83 => "implementation specific error", 16#84 => "unsupported protocol version",
                 16#85 => "client identifier not valid", 16#86 => "bad user name or password",
                 16#87 => "not authorized", 16#88 => "server unavailable", 16#89 => "server busy",
                 16#8A => "banned", 16#8B => "server shutting down",
                 16#8C => "bad authentication method", 16#8D => "keep alive timeout",
                 16#8E => "session taken over", 16#8F => "topic filter invalid",
                 16#90 => "topic name invalid", 16#91 => "packet identifier in use",
                 16#92 => "packet identifier not found", 16#93 => "receive maximum exceeded",
                 16#94 => "topic alias invalid", 16#95 => "packet too large",
                 16#96 => "message rate too high", 16#97 => "quota exceeded",
                 16#98 => "administrative action", 16#99 => "payload format invalid",
                 16#9A => "retain not supported", 16#9B => "QoS not supported",
                 16#9C => "use another server", 16#9D => "server moved",
                 16#9E => "shared subscriptions not supported",
                 16#9F => "connection rate exceeded", 16#A0 => "maximum connect time",
                 16#A1 => "subscription identifiers not supported",
                 16#A2 => "wildcard subscriptions not supported"}).

%% @doc The properties' bytes: their length, then each (in the order of their names).
-spec props(props()) -> iodata().
props(Props) when map_size(Props) =:= 0 -> <<0>>;
props(Props) ->
    Body = [prop(K, V) || {K, V} <- lists:sort(maps:to_list(Props))],
    [varint(iolist_size(Body)), Body].

prop(K, Vs) when K =:= user_property; K =:= subscription_identifier ->
    [prop1(K, V) || V <- Vs];
prop(K, V) -> prop1(K, V).

prop1(K, V) ->
    {Id, K, Type} = lists:keyfind(K, 2, ?PROPS),
    [Id, value(Type, V)].

value(byte, V) -> <<V>>;
value(int16, V) -> <<V:16>>;
value(int32, V) -> <<V:32>>;
value(varint, V) -> varint(V);
value(pair, {K, V}) -> [str(K), str(V)];
value(_Utf8OrBin, V) -> str(V).

str(S) ->
    B = iolist_to_binary(S),
    [<<(byte_size(B)):16>>, B].

%% @doc The properties at the head of `Bin' (a packet's rest) and the bytes after them. A
%% length past `Bin' throws `{?MODULE, {props_past_packet, Packet, Len, Left}}' (a named
%% reason), as do an unknown property and a repeated one; other bad bytes are an `error'.
-spec take_props(binary(), atom()) -> {props(), binary()}.
take_props(Bin, Packet) ->
    case take_varint(Bin) of
        {Len, Rest} when Len =< byte_size(Rest) ->
            <<P:Len/binary, Tail/binary>> = Rest,
            {decode(P, #{}), Tail};
        {Len, Rest} -> throw({?MODULE, {props_past_packet, Packet, Len, byte_size(Rest)}})
    end.

decode(<<>>, Acc) -> Acc;
decode(<<Id, Rest/binary>>, Acc) ->
    case lists:keyfind(Id, 1, ?PROPS) of
        {Id, Name, Type} ->
            {V, Rest1} = take(Type, Rest),
            decode(Rest1, add(Name, V, Acc));
        false -> throw({?MODULE, {unknown_property, Id}})
    end.

take(byte, <<V, R/binary>>) -> {V, R};
take(int16, <<V:16, R/binary>>) -> {V, R};
take(int32, <<V:32, R/binary>>) -> {V, R};
take(varint, Bin) -> take_varint(Bin);
take(pair, Bin) ->
    {K, R1} = take(utf8, Bin),
    {V, R2} = take(utf8, R1),
    {{K, V}, R2};
take(_Utf8OrBin, <<N:16, S:N/binary, R/binary>>) -> {S, R}.

add(Name, V, Acc) ->
    case lists:member(Name, ?LISTS) of
        true -> Acc#{Name => maps:get(Name, Acc, []) ++ [V]};
        false when is_map_key(Name, Acc) -> throw({?MODULE, {repeated_property, Name}});
        false -> Acc#{Name => V}
    end.

%% @doc A variable byte integer (1.5.5): 7 bits a byte, low first, the top bit saying more
%% follow.
-spec varint(non_neg_integer()) -> iodata().
varint(N) when N < 128 -> <<N>>;
varint(N) -> [<<(128 bor (N band 127))>>, varint(N bsr 7)].

%% @doc A variable byte integer at the head of `Bin': four bytes at most (a fifth, or too few
%% bytes, is an `error').
-spec take_varint(binary()) -> {non_neg_integer(), binary()}.
take_varint(Bin) -> take_varint(Bin, 0, 0).

take_varint(<<1:1, D:7, Rest/binary>>, I, Acc) when I < 3 ->
    take_varint(Rest, I + 1, Acc bor (D bsl (7 * I)));
take_varint(<<0:1, D:7, Rest/binary>>, I, Acc) -> {Acc bor (D bsl (7 * I)), Rest}.

%% @doc A reason code's name as the standard writes it ("not authorized").
-spec reason_name(byte()) -> string().
reason_name(Code) -> maps:get(Code, ?NAMES, "unknown reason code").

%% @doc The text of a reason: a refusal by reason code (`{reason, Packet, Code}'), a server's
%% DISCONNECT, or bad properties (never their bytes).
-spec format_error(term()) -> iodata().
format_error({reason, Packet, Code}) ->
    io_lib:format("~ts: ~ts (0x~2.16.0B)", [upper(Packet), reason_name(Code), Code]);
format_error({disconnected, Code}) ->
    io_lib:format("server DISCONNECT: ~ts (0x~2.16.0B)", [disconnect_name(Code), Code]);
format_error({props_past_packet, Packet, Len, Left}) ->
    io_lib:format("MQTT 5 ~ts properties' length ~b past the packet (bytes left: ~b): "
                  "connection closed", [Packet, Len, Left]);
format_error({unknown_property, Id}) ->
    io_lib:format("MQTT 5 property 0x~2.16.0B unknown: connection closed", [Id]);
format_error({repeated_property, Name}) ->
    io_lib:format("MQTT 5 property ~ts repeated: connection closed", [Name]);
format_error(v5_only) -> "MQTT 5 properties on an MQTT 3.1.1 connection (connect version => 5)";
format_error(Other) -> io_lib:format("~0tp", [Other]).

disconnect_name(0) -> "normal disconnection";
disconnect_name(Code) -> reason_name(Code).

upper(Packet) -> string:uppercase(atom_to_list(Packet)).
