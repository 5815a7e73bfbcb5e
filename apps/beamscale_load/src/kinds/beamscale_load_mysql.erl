%% @doc The `mysql' request kind, Tsung's `ts_mysql': the MySQL client protocol spoken from the
%% load node over the user's TCP connection (packets in `beamscale_load_mysql_proto'). `connect'
%% reads the server's handshake (and logs in when given a user), `authenticate' logs in with
%% `mysql_native_password' (other plugins are refused), `sql' sends COM_QUERY and reads its whole
%% response, counting the rows returned, `close' sends COM_QUIT. An ERR packet is an error whose
%% reason is its code, SQL state and message, as the server wrote them.
-module(beamscale_load_mysql).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1, format_error/1]).
-export([name/0, tsung/0, from_tsung/3]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/3, req/3, fail/4]).
-export_type([conn/0]).

%% The stream, the bytes received but not used, and where the session is: TCP open with the
%% handshake unread, the handshake read (its salt kept for the login), or logged in.
-type conn() :: {mysql, beamscale_load_tcp:socket(), binary(),
                 greeting | {greeted, beamscale_load_mysql_proto:greeting()} | ready}.

%% The largest packet a server may send: a packet is held whole, and its size comes from the
%% network. Rows are counted one packet at a time, so a result set of any size stays within it.
-define(MAX_PACKET, 16 * 1024 * 1024).
-define(KEYS, "type, user, password, database, query").

%% @doc `#{type => connect}' (the handshake only) or `#{type => connect, user => U, password =>
%% P, database => D}' (and the login), `#{type => authenticate, user, password, database}',
%% `#{type => sql, query => Sql}' or `#{type => close}'; against host:port over plain TCP.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(_Spec, #{tls := _}) -> {error, target, "mysql over TLS is not supported (plain TCP)"};
check(_Spec, #{transport := udp}) -> {error, target, "mysql needs a TCP target"};
check(#{type := Type} = Spec, #{host := _}) ->
    case {Type, maps:keys(maps:remove(type, Spec))} of
        {connect, []} -> {ok, #{type => connect, login => none}};
        {connect, Keys} -> only(Keys, [user, password, database], fun() -> login_spec(connect, Spec)
                                                                   end);
        {authenticate, Keys} -> only(Keys, [user, password, database],
                                     fun() -> login_spec(authenticate, Spec) end);
        {sql, Keys} -> only(Keys, ['query'], fun() -> sql(Spec) end);
        {close, Keys} -> only(Keys, [], fun() -> {ok, #{type => close}} end);
        _ -> {error, type, "expected connect, authenticate, sql or close"}
    end;
check(#{type := _}, _Target) -> {error, target, "mysql needs a host:port target"};
check(_Spec, _Target) -> {error, type, "missing (connect, authenticate, sql or close)"}.

only(Keys, Known, Then) ->
    case Keys -- Known of
        [] -> Then();
        [K | _] -> {error, K, "unknown key (known: " ++ ?KEYS ++ ")"}
    end.

login_spec(Type, Spec) ->
    case [{K, text(maps:get(K, Spec, <<>>))} || K <- [user, password, database]] of
        [{user, <<>>} | _] -> {error, user, "missing (a user name)"};
        Fields ->
            case [K || {K, error} <- Fields] of
                [K | _] -> {error, K, "expected a string"};
                [] -> {ok, #{type => Type, login => maps:from_list(Fields)}}
            end
    end.

sql(#{'query' := Q}) ->
    case text(Q) of
        error -> {error, 'query', "expected the SQL text (a string)"};
        <<>> -> {error, 'query', "expected a non-empty SQL text"};
        %% The whole COM_QUERY packet, made once here rather than per query.
        B -> {ok, #{type => sql, 'query' => beamscale_load_mysql_proto:packet(
                                                0, beamscale_load_mysql_proto:query(B))}}
    end;
sql(_) -> {error, 'query', "missing (the SQL text)"}.

text(T) ->
    try unicode:characters_to_binary(T) of
        B when is_binary(B) -> B;
        _ -> error
    catch error:badarg -> error
    end.

%% @doc Open the TCP connection; the `connect' request reads the handshake over it.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(Target) ->
    case beamscale_load_tcp:connect(Target) of
        {ok, {S, Buf}} -> {ok, {mysql, S, Buf, greeting}};
        {error, _} = Error -> Error
    end.

%% @doc One step: the handshake (and login), the login, a query and its response, or COM_QUIT.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{type := close}, {mysql, S, _, Phase}, _Timeout) ->
    %% Without a login the server expects no command: the connection is just closed.
    _ = [beamscale_load_tcp:send(S, beamscale_load_mysql_proto:packet(
                                      0, beamscale_load_mysql_proto:quit()))
         || Phase =:= ready],
    ok = beamscale_load_tcp:drop(S),
    {ok, closed};
request(#{type := connect, login := Login}, {mysql, S, Buf, greeting}, Timeout) ->
    Deadline = beamscale_load_tcp:deadline(Timeout),
    case next(S, Buf, Deadline) of
        {ok, _Seq, P, Rest} ->
            case beamscale_load_mysql_proto:greeting(P) of
                {ok, G} when Login =:= none -> {ok, {mysql, S, Rest, {greeted, G}}};
                {ok, G} -> login(S, Rest, G, Login, Deadline);
                {error, Reason} -> gone(S, reason(Reason))
            end;
        {error, Reason} -> gone(S, Reason)
    end;
request(#{type := connect}, Conn, _Timeout) -> {error, {?MODULE, already_connected}, Conn};
request(#{type := authenticate, login := Login}, {mysql, S, Buf, {greeted, G}}, Timeout) ->
    login(S, Buf, G, Login, beamscale_load_tcp:deadline(Timeout));
request(#{type := authenticate}, {mysql, _, _, ready} = Conn, _Timeout) ->
    {error, {?MODULE, already_authenticated}, Conn};
request(#{type := sql, 'query' := Q}, {mysql, S, Buf, ready}, Timeout) ->
    case beamscale_load_tcp:send(S, Q) of
        ok -> response(S, Buf, beamscale_load_tcp:deadline(Timeout),
                       beamscale_load_mysql_proto:response_start());
        {error, Reason} -> gone(S, Reason)
    end;
request(#{type := sql}, {mysql, S, _, _}, _Timeout) -> gone(S, {?MODULE, not_authenticated});
request(#{type := authenticate}, {mysql, S, _, greeting}, _Timeout) ->
    gone(S, {?MODULE, not_connected}).

%% The handshake response (sequence 1, after the greeting's 0), then the server's verdict; a
%% switch to `mysql_native_password' with a new salt is answered once.
login(S, Buf, G, #{user := U, password := P, database := D}, Deadline) ->
    case beamscale_load_mysql_proto:auth_response(G, U, P, D) of
        {ok, Response} ->
            case beamscale_load_tcp:send(S, beamscale_load_mysql_proto:packet(1, Response)) of
                ok -> verdict(S, Buf, P, Deadline, switch);
                {error, Reason} -> gone(S, Reason)
            end;
        {error, Reason} -> gone(S, {?MODULE, Reason})
    end.

verdict(S, Buf, Password, Deadline, Switch) ->
    case next(S, Buf, Deadline) of
        {ok, Seq, P, Rest} ->
            case beamscale_load_mysql_proto:auth_reply(P) of
                ok -> {ok, {mysql, S, Rest, ready}};
                {switch, Salt} when Switch =:= switch ->
                    Auth = beamscale_load_mysql_proto:scramble(Password, Salt),
                    Packet = beamscale_load_mysql_proto:packet((Seq + 1) band 255, Auth),
                    case beamscale_load_tcp:send(S, Packet) of
                        ok -> verdict(S, Rest, Password, Deadline, no_switch);
                        {error, Reason} -> gone(S, Reason)
                    end;
                {switch, _} -> gone(S, {?MODULE, bad_auth_reply});
                {error, Reason} -> gone(S, reason(Reason))
            end;
        {error, Reason} -> gone(S, Reason)
    end.

%% A query's response, packet after packet, until its end; rows counted for the run. After an
%% ERR packet the connection can take the next query.
response(S, Buf, Deadline, St) ->
    case next(S, Buf, Deadline) of
        {ok, _Seq, P, Rest} ->
            case beamscale_load_mysql_proto:response(P, St) of
                {more, St1} -> response(S, Rest, Deadline, St1);
                {done, Rows} ->
                    beamscale_load_request:count(rows, Rows),
                    {ok, {mysql, S, Rest, ready}};
                {error, {server, _, _, _} = E} -> {error, server(E), {mysql, S, Rest, ready}};
                {error, Reason} -> gone(S, reason(Reason))
            end;
        {error, Reason} -> gone(S, Reason)
    end.

%% The next whole packet, reading until the deadline.
next(S, Buf, Deadline) ->
    case beamscale_load_mysql_proto:decode(Buf, ?MAX_PACKET) of
        {ok, _, _, _} = Packet -> Packet;
        more -> case beamscale_load_reader:recv_at_least(S, Buf,
                                                         beamscale_load_mysql_proto:need(Buf),
                                                         Deadline) of
                    {ok, B} -> next(S, B, Deadline);
                    {error, _} = Error -> Error
                end;
        {error, Reason} -> {error, {?MODULE, Reason}}
    end.

gone(S, Reason) ->
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% A server's ERR packet is counted by its code, state and message (`beamscale_load_reasons'
%% writes them as the server did); the other failures are this module's.
reason({server, _, _, _} = E) -> server(E);
reason(Reason) -> {?MODULE, Reason}.

server({server, Code, State, Msg}) -> {mysql_error, Code, State, Msg}.

%% @doc Close the connection (without COM_QUIT: the session is over).
-spec close(conn()) -> ok.
close({mysql, S, _, _}) -> beamscale_load_tcp:drop(S).

%% @doc The text of a MySQL error: a server's in its own words, with its code and SQL state.
-spec format_error({?MODULE, term()} | {mysql_error, term(), term(), term()} | term()) ->
    iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({mysql_error, Code, State, Msg}) -> format_error({server, Code, State, Msg});
format_error({server, Code, State, Msg}) ->
    io_lib:format("mysql error ~b (~ts): ~ts", [Code, State, Msg]);
format_error({auth_plugin, Name}) ->
    io_lib:format("the server asks for the auth plugin ~ts; beamscale speaks "
                  "mysql_native_password only", [Name]);
format_error(already_connected) -> "connect on a MySQL connection already open";
format_error(already_authenticated) -> "authenticate on a MySQL connection already logged in";
format_error(not_connected) -> "authenticate before the MySQL connect";
format_error(not_authenticated) -> "sql before the MySQL login (connect with a user, or "
                                   "authenticate)";
format_error(bad_greeting) -> "not a MySQL server handshake";
format_error({protocol_version, V}) -> io_lib:format("MySQL protocol version ~b, not 10", [V]);
format_error(bad_auth_reply) -> "an unexpected answer to the MySQL login";
format_error(local_infile) -> "the server asked for a local file (LOAD DATA LOCAL): refused";
format_error(bad_response) -> "a MySQL response packet out of place";
format_error(bad_error_packet) -> "a malformed MySQL error packet";
%% Not the size the server claimed: one reason, whatever sizes a server makes up.
format_error({packet_too_big, _}) ->
    io_lib:format("mysql: a packet announced above the packet bound (~b bytes): connection "
                  "closed", [?MAX_PACKET]);
format_error(Other) -> io_lib:format("protocol error: ~tp", [Other]).

%% @doc The kind's step name.
-spec name() -> mysql.
name() -> mysql.

%% @doc Tsung's `ts_mysql' sessions and their `<mysql>' element.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_mysql", element => mysql, servers => ["tcp"],
             attributes => [type, database, username, password]}.

%% @doc A `<mysql>' element (below).
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) -> tsung_mysql(E, Ctx).

%% `ts_mysql': `<mysql type="connect">' (the server's handshake), `<mysql type="authenticate"
%% database username password>', `<mysql type="sql">SQL</mysql>', `<mysql type="close">', to the
%% `<server>' (tcp).
tsung_mysql(E, Ctx) ->
    check_attrs(E, Ctx),
    Spec = case req(E, type, Ctx) of
               "connect" -> #{type => connect};
               "authenticate" -> #{type => authenticate, user => req(E, username, Ctx),
                                   password => attr(E, password, ""),
                                   database => attr(E, database, "")};
               "sql" -> #{type => sql, 'query' => unicode:characters_to_binary(
                                                    beamscale_load_tsung_request:text(E))};
               "close" -> #{type => close};
               T -> fail(E, Ctx, "type=\"~ts\" (expected connect, authenticate, sql or close)",
                         [T])
           end,
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    %% Checked here too, so that an empty query names the <mysql> element's line.
    case check(Spec, #{host => "", port => 0}) of
        {ok, _} -> {Spec#{target => Name}, [{Name, Target}]};
        {error, Key, Msg} -> fail(E, Ctx, "~ts: ~ts", [Key, Msg])
    end.
