%% @doc The MySQL client/server protocol (as MariaDB speaks it), pure: packets framed and
%% reassembled, length-encoded integers and strings, the server's handshake v10, the client's
%% handshake response with the `mysql_native_password' scramble, and a COM_QUERY's response read
%% incrementally (OK, ERR, or result sets whose rows are counted, not kept).
%%
%% Only `mysql_native_password' is spoken (MariaDB's default plugin, and MySQL's before 8.0);
%% a server that asks for any other (`caching_sha2_password', `sha256_password',
%% `client_ed25519', `mysql_clear_password', `dialog', `auth_gssapi_client') is refused.
-module(beamscale_load_mysql_proto).

-export([packet/2, decode/2, need/1, enc_int/1, dec_int/1, enc_str/1, dec_str/1, scramble/2,
         greeting/1, auth_response/4, auth_reply/1, query/1, quit/0, response/2,
         response_start/0]).
-export_type([greeting/0, server_error/0, response_state/0]).

-type greeting() :: #{version := binary(), salt := binary(), caps := non_neg_integer(),
                      plugin := binary()}.
%% An ERR packet: the error code, the SQL state and the server's message.
-type server_error() :: {server, non_neg_integer(), binary(), binary()}.
%% Where a query's response is: before its first packet, among `N' column definitions, or among
%% the rows; with the rows counted so far.
-opaque response_state() :: {first | {columns, non_neg_integer()} | columns_eof | rows,
                             non_neg_integer()}.

%% The largest payload of one packet; a longer one is split, a part of exactly this size
%% announcing that another follows.
-define(MAX_PART, 16#FFFFFF).
-define(NATIVE, <<"mysql_native_password">>).
%% Capability flags (MariaDB's "Connection" pages, protocol 4.1).
-define(CLIENT_LONG_PASSWORD, 16#1).
-define(CLIENT_LONG_FLAG, 16#4).
-define(CLIENT_CONNECT_WITH_DB, 16#8).
-define(CLIENT_PROTOCOL_41, 16#200).
-define(CLIENT_TRANSACTIONS, 16#2000).
-define(CLIENT_SECURE_CONNECTION, 16#8000).
-define(CLIENT_MULTI_RESULTS, 16#20000).
-define(CLIENT_PLUGIN_AUTH, 16#80000).
%% The status flag of an OK or EOF saying another result follows (a multi-result CALL).
-define(MORE_RESULTS, 16#8).
%% utf8mb4_general_ci: any text a query holds.
-define(CHARSET, 45).
-define(COM_QUIT, 1).
-define(COM_QUERY, 3).

%% @doc One logical packet of sequence `Seq': split in parts of at most 16 MiB - 1 (an empty
%% part ends one whose last part is full).
-spec packet(byte(), iodata()) -> iodata().
packet(Seq, Payload) -> parts(Seq, iolist_to_binary(Payload)).

parts(Seq, <<Part:?MAX_PART/binary, Rest/binary>>) ->
    [<<?MAX_PART:24/little, Seq>>, Part | parts((Seq + 1) band 255, Rest)];
parts(Seq, Last) -> [<<(byte_size(Last)):24/little, Seq>>, Last].

%% @doc The first whole logical packet of a byte stream: its sequence (the last part's), its
%% payload (parts joined) and the bytes after it; `more' until it has all come; `too_big'
%% past `Max' bytes of payload (bounded before they arrive).
-spec decode(binary(), non_neg_integer()) ->
    {ok, byte(), binary(), binary()} | more | {error, {packet_too_big, pos_integer()}}.
decode(Buf, Max) -> decode(Buf, Max, []).

decode(<<Len:24/little, _Seq, _/binary>>, Max, Acc) when Len > Max ->
    {error, {packet_too_big, Len + iolist_size(Acc)}};
decode(<<?MAX_PART:24/little, _Seq, Part:?MAX_PART/binary, Rest/binary>>, Max, Acc) ->
    decode(Rest, Max - ?MAX_PART, [Acc, Part]);
%% A packet in one part (nearly all) is a sub-binary of the stream, not a copy.
decode(<<Len:24/little, Seq, Payload:Len/binary, Rest/binary>>, _Max, []) ->
    {ok, Seq, Payload, Rest};
decode(<<Len:24/little, Seq, Payload:Len/binary, Rest/binary>>, _Max, Acc) ->
    {ok, Seq, iolist_to_binary([Acc, Payload]), Rest};
decode(_Buf, _Max, _Acc) -> more.

%% @doc The bytes `decode/2' needs from the start of `Buf' before it may say more than `more':
%% the whole parts there, and the part whose header has come (one byte more before a header).
-spec need(binary()) -> pos_integer().
need(Buf) -> need(Buf, 0).

need(<<?MAX_PART:24/little, _Seq, _:?MAX_PART/binary, Rest/binary>>, Off) ->
    need(Rest, Off + 4 + ?MAX_PART);
need(<<Len:24/little, _Seq, _/binary>>, Off) -> Off + 4 + Len;
need(Rest, Off) -> Off + byte_size(Rest) + 1.

%% @doc A length-encoded integer.
-spec enc_int(non_neg_integer()) -> binary().
enc_int(N) when N < 251 -> <<N>>;
enc_int(N) when N < 16#10000 -> <<16#FC, N:16/little>>;
enc_int(N) when N < 16#1000000 -> <<16#FD, N:24/little>>;
enc_int(N) -> <<16#FE, N:64/little>>.

%% @doc A length-encoded integer and the bytes after it (`null': 0xFB, a NULL in a row).
-spec dec_int(binary()) -> {non_neg_integer() | null, binary()} | error.
dec_int(<<N, Rest/binary>>) when N < 251 -> {N, Rest};
dec_int(<<16#FB, Rest/binary>>) -> {null, Rest};
dec_int(<<16#FC, N:16/little, Rest/binary>>) -> {N, Rest};
dec_int(<<16#FD, N:24/little, Rest/binary>>) -> {N, Rest};
dec_int(<<16#FE, N:64/little, Rest/binary>>) -> {N, Rest};
dec_int(_) -> error.

%% @doc A length-encoded string.
-spec enc_str(iodata()) -> iodata().
enc_str(S) -> [enc_int(iolist_size(S)), S].

%% @doc A length-encoded string and the bytes after it.
-spec dec_str(binary()) -> {binary() | null, binary()} | error.
dec_str(B) ->
    case dec_int(B) of
        {null, Rest} -> {null, Rest};
        {N, Rest} when byte_size(Rest) >= N -> split_binary(Rest, N);
        _ -> error
    end.

%% @doc `mysql_native_password': SHA1(password) XOR SHA1(salt, SHA1(SHA1(password))); nothing
%% for an empty password.
-spec scramble(iodata(), binary()) -> binary().
scramble(Password, Salt) ->
    case iolist_to_binary(Password) of
        <<>> -> <<>>;
        P ->
            H1 = crypto:hash(sha, P),
            H2 = crypto:hash(sha, [Salt, crypto:hash(sha, H1)]),
            crypto:exor(H1, H2)
    end.

%% @doc The server's initial handshake (protocol version 10).
-spec greeting(binary()) -> {ok, greeting()} | {error, term()}.
greeting(<<16#FF, Rest/binary>>) -> {error, err(Rest)};
greeting(<<10, Rest/binary>>) ->
    case binary:split(Rest, <<0>>) of
        [Version, <<_ConnId:32, Salt1:8/binary, 0, CapLow:16/little, _Charset, _Status:16,
                    CapHigh:16/little, SaltLen, _Reserved:10/binary, More/binary>>] ->
            Caps = CapLow bor (CapHigh bsl 16),
            %% The salt's second part and its NUL: 13 bytes at least.
            {Salt2, Tail} = split_binary(More, min(byte_size(More), max(13, SaltLen - 8))),
            Plugin = case Caps band ?CLIENT_PLUGIN_AUTH of
                         0 -> ?NATIVE;
                         _ -> hd(binary:split(Tail, <<0>>))
                     end,
            {ok, #{version => Version, caps => Caps, plugin => Plugin,
                   salt => <<Salt1/binary, (drop_nul(Salt2))/binary>>}};
        _ -> {error, bad_greeting}
    end;
greeting(<<V, _/binary>>) -> {error, {protocol_version, V}};
greeting(_) -> {error, bad_greeting}.

%% The salt ends with a NUL that is not part of it.
drop_nul(B) ->
    case byte_size(B) of
        N when N > 0, binary_part(B, N - 1, 1) =:= <<0>> -> binary_part(B, 0, N - 1);
        _ -> B
    end.

%% @doc The client's handshake response (protocol 4.1) to a greeting, with the scramble of
%% `mysql_native_password'; `{error, {auth_plugin, Name}}' when the server wants another plugin.
-spec auth_response(greeting(), iodata(), iodata(), iodata()) ->
    {ok, iodata()} | {error, {auth_plugin, binary()}}.
auth_response(#{plugin := ?NATIVE, salt := Salt, caps := ServerCaps}, User, Password, Db) ->
    WithDb = case iolist_size(Db) of
                 0 -> 0;
                 _ -> ?CLIENT_CONNECT_WITH_DB
             end,
    Caps = ServerCaps band (?CLIENT_LONG_PASSWORD bor ?CLIENT_LONG_FLAG bor WithDb bor
                                ?CLIENT_PROTOCOL_41 bor ?CLIENT_TRANSACTIONS bor
                                ?CLIENT_SECURE_CONNECTION bor ?CLIENT_MULTI_RESULTS bor
                                ?CLIENT_PLUGIN_AUTH),
    Auth = scramble(Password, Salt),
    {ok, [<<Caps:32/little, ?MAX_PART:32/little, ?CHARSET, 0:23/unit:8>>, User, 0,
          byte_size(Auth), Auth, [[Db, 0] || WithDb =/= 0], ?NATIVE, 0]};
auth_response(#{plugin := Other}, _User, _Password, _Db) -> {error, {auth_plugin, Other}}.

%% @doc What the server answered to the handshake response: OK, ERR, or a switch to another
%% plugin (only `mysql_native_password' is followed, with its new salt).
-spec auth_reply(binary()) -> ok | {switch, binary()} | {error, term()}.
auth_reply(<<0, _/binary>>) -> ok;
auth_reply(<<16#FF, Rest/binary>>) -> {error, err(Rest)};
auth_reply(<<16#FE, Rest/binary>>) ->
    case binary:split(Rest, <<0>>) of
        [?NATIVE, Salt] -> {switch, drop_nul(Salt)};
        [Other | _] -> {error, {auth_plugin, Other}}
    end;
auth_reply(_) -> {error, bad_auth_reply}.

%% @doc The payload of COM_QUERY.
-spec query(iodata()) -> iodata().
query(Sql) -> [?COM_QUERY, Sql].

%% @doc The payload of COM_QUIT.
-spec quit() -> binary().
quit() -> <<?COM_QUIT>>.

%% @doc The state before a query's first response packet.
-spec response_start() -> response_state().
response_start() -> {first, 0}.

%% @doc One packet of a query's response: `{more, State}' while the response goes on, `{done,
%% Rows}' at its end (rows of every result set), `{error, Reason}' at an ERR packet (the
%% response ends there too) or a packet out of place.
-spec response(binary(), response_state()) ->
    {more, response_state()} | {done, non_neg_integer()} | {error, term()}.
response(<<16#FF, Rest/binary>>, _) -> {error, err(Rest)};
response(<<0, Rest/binary>>, {first, Rows}) -> status(ok_status(Rest), Rows);
response(<<16#FB, _/binary>>, {first, _}) -> {error, local_infile};
response(P, {first, Rows}) ->
    case dec_int(P) of
        {N, <<>>} when is_integer(N), N > 0 -> {more, {{columns, N}, Rows}};
        _ -> {error, bad_response}
    end;
response(_Column, {{columns, 1}, Rows}) -> {more, {columns_eof, Rows}};
response(_Column, {{columns, N}, Rows}) -> {more, {{columns, N - 1}, Rows}};
response(<<16#FE, _/binary>> = P, {columns_eof, Rows}) when byte_size(P) < 9 ->
    {more, {rows, Rows}};
response(_, {columns_eof, _}) -> {error, bad_response};
%% An EOF packet ends the rows; a row starting with 0xFE is at least 9 bytes long.
response(<<16#FE, _Warnings:16, Status:16/little>> = P, {rows, Rows}) when byte_size(P) < 9 ->
    status(Status, Rows);
response(<<16#FE, _/binary>> = P, {rows, Rows}) when byte_size(P) < 9 -> {done, Rows};
response(_Row, {rows, Rows}) -> {more, {rows, Rows + 1}}.

status(Status, Rows) when Status band ?MORE_RESULTS =/= 0 -> {more, {first, Rows}};
status(_Status, Rows) -> {done, Rows}.

%% An OK packet's status flags, after the affected rows and the last insert id.
ok_status(B) ->
    case dec_int(B) of
        {_, B1} -> case dec_int(B1) of
                       {_, <<Status:16/little, _/binary>>} -> Status;
                       _ -> 0
                   end;
        error -> 0
    end.

%% An ERR packet after its 0xFF: the code, then (protocol 4.1) '#' and the SQL state.
err(<<Code:16/little, $#, State:5/binary, Msg/binary>>) -> {server, Code, State, Msg};
err(<<Code:16/little, Msg/binary>>) -> {server, Code, <<"HY000">>, Msg};
err(_) -> bad_error_packet.
