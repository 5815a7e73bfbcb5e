%% @doc HTTP/2 frames (RFC 9113, 4 and 6), pure: bytes to frame terms and back. A frame longer
%% than the SETTINGS_MAX_FRAME_SIZE we announced, a bad padding or a payload of the wrong size
%% for its type is a named error (a connection error to the caller), before any of its payload
%% is waited for: a hostile length costs nothing.
-module(beamscale_load_h2_frame).

-export([decode/2, preface/0, settings/1, settings_ack/0, ping/2, headers/4, data/3,
         window_update/2, rst_stream/2, goaway/2, error_name/1, format_error/1]).
-export_type([frame/0]).

-type sid() :: non_neg_integer().
-type frame() :: {data, sid(), boolean(), binary(), non_neg_integer()}
               | {headers, sid(), boolean(), boolean(), binary()}
               | {continuation, sid(), boolean(), binary()}
               | {priority, sid()} | {rst_stream, sid(), non_neg_integer()}
               | {settings, [{non_neg_integer(), non_neg_integer()}]} | settings_ack
               | {push_promise, sid()} | {ping, binary()} | {ping_ack, binary()}
               | {goaway, sid(), non_neg_integer(), binary()}
               | {window_update, sid(), non_neg_integer()} | {unknown, byte()}.

-define(END_STREAM, 16#1).
-define(ACK, 16#1).
-define(END_HEADERS, 16#4).
-define(PADDED, 16#8).
-define(PRIORITY, 16#20).

%% @doc The first frame in `Buf' (`more' if it is not all there yet) and the bytes after it.
-spec decode(binary(), pos_integer()) ->
    {ok, frame(), binary()} | more | {error, {?MODULE, term()}}.
decode(<<Len:24, _:8, _/binary>>, Max) when Len > Max -> {error, {?MODULE, {frame_size, Len}}};
decode(<<Len:24, Type:8, Flags:8, _:1, Sid:31, P:Len/binary, Rest/binary>>, _Max) ->
    case frame(Type, Flags, Sid, P) of
        {error, R} -> {error, {?MODULE, R}};
        F -> {ok, F, Rest}
    end;
decode(_, _) -> more.

frame(0, _, 0, _) -> {error, {stream_zero, data}};
frame(0, Flags, Sid, P) ->
    case unpad(Flags, P) of
        {ok, D} -> {data, Sid, Flags band ?END_STREAM =/= 0, D, byte_size(P)};
        E -> E
    end;
frame(1, _, 0, _) -> {error, {stream_zero, headers}};
frame(1, Flags, Sid, P) ->
    case unpad(Flags, P) of
        {ok, B} ->
            case Flags band ?PRIORITY of
                0 -> headers(Sid, Flags, B);
                _ when byte_size(B) < 5 -> {error, {bad_length, headers}};
                _ -> headers(Sid, Flags, binary:part(B, 5, byte_size(B) - 5))
            end;
        E -> E
    end;
frame(2, _, Sid, <<_:40>>) -> {priority, Sid};
frame(3, _, Sid, <<Code:32>>) when Sid > 0 -> {rst_stream, Sid, Code};
frame(4, Flags, 0, P) when Flags band ?ACK =/= 0 ->
    case P of <<>> -> settings_ack; _ -> {error, {bad_length, settings}} end;
frame(4, _, 0, P) when byte_size(P) rem 6 =:= 0 ->
    {settings, [{Id, V} || <<Id:16, V:32>> <= P]};
frame(5, _, Sid, _) -> {push_promise, Sid};
frame(6, Flags, 0, <<Opaque:8/binary>>) when Flags band ?ACK =/= 0 -> {ping_ack, Opaque};
frame(6, _, 0, <<Opaque:8/binary>>) -> {ping, Opaque};
frame(7, _, 0, <<_:1, Last:31, Code:32, Debug/binary>>) -> {goaway, Last, Code, Debug};
frame(8, _, Sid, <<_:1, Incr:31>>) -> {window_update, Sid, Incr};
frame(9, _, 0, _) -> {error, {stream_zero, continuation}};
frame(9, Flags, Sid, P) -> {continuation, Sid, Flags band ?END_HEADERS =/= 0, P};
frame(T, _, _, _) when T =< 9 -> {error, {bad_length, name(T)}};
%% Unknown types are ignored (RFC 9113, 4.1).
frame(T, _, _, _) -> {unknown, T}.

headers(Sid, Flags, Block) ->
    {headers, Sid, Flags band ?END_STREAM =/= 0, Flags band ?END_HEADERS =/= 0, Block}.

unpad(Flags, P) when Flags band ?PADDED =:= 0 -> {ok, P};
unpad(_, <<Pad:8, Rest/binary>>) when Pad =< byte_size(Rest) ->
    {ok, binary:part(Rest, 0, byte_size(Rest) - Pad)};
unpad(_, _) -> {error, padding}.

%% The types whose payload size is fixed or checked (DATA, HEADERS, PUSH_PROMISE and
%% CONTINUATION take any).
name(2) -> priority; name(3) -> rst_stream; name(4) -> settings; name(6) -> ping;
name(7) -> goaway; name(8) -> window_update.

%% @doc The client's connection preface (RFC 9113, 3.4), to be followed by its SETTINGS.
-spec preface() -> binary().
preface() -> <<"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n">>.

frame_bytes(Type, Flags, Sid, Payload) ->
    [<<(iolist_size(Payload)):24, Type:8, Flags:8, 0:1, Sid:31>>, Payload].

%% @doc A SETTINGS frame of `{Id, Value}' pairs.
-spec settings([{non_neg_integer(), non_neg_integer()}]) -> iodata().
settings(Pairs) -> frame_bytes(4, 0, 0, [<<Id:16, V:32>> || {Id, V} <- Pairs]).

%% @doc The acknowledgement of the peer's SETTINGS.
-spec settings_ack() -> iodata().
settings_ack() -> frame_bytes(4, ?ACK, 0, <<>>).

%% @doc A PING (`false') or its answer (`true') with 8 opaque bytes.
-spec ping(boolean(), <<_:64>>) -> iodata().
ping(Ack, Opaque) -> frame_bytes(6, case Ack of true -> ?ACK; false -> 0 end, 0, Opaque).

%% @doc A header block as HEADERS and as many CONTINUATIONs as frames of `Max' bytes need.
-spec headers(sid(), binary(), boolean(), pos_integer()) -> iodata().
headers(Sid, Block, EndStream, Max) ->
    Es = case EndStream of true -> ?END_STREAM; false -> 0 end,
    case Block of
        <<First:Max/binary, More/binary>> when More =/= <<>> ->
            [frame_bytes(1, Es, Sid, First) | continuations(Sid, More, Max)];
        _ -> frame_bytes(1, Es bor ?END_HEADERS, Sid, Block)
    end.

continuations(Sid, Block, Max) when byte_size(Block) =< Max ->
    [frame_bytes(9, ?END_HEADERS, Sid, Block)];
continuations(Sid, Block, Max) ->
    <<Part:Max/binary, More/binary>> = Block,
    [frame_bytes(9, 0, Sid, Part) | continuations(Sid, More, Max)].

%% @doc A DATA frame (the caller keeps it within the frame size and the windows).
-spec data(sid(), iodata(), boolean()) -> iodata().
data(Sid, Data, EndStream) ->
    frame_bytes(0, case EndStream of true -> ?END_STREAM; false -> 0 end, Sid, Data).

%% @doc A WINDOW_UPDATE of stream `Sid' (0: the connection).
-spec window_update(sid(), pos_integer()) -> iodata().
window_update(Sid, Incr) -> frame_bytes(8, 0, Sid, <<0:1, Incr:31>>).

%% @doc A RST_STREAM with an error code.
-spec rst_stream(sid(), non_neg_integer()) -> iodata().
rst_stream(Sid, Code) -> frame_bytes(3, 0, Sid, <<Code:32>>).

%% @doc A GOAWAY naming the last stream the client took and an error code.
-spec goaway(sid(), non_neg_integer()) -> iodata().
goaway(Last, Code) -> frame_bytes(7, 0, 0, <<0:1, Last:31, Code:32>>).

%% @doc An error code's name (RFC 9113, 7), or the number of one the RFC does not name.
-spec error_name(non_neg_integer()) -> atom() | non_neg_integer().
error_name(C) when C =< 13 ->
    element(C + 1, {no_error, protocol_error, internal_error, flow_control_error,
                    settings_timeout, stream_closed, frame_size_error, refused_stream, cancel,
                    compression_error, connect_error, enhance_your_calm, inadequate_security,
                    http_1_1_required});
error_name(C) -> C.

%% @doc The text of a framing error.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({frame_size, L}) ->
    io_lib:format("HTTP/2 frame of ~b bytes above our SETTINGS_MAX_FRAME_SIZE", [L]);
format_error({stream_zero, T}) -> io_lib:format("HTTP/2 ~ts frame on stream 0", [T]);
format_error({bad_length, T}) -> io_lib:format("HTTP/2 ~ts frame of a wrong length", [T]);
format_error(padding) -> "HTTP/2 padding longer than its frame".
