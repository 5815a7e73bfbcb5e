%% @doc WebSocket frames (RFC 6455, section 5), pure: a client's frames encoded (always masked,
%% 5.3) and a server's frames decoded from a byte stream, with the handshake's key and accept
%% values (4.1, 4.2.2). No extension is negotiated, so the RSV bits must be 0.
-module(beamscale_load_ws_frame).

-export([encode/3, decode/2, key/1, accept/1, mask/2]).
-export_type([opcode/0, frame/0]).

-type opcode() :: continuation | text | binary | close | ping | pong.
-type frame() :: #{fin := boolean(), opcode := opcode(), payload := binary()}.

%% The GUID a server appends to the client's key (RFC 6455, 1.3).
-define(GUID, <<"258EAFA5-E914-47DA-95CA-C5AB0DC85B11">>).

%% @doc A client frame: `Payload' masked with the 4 bytes `Key'; the length in the shortest of
%% the three forms (5.2).
-spec encode({opcode(), boolean()}, iodata(), <<_:32>>) -> iodata().
encode({Opcode, Fin}, Payload, Key) ->
    P = iolist_to_binary(Payload),
    Len = case byte_size(P) of
              N when N < 126 -> <<1:1, N:7>>;
              N when N < 65536 -> <<1:1, 126:7, N:16>>;
              N -> <<1:1, 127:7, N:64>>
          end,
    [<<(bit(Fin)):1, 0:3, (code(Opcode)):4>>, Len, Key, mask(P, Key)].

bit(true) -> 1;
bit(false) -> 0.

code(continuation) -> 0;
code(text) -> 1;
code(binary) -> 2;
code(close) -> 8;
code(ping) -> 9;
code(pong) -> 10.

opcode(0) -> {ok, continuation};
opcode(1) -> {ok, text};
opcode(2) -> {ok, binary};
opcode(8) -> {ok, close};
opcode(9) -> {ok, ping};
opcode(10) -> {ok, pong};
opcode(N) -> {error, {reserved_opcode, N}}.

%% @doc XOR `Data' with the 4-byte `Key' repeated (5.3): masking and unmasking are the same.
-spec mask(binary(), <<_:32>>) -> binary().
mask(<<>>, _Key) -> <<>>;
mask(Data, Key) ->
    Size = byte_size(Data),
    Keys = binary:part(binary:copy(Key, Size div 4 + 1), 0, Size),
    crypto:exor(Data, Keys).

%% @doc The first frame of a server's `Bytes' and the bytes after it; `more' when it is not all
%% there. A frame above `Max' bytes of payload, a masked one (5.1: a server never masks), RSV
%% bits set, a reserved opcode, or a control frame fragmented or above 125 bytes (5.5) is an
%% error: the connection must be failed.
-spec decode(binary(), non_neg_integer()) ->
    {ok, frame(), binary()} | more | {error, term()}.
decode(<<_:1, Rsv:3, _:4, _/binary>>, _Max) when Rsv =/= 0 -> {error, {rsv_bits, Rsv}};
decode(<<_:8, 1:1, _/bitstring>>, _Max) -> {error, masked_server_frame};
decode(<<Fin:1, 0:3, Op:4, 0:1, Len7:7, Rest/binary>>, Max) ->
    case opcode(Op) of
        {ok, Opcode} -> size_field(Len7, Rest, Max, Fin =:= 1, Opcode);
        {error, _} = Error -> Error
    end;
decode(_, _Max) -> more.

size_field(126, <<N:16, Rest/binary>>, Max, Fin, Op) -> payload(N, Rest, Max, Fin, Op);
size_field(127, <<N:64, Rest/binary>>, Max, Fin, Op) -> payload(N, Rest, Max, Fin, Op);
size_field(N, Rest, Max, Fin, Op) when N < 126 -> payload(N, Rest, Max, Fin, Op);
size_field(_, _, _, _, _) -> more.

payload(N, _Rest, Max, _Fin, _Op) when N > Max -> {error, {frame_too_big, N}};
payload(N, _Rest, _Max, Fin, Op) when (Op =:= close orelse Op =:= ping orelse Op =:= pong),
                                         (N > 125 orelse not Fin) ->
    {error, {bad_control_frame, Op}};
payload(N, Rest, _Max, Fin, Op) ->
    case Rest of
        <<P:N/binary, After/binary>> -> {ok, #{fin => Fin, opcode => Op, payload => P}, After};
        _ -> more
    end.

%% @doc A fresh `Sec-WebSocket-Key': 16 bytes from `Rand16', base64 (4.1).
-spec key(<<_:128>>) -> binary().
key(Rand16) -> base64:encode(Rand16).

%% @doc The `Sec-WebSocket-Accept' a server must answer to `Key' (4.2.2).
-spec accept(binary()) -> binary().
accept(Key) -> base64:encode(crypto:hash(sha, <<Key/binary, ?GUID/binary>>)).
