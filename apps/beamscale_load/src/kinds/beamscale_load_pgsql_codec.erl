%% @doc PostgreSQL's frontend/backend protocol 3.0, pure: the messages a client sends, the
%% backend's messages cut from a byte stream, authentication requests and error fields read,
%% MD5 password hashing and the client side of SCRAM-SHA-256 (RFC 5802, RFC 7677).
-module(beamscale_load_pgsql_codec).

-export([ssl_request/0, startup/2, password/1, sasl_initial/2, sasl_response/1, query/1,
         parse/2, bind/2, describe/2, execute/2, sync/0, terminate/0]).
-export([flush/0, copy_data/1, copy_done/0, copy_fail/1]).
-export([decode/2, auth/1, fields/1, md5/3]).
-export([scram_first/2, scram_final/3, scram_verify/2]).
-export_type([message/0, auth/0]).

%% A backend message: its type byte and its body.
-type message() :: {byte(), binary()}.
-type auth() :: ok | cleartext | {md5, binary()} | {sasl, [binary()]} | {sasl_continue, binary()}
              | {sasl_final, binary()} | {unsupported, non_neg_integer()}.

%% Protocol 3.0 (major 3, minor 0) in the startup message.
-define(VERSION, 196608).
%% The SSLRequest's code in place of a version: 1234 and 5679 in the two 16-bit halves.
-define(SSL_REQUEST, 80877103).
-define(SCRAM, <<"SCRAM-SHA-256">>).

%%% Frontend messages

%% @doc The SSLRequest sent before the startup message: the server answers `S' (then the TLS
%% handshake) or `N'.
-spec ssl_request() -> binary().
ssl_request() -> <<8:32, ?SSL_REQUEST:32>>.

%% @doc The startup message: protocol 3.0, the user and the database.
-spec startup(iodata(), iodata()) -> iodata().
startup(User, Database) ->
    Body = [<<?VERSION:32>>, "user", 0, User, 0, "database", 0, Database, 0, 0],
    [<<(iolist_size(Body) + 4):32>>, Body].

%% @doc A PasswordMessage (cleartext or MD5 hash).
-spec password(iodata()) -> iodata().
password(P) -> msg($p, [P, 0]).

%% @doc SASLInitialResponse: the mechanism and the client's first message.
-spec sasl_initial(binary(), iodata()) -> iodata().
sasl_initial(Mechanism, First) ->
    msg($p, [Mechanism, 0, <<(iolist_size(First)):32>>, First]).

%% @doc SASLResponse: the client's final message.
-spec sasl_response(iodata()) -> iodata().
sasl_response(Data) -> msg($p, Data).

%% @doc A simple Query.
-spec query(iodata()) -> iodata().
query(Sql) -> msg($Q, [Sql, 0]).

%% @doc Parse: a statement named `Name' (empty: the unnamed one), no parameter types given.
-spec parse(iodata(), iodata()) -> iodata().
parse(Name, Sql) -> msg($P, [Name, 0, Sql, 0, <<0:16>>]).

%% @doc Bind: portal `Portal' to statement `Name'; parameters as text (`null' for NULL),
%% results as text.
-spec bind({iodata(), iodata()}, [iodata() | null]) -> iodata().
bind({Portal, Name}, Params) ->
    Values = [case P of
                  null -> <<-1:32/signed>>;
                  _ -> [<<(iolist_size(P)):32>>, P]
              end || P <- Params],
    msg($B, [Portal, 0, Name, 0, <<0:16, (length(Params)):16>>, Values, <<0:16>>]).

%% @doc Describe a statement (`statement') or a portal (`portal').
-spec describe(statement | portal, iodata()) -> iodata().
describe(statement, Name) -> msg($D, [$S, Name, 0]);
describe(portal, Name) -> msg($D, [$P, Name, 0]).

%% @doc Execute a portal, at most `MaxRows' rows (0: all).
-spec execute(iodata(), non_neg_integer()) -> iodata().
execute(Portal, MaxRows) -> msg($E, [Portal, 0, <<MaxRows:32>>]).

%% @doc Sync: the end of an extended query; the backend answers ReadyForQuery.
-spec sync() -> iodata().
sync() -> msg($S, []).

%% @doc Flush: the backend sends what it has for the messages before it, without a Sync.
-spec flush() -> iodata().
flush() -> msg($H, []).

%% @doc CopyData: bytes of a COPY FROM STDIN.
-spec copy_data(iodata()) -> iodata().
copy_data(Data) -> msg($d, Data).

%% @doc CopyDone: the end of a COPY FROM STDIN's data.
-spec copy_done() -> iodata().
copy_done() -> msg($c, []).

%% @doc CopyFail: the COPY FROM STDIN aborted, with the client's reason.
-spec copy_fail(iodata()) -> iodata().
copy_fail(Reason) -> msg($f, [Reason, 0]).

%% @doc Terminate.
-spec terminate() -> iodata().
terminate() -> msg($X, []).

msg(Type, Body) -> [Type, <<(iolist_size(Body) + 4):32>>, Body].

%%% Backend messages

%% @doc The first whole message of `Buf', `more' when it is not all here, or `too_big' when
%% its length is above `Max' (the length comes from the network).
-spec decode(binary(), pos_integer()) ->
          {ok, message(), binary()} | more
              | {error, {too_big, byte(), non_neg_integer(), pos_integer()} | bad_length}.
decode(<<_Type, Len:32, _/binary>>, _Max) when Len < 4 -> {error, bad_length};
decode(<<Type, Len:32, _/binary>>, Max) when Len - 4 > Max ->
    {error, {too_big, Type, Len - 4, Max}};
decode(<<Type, Len:32, Rest/binary>>, _Max) when byte_size(Rest) >= Len - 4 ->
    N = Len - 4,
    <<Body:N/binary, More/binary>> = Rest,
    {ok, {Type, Body}, More};
decode(_Buf, _Max) -> more.

%% @doc An Authentication message's body.
-spec auth(binary()) -> auth().
auth(<<0:32>>) -> ok;
auth(<<3:32>>) -> cleartext;
auth(<<5:32, Salt:4/binary>>) -> {md5, Salt};
auth(<<10:32, Mechs/binary>>) -> {sasl, [M || M <- binary:split(Mechs, <<0>>, [global]),
                                              M =/= <<>>]};
auth(<<11:32, Data/binary>>) -> {sasl_continue, Data};
auth(<<12:32, Data/binary>>) -> {sasl_final, Data};
auth(<<N:32, _/binary>>) -> {unsupported, N};
auth(_) -> {unsupported, 0}.

%% @doc The fields of an ErrorResponse or NoticeResponse, by their code byte (`$C': SQLSTATE,
%% `$M': the message, `$S': the severity).
-spec fields(binary()) -> #{byte() => binary()}.
fields(Body) -> fields(Body, #{}).

fields(<<0, _/binary>>, Acc) -> Acc;
fields(<<Code, Rest/binary>>, Acc) ->
    case binary:split(Rest, <<0>>) of
        [V, More] -> fields(More, Acc#{Code => V});
        [V] -> Acc#{Code => V}
    end;
fields(<<>>, Acc) -> Acc.

%%% Passwords

%% @doc The MD5 password message's text: `md5' and hex(md5(hex(md5(Password User)) Salt)).
-spec md5(iodata(), iodata(), binary()) -> binary().
md5(User, Password, Salt) ->
    Inner = hex(crypto:hash(md5, [Password, User])),
    <<"md5", (hex(crypto:hash(md5, [Inner, Salt])))/binary>>.

hex(B) -> << <<(hex_digit(N))>> || <<N:4>> <= B >>.

hex_digit(N) when N < 10 -> $0 + N;
hex_digit(N) -> $a + N - 10.

%% @doc The client's first SCRAM message and its bare part, for user `User' (PostgreSQL takes
%% the startup message's and wants it empty here) and nonce `Nonce' (printable, no comma),
%% without channel binding.
-spec scram_first(binary(), binary()) -> {binary(), binary()}.
scram_first(User, Nonce) ->
    Bare = <<"n=", User/binary, ",r=", Nonce/binary>>,
    {<<"n,,", Bare/binary>>, Bare}.

%% @doc The client's final message and the server signature to expect, from the server's first
%% message, the first message's bare part and the password; `{error, Why}' for a server message
%% that is not SCRAM's or whose nonce does not extend ours.
-spec scram_final(binary(), binary(), iodata()) ->
          {ok, binary(), binary()} | {error, term()}.
scram_final(ServerFirst, ClientBare, Password) ->
    Attrs = attrs(ServerFirst),
    #{$r := Nonce} = attrs(ClientBare),
    case Attrs of
        #{$r := R, $s := S64, $i := I} ->
            case {binary:longest_common_prefix([R, Nonce]) =:= byte_size(Nonce),
                  catch base64:decode(S64), catch binary_to_integer(I)} of
                {true, Salt, Iter} when is_binary(Salt), is_integer(Iter), Iter > 0,
                                        Iter =< 1000000 ->
                    final(ServerFirst, ClientBare, R, Salt, Iter, Password);
                {false, _, _} -> {error, nonce_mismatch};
                _ -> {error, bad_server_first}
            end;
        _ -> {error, bad_server_first}
    end.

final(ServerFirst, ClientBare, R, Salt, Iter, Password) ->
    Salted = crypto:pbkdf2_hmac(sha256, iolist_to_binary(Password), Salt, Iter, 32),
    ClientKey = crypto:mac(hmac, sha256, Salted, <<"Client Key">>),
    StoredKey = crypto:hash(sha256, ClientKey),
    %% c=biws: base64 of "n,,", no channel binding.
    WithoutProof = <<"c=biws,r=", R/binary>>,
    AuthMessage = <<ClientBare/binary, ",", ServerFirst/binary, ",", WithoutProof/binary>>,
    ClientSig = crypto:mac(hmac, sha256, StoredKey, AuthMessage),
    Proof = crypto:exor(ClientKey, ClientSig),
    ServerKey = crypto:mac(hmac, sha256, Salted, <<"Server Key">>),
    ServerSig = crypto:mac(hmac, sha256, ServerKey, AuthMessage),
    {ok, <<WithoutProof/binary, ",p=", (base64:encode(Proof))/binary>>, ServerSig}.

%% @doc Whether the server's final message carries the signature expected.
-spec scram_verify(binary(), binary()) -> ok | {error, term()}.
scram_verify(ServerFinal, Expected) ->
    case attrs(ServerFinal) of
        #{$v := V} -> case catch base64:decode(V) of
                          Expected -> ok;
                          _ -> {error, bad_server_signature}
                      end;
        #{$e := E} -> {error, {server_error, E}};
        _ -> {error, bad_server_final}
    end.

attrs(Msg) ->
    maps:from_list([{K, V} || <<K, $=, V/binary>> <- binary:split(Msg, <<",">>, [global])]).
