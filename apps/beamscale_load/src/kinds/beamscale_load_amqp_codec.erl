%% @doc AMQP 0-9-1 frames (the 0-9-1 specification, 2008), pure: the methods the `amqp' kind
%% sends, encoded, and every frame a broker sends, decoded.
%% `decode/2' reads a frame's size from its 7-byte header and refuses one above the bound (the
%% negotiated frame-max) before its bytes arrive. Method names come from a fixed table: a
%% method the table lacks stays `{Class, Method}' integers, never an atom made from the wire.
-module(beamscale_load_amqp_codec).

-export([protocol_header/0, method/3, content/5, publish_head/4, heartbeat/0, decode/2,
         format_error/1, reply_text/1]).
-export_type([frame/0]).

-type frame() :: {method, 0..65535, atom() | {0..65535, 0..65535}, map()}
               | {header, 0..65535, non_neg_integer(), map()}
               | {body, 0..65535, binary()} | heartbeat.

-define(METHOD, 1).
-define(HEADER, 2).
-define(BODY, 3).
-define(HEARTBEAT, 8).
-define(FRAME_END, 16#CE).
%% Type, channel, size, and the frame-end octet.
-define(OVERHEAD, 8).
%% Basic's delivery-mode property flag (bit 12); 2 is persistent.
-define(DELIVERY_MODE, 16#1000).

%% @doc The bytes a client opens its connection with.
-spec protocol_header() -> binary().
protocol_header() -> <<"AMQP", 0, 0, 9, 1>>.

%% @doc A heartbeat frame.
-spec heartbeat() -> binary().
heartbeat() -> <<?HEARTBEAT, 0:16, 0:32, ?FRAME_END>>.

%% @doc A method frame on channel `Ch'.
-spec method(0..65535, atom(), map()) -> iodata().
method(Ch, Name, Args) -> frame(?METHOD, Ch, args(Name, Args)).

args('connection.start_ok', #{user := U, password := P}) ->
    [<<10:16, 11:16>>, table([{<<"product">>, <<"beamscale">>}]), short(<<"PLAIN">>),
     long([0, U, 0, P]), short(<<"en_US">>)];
args('connection.tune_ok', #{channel_max := C, frame_max := F, heartbeat := H}) ->
    <<10:16, 31:16, C:16, F:32, H:16>>;
args('connection.open', #{vhost := V}) -> [<<10:16, 40:16>>, short(V), short(<<>>), 0];
args('connection.close', _) -> <<10:16, 50:16, 200:16, 0, 0:16, 0:16>>;
args('connection.close_ok', _) -> <<10:16, 51:16>>;
args('channel.open', _) -> <<20:16, 10:16, 0>>;
args('channel.close', _) -> <<20:16, 40:16, 200:16, 0, 0:16, 0:16>>;
args('channel.close_ok', _) -> <<20:16, 41:16>>;
args('exchange.declare', #{exchange := X, exchange_type := T, durable := D, auto_delete := A}) ->
    [<<40:16, 10:16, 0:16>>, short(X), short(T), bits([false, D, A, false, false]), table([])];
args('queue.declare', #{queue := Q, durable := D, exclusive := E, auto_delete := A}) ->
    [<<50:16, 10:16, 0:16>>, short(Q), bits([false, D, E, A, false]), table([])];
args('queue.bind', #{queue := Q, exchange := X, routing_key := K}) ->
    [<<50:16, 20:16, 0:16>>, short(Q), short(X), short(K), 0, table([])];
args('basic.qos', #{prefetch_size := S, prefetch_count := C}) ->
    <<60:16, 10:16, S:32, C:16, 0>>;
args('basic.consume', #{queue := Q, no_ack := NoAck}) ->
    [<<60:16, 20:16, 0:16>>, short(Q), short(<<>>), bits([false, NoAck, false, false]),
     table([])];
args('basic.publish', #{exchange := X, routing_key := K}) ->
    [<<60:16, 40:16, 0:16>>, short(X), short(K), 0];
args('basic.ack', #{delivery_tag := T}) -> <<60:16, 80:16, T:64, 0>>;
args('confirm.select', _) -> <<85:16, 10:16, 0>>.

%% @doc A message's content: its header frame and body frames of at most `FrameMax' bytes each
%% (frame overhead included), persistent or not.
-spec content(0..65535, binary(), boolean(), pos_integer(), iodata()) -> iodata().
content(Ch, Body, Persistent, FrameMax, Publish) ->
    Props = case Persistent of
                true -> <<?DELIVERY_MODE:16, 2>>;
                false -> <<0:16>>
            end,
    [Publish, frame(?HEADER, Ch, [<<60:16, 0:16, (byte_size(Body)):64>>, Props])
     | bodies(Ch, Body, FrameMax - ?OVERHEAD)].

%% @doc A publish's frames up to its body's bytes (method, content header, the body frame's
%% head), for a body of `Size' bytes (1 to 4088: one frame under any frame-max), encoded once
%% for every publish of a spec: the body and the frame-end octet follow.
-spec publish_head(0..65535, map(), boolean(), 1..4088) -> binary().
publish_head(Ch, Args, Persistent, Size) ->
    [Publish, Header, _Body] = content(Ch, <<0:(Size * 8)>>, Persistent, 4096, method(
                                          Ch, 'basic.publish', Args)),
    iolist_to_binary([Publish, Header, <<?BODY, Ch:16, Size:32>>]).

bodies(_Ch, <<>>, _Max) -> [];
bodies(Ch, Body, Max) when byte_size(Body) =< Max -> [frame(?BODY, Ch, Body)];
bodies(Ch, Body, Max) ->
    <<Part:Max/binary, Rest/binary>> = Body,
    [frame(?BODY, Ch, Part) | bodies(Ch, Rest, Max)].

frame(Type, Ch, Payload) ->
    [<<Type, Ch:16, (iolist_size(Payload)):32>>, Payload, ?FRAME_END].

short(S) ->
    B = iolist_to_binary(S),
    [byte_size(B), B].

long(S) ->
    B = iolist_to_binary(S),
    [<<(byte_size(B)):32>>, B].

%% A field table of long strings only.
table(Fields) ->
    long([[short(K), $S, long(V)] || {K, V} <- Fields]).

bits(Bs) ->
    lists:foldl(fun(B, Acc) -> Acc bsl 1 bor (case B of true -> 1; false -> 0 end) end,
                0, lists:reverse(Bs)).

%% @doc The first frame of `Bin': `{ok, Frame, Rest}', `more', or an error for a frame above
%% `Max' bytes (refused from its header), a bad frame-end or a malformed method.
-spec decode(binary(), pos_integer()) -> {ok, frame(), binary()} | more | {error, {?MODULE, _}}.
decode(<<"AMQP", _/binary>>, _Max) -> {error, {?MODULE, protocol_refused}};
decode(<<_Type, _Ch:16, Size:32, _/binary>>, Max) when Size + ?OVERHEAD > Max ->
    {error, {?MODULE, {frame_too_big, Size + ?OVERHEAD, Max}}};
decode(<<Type, Ch:16, Size:32, Payload:Size/binary, End, Rest/binary>>, _Max) ->
    case End of
        ?FRAME_END ->
            try payload(Type, Ch, Payload) of
                F -> {ok, F, Rest}
            catch error:_ -> {error, {?MODULE, {malformed, Type}}}
            end;
        _ -> {error, {?MODULE, bad_frame_end}}
    end;
decode(_Bin, _Max) -> more.

payload(?METHOD, Ch, <<C:16, M:16, Args/binary>>) ->
    Name = name(C, M),
    {method, Ch, Name, method_args(Name, Args)};
payload(?HEADER, Ch, <<_Class:16, _Weight:16, Size:64, Flags:16, Props/binary>>) ->
    {header, Ch, Size, #{flags => Flags, properties => Props}};
payload(?BODY, Ch, Body) -> {body, Ch, Body};
payload(?HEARTBEAT, 0, <<>>) -> heartbeat.

%% The methods a broker sends that the kind reads.
name(10, 10) -> 'connection.start';
name(10, 30) -> 'connection.tune';
name(10, 41) -> 'connection.open_ok';
name(10, 50) -> 'connection.close';
name(10, 51) -> 'connection.close_ok';
name(20, 11) -> 'channel.open_ok';
name(20, 40) -> 'channel.close';
name(20, 41) -> 'channel.close_ok';
name(40, 11) -> 'exchange.declare_ok';
name(50, 11) -> 'queue.declare_ok';
name(50, 21) -> 'queue.bind_ok';
name(60, 11) -> 'basic.qos_ok';
name(60, 21) -> 'basic.consume_ok';
name(60, 50) -> 'basic.return';
name(60, 60) -> 'basic.deliver';
name(60, 80) -> 'basic.ack';
name(60, 120) -> 'basic.nack';
name(85, 11) -> 'confirm.select_ok';
name(C, M) -> {C, M}.

method_args('connection.start', <<0, 9, Rest/binary>>) ->
    {_Props, R1} = take_long(Rest),
    {Mechs, _} = take_long(R1),
    #{mechanisms => Mechs};
method_args('connection.tune', <<C:16, F:32, H:16>>) ->
    #{channel_max => C, frame_max => F, heartbeat => H};
method_args(Close, <<Code:16, N, Text:N/binary, C:16, M:16>>)
  when Close =:= 'connection.close'; Close =:= 'channel.close' ->
    #{code => Code, text => Text, method => {C, M}};
method_args('basic.consume_ok', <<N, Tag:N/binary>>) -> #{consumer_tag => Tag};
method_args('basic.deliver', <<N, Tag:N/binary, D:64, _/binary>>) ->
    #{consumer_tag => Tag, delivery_tag => D};
method_args('basic.ack', <<D:64, _:7, Multiple:1>>) ->
    #{delivery_tag => D, multiple => Multiple =:= 1};
method_args('basic.nack', <<D:64, _:6, _Requeue:1, Multiple:1>>) ->
    #{delivery_tag => D, multiple => Multiple =:= 1};
method_args('basic.return', <<Code:16, N, Text:N/binary, _/binary>>) ->
    #{code => Code, text => Text};
method_args(_, _) -> #{}.

take_long(<<N:32, S:N/binary, Rest/binary>>) -> {S, Rest}.

%% @doc The words of an AMQP reply code (0-9-1's constants), or the number.
-spec reply_text(non_neg_integer()) -> string().
reply_text(Code) ->
    case lists:keyfind(Code, 1, [{200, "reply-success"}, {311, "content-too-large"},
                                 {312, "no-route"}, {313, "no-consumers"},
                                 {320, "connection-forced"}, {402, "invalid-path"},
                                 {403, "access-refused"}, {404, "not-found"},
                                 {405, "resource-locked"}, {406, "precondition-failed"},
                                 {501, "frame-error"}, {502, "syntax-error"},
                                 {503, "command-invalid"}, {504, "channel-error"},
                                 {505, "unexpected-frame"}, {506, "resource-error"},
                                 {530, "not-allowed"}, {540, "not-implemented"},
                                 {541, "internal-error"}]) of
        {_, Text} -> Text;
        false -> integer_to_list(Code)
    end.

%% @doc The text of a codec's reason (never the bytes received).
-spec format_error(term()) -> iodata().
format_error({frame_too_big, Size, Max}) ->
    io_lib:format("AMQP frame of ~b bytes above frame-max ~b: connection closed", [Size, Max]);
format_error(bad_frame_end) -> "AMQP frame without its frame-end octet: connection closed";
format_error(protocol_refused) -> "the server refused AMQP 0-9-1 (sent its protocol header)";
format_error({malformed, Type}) -> io_lib:format("malformed AMQP frame (type ~b)", [Type]);
format_error(Other) -> io_lib:format("~0tp", [Other]).
