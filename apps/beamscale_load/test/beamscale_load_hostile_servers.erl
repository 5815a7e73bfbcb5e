%% Test helper (not a suite): misbehaving servers on 127.0.0.1, in this node, for
%% beamscale_load_hostile_SUITE. Each answers what a load test meets when a server breaks (or
%% attacks): endless or giant replies, lying lengths, garbage, resets, bytes during a think,
%% floods of frames, protocol messages out of place. A server is a listening process; each
%% connection is a process linked to it, so stopping the listener stops them all.
-module(beamscale_load_hostile_servers).

-export([start/1, names/0]).

-define(LOOPBACK, {127, 0, 0, 1}).
-define(RECV_MS, 10000).
-define(OK, <<"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok">>).

%% @doc The names of the servers `start/1' knows.
names() ->
    [http_endless_header, http_header_lines, http_huge_length, http_length_2gb,
     http_body_until_close, http_huge_chunk, http_chunk_flood, http_short_body, http_long_body,
     http_garbage, http_not_http, http_reset, http_stream_after, http_slowloris, http_bad_chunk,
     http_bad_length, http_injection,
     ws_pong_flood, ws_giant_frame, ws_masked_frame, ws_garbage_handshake, ws_flood_think,
     mysql_garbage, mysql_endless_packet, pgsql_notices, pgsql_garbage, pgsql_endless_rows,
     tcp_until_endless, raw_stream_think, udp_foreign, ldap_byte_by_byte, xmpp_huge_features,
     ldap_endless_entries, ldap_million_entries].

%% @doc Start server `Name': `#{port, stop => fun(), seen => fun() -> [RequestLine]}'.
start(udp_foreign) -> udp_foreign();
start(Name) -> tcp(handler(Name)).

%% ---- HTTP ----

handler(http_endless_header) -> once("HTTP/1.1 200 OK\r\nX-Endless: ", block($a));
handler(http_header_lines) -> once("HTTP/1.1 200 OK\r\n", binary:copy(<<"X-A: b\r\n">>, 8192));
handler(http_huge_length) ->
    once(["HTTP/1.1 200 OK\r\nContent-Length: 1", lists:duplicate(32, $0), "\r\n\r\n"], block($a));
handler(http_length_2gb) ->
    once("HTTP/1.1 200 OK\r\nContent-Length: 2147483648\r\n\r\n", block($a));
handler(http_body_until_close) -> once("HTTP/1.1 200 OK\r\n\r\n", block($a));
handler(http_huge_chunk) ->
    once("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n", block($a));
handler(http_chunk_flood) ->
    once("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
         binary:copy(<<"1\r\na\r\n">>, 8192));
handler(http_short_body) ->
    fun(S, Log) ->
            _ = request(S, Log, <<>>),
            ok = gen_tcp:send(S, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"),
            hold(S)
    end;
handler(http_long_body) ->
    keep_alive(fun() -> ["HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", lists:duplicate(50, $x)]
               end);
handler(http_garbage) -> keep_alive(fun() -> crypto:strong_rand_bytes(200) end);
handler(http_not_http) -> keep_alive(fun() -> "SSH-2.0-OpenSSH_9.2\r\n" end);
handler(http_reset) ->
    fun(S, Log) ->
            _ = request(S, Log, <<>>),
            ok = gen_tcp:send(S, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc"),
            ok = inet:setopts(S, [{linger, {true, 0}}]),
            gen_tcp:close(S)
    end;
handler(http_stream_after) ->
    fun(S, Log) -> _ = request(S, Log, <<>>), ok = gen_tcp:send(S, ?OK), endless(S, block($z)) end;
handler(http_slowloris) ->
    fun(S, Log) ->
            _ = request(S, Log, <<>>),
            ok = gen_tcp:send(S, "HTTP/1.1 200 OK\r\nX-Slow: "),
            drip(S)
    end;
handler(http_bad_chunk) ->
    keep_alive(fun() -> "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" end);
handler(http_bad_length) ->
    keep_alive(fun() -> "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n" end);
handler(http_injection) ->
    %% The body, taken into a variable and put in the next request's path, would smuggle a
    %% second request (logged here if it came).
    Body = <<"/a HTTP/1.1\r\nHost: x\r\n\r\nGET /smuggled">>,
    keep_alive(fun() -> ["HTTP/1.1 200 OK\r\nContent-Length: ",
                         integer_to_list(byte_size(Body)), "\r\n\r\n", Body]
               end);
%% ---- WebSocket ----
handler(ws_pong_flood) -> ws(fun(S) -> endless(S, binary:copy(<<16#8A, 0>>, 32768)) end);
handler(ws_giant_frame) ->
    ws(fun(S) -> ok = gen_tcp:send(S, <<16#82, 127, (1 bsl 62):64>>), endless(S, block($g)) end);
handler(ws_masked_frame) ->
    ws(fun(S) -> _ = gen_tcp:recv(S, 0, ?RECV_MS),
                 ok = gen_tcp:send(S, <<16#81, 16#82, 1, 2, 3, 4, 5, 6>>), hold(S) end);
handler(ws_garbage_handshake) ->
    fun(S, Log) -> _ = request(S, Log, <<>>), ok = gen_tcp:send(S, "\0\1garbage\r\n\r\n"), hold(S)
    end;
handler(ws_flood_think) ->
    ws(fun(S) -> endless(S, binary:copy(<<16#82, 126, 1000:16, (block($f, 1000))/binary>>, 64))
       end);
%% ---- MySQL, PostgreSQL ----
handler(mysql_garbage) ->
    fun(S, _Log) -> ok = gen_tcp:send(S, <<5, 0, 0, 0, "hello">>), hold(S) end;
handler(mysql_endless_packet) ->
    fun(S, _Log) -> ok = gen_tcp:send(S, <<16#FFFFFF:24/little, 0>>), endless(S, block($m)) end;
handler(pgsql_notices) -> pg(fun pg_query/2);
handler(pgsql_garbage) ->
    fun(S, _Log) -> _ = gen_tcp:recv(S, 0, ?RECV_MS), ok = gen_tcp:send(S, "hello, garbage"),
                    hold(S) end;
handler(pgsql_endless_rows) ->
    pg(fun(S, _) -> endless(S, binary:copy(<<$D, 11:32, 1:16, 1:32, "1">>, 4096)) end);
%% ---- LDAP: well-behaved, its answers one byte per TCP segment ----
handler(ldap_byte_by_byte) -> fun(S, _Log) -> ok = inet:setopts(S, [{nodelay, true}]),
                                              ldap_bytes(S, <<>>) end;
%% ---- LDAP: a search answered by entries without end, or by 10^6 and its done ----
handler(ldap_endless_entries) -> ldap_search(fun(S, Id) -> endless(S, entries(Id, 4096)) end);
handler(ldap_million_entries) ->
    ldap_search(fun(S, Id) ->
                        Block = entries(Id, 10000),
                        [ok = gen_tcp:send(S, Block) || _ <- lists:seq(1, 100)],
                        ok = gen_tcp:send(S, <<16#30, 12, 2, 1, Id, 16#65, 7, 10, 1, 0, 4, 0,
                                               4, 0>>),
                        hold(S)
                end);
%% ---- XMPP: the stream opened, then features without end ----
handler(xmpp_huge_features) ->
    fun(S, _Log) ->
            _ = gen_tcp:recv(S, 0, ?RECV_MS),
            ok = gen_tcp:send(S, ["<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
                                  "xmlns:stream='http://etherx.jabber.org/streams' id='h' "
                                  "from='bs.test' version='1.0'><stream:features>"]),
            endless(S, binary:copy(<<"<feature xmlns='urn:x'/>">>, 2048))
    end;
%% ---- raw ----
handler(tcp_until_endless) ->
    fun(S, _Log) -> _ = gen_tcp:recv(S, 0, ?RECV_MS), endless(S, block($t)) end;
handler(raw_stream_think) ->
    fun(S, _Log) -> _ = gen_tcp:recv(S, 0, ?RECV_MS), endless(S, block($r)) end.

%% One request read, `Head' sent, then `Block' forever.
once(Head, Block) ->
    fun(S, Log) -> _ = request(S, Log, <<>>), ok = gen_tcp:send(S, Head), endless(S, Block) end.

%% Each request answered with `Reply()' on the same connection.
keep_alive(Reply) -> fun(S, Log) -> keep_alive(S, Log, <<>>, Reply) end.

keep_alive(S, Log, Buf, Reply) ->
    Rest = request(S, Log, Buf),
    ok = gen_tcp:send(S, Reply()),
    keep_alive(S, Log, Rest, Reply).

%% The bytes after one request's head, its request line logged.
request(S, Log, Buf) ->
    case binary:match(Buf, <<"\r\n\r\n">>) of
        {At, 4} ->
            [Line | _] = binary:split(Buf, <<"\r\n">>),
            Log ! {seen, Line},
            binary:part(Buf, At + 4, byte_size(Buf) - At - 4);
        nomatch ->
            {ok, Data} = gen_tcp:recv(S, 0, ?RECV_MS),
            request(S, Log, <<Buf/binary, Data/binary>>)
    end.

block(C) -> block(C, 65536).
block(C, N) -> binary:copy(<<C>>, N).

endless(S, Block) ->
    case gen_tcp:send(S, Block) of
        ok -> endless(S, Block);
        {error, _} -> ok
    end.

%% A byte every 100 ms, forever (slowloris, server side).
drip(S) ->
    timer:sleep(100),
    case gen_tcp:send(S, "a") of
        ok -> drip(S);
        {error, _} -> ok
    end.

%% Keep the connection open without a word until the client goes.
hold(S) ->
    case gen_tcp:recv(S, 0) of
        {ok, _} -> hold(S);
        {error, _} -> ok
    end.

%% The WebSocket opening handshake answered properly, then `Then(Socket)'.
ws(Then) ->
    fun(S, Log) ->
            {ok, Head} = head(S, <<>>),
            Log ! {seen, hd(binary:split(Head, <<"\r\n">>))},
            {match, [Key]} = re:run(Head, "Sec-WebSocket-Key: *([^\r]+)\r\n",
                                    [{capture, all_but_first, binary}, caseless]),
            Accept = base64:encode(crypto:hash(sha, <<Key/binary,
                                                      "258EAFA5-E914-47DA-95CA-C5AB0DC85B11">>)),
            ok = gen_tcp:send(S, ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                  "Connection: Upgrade\r\nSec-WebSocket-Accept: ", Accept,
                                  "\r\n\r\n"]),
            Then(S)
    end.

head(S, Buf) ->
    case binary:match(Buf, <<"\r\n\r\n">>) of
        {_, _} -> {ok, Buf};
        nomatch -> {ok, D} = gen_tcp:recv(S, 0, ?RECV_MS), head(S, <<Buf/binary, D/binary>>)
    end.

%% A PostgreSQL server that trusts everyone and sends notices everywhere the protocol allows
%% them: before authentication ends, between ParameterStatus messages, in a query's reply.
pg(Query) ->
    fun(S, Log) ->
            {ok, <<Len:32>>} = gen_tcp:recv(S, 4, ?RECV_MS),
            {ok, _Startup} = gen_tcp:recv(S, Len - 4, ?RECV_MS),
            ok = gen_tcp:send(S, [notice(), <<$R, 8:32, 0:32>>, notice(),
                                  param("server_version", "16.0"), notice(), <<$Z, 5:32, $I>>]),
            pg_loop(S, Log, Query)
    end.

pg_loop(S, Log, Query) ->
    case gen_tcp:recv(S, 5, ?RECV_MS) of
        {ok, <<$X, _:32>>} -> gen_tcp:close(S);
        {ok, <<_Type, Len:32>>} ->
            {ok, _} = gen_tcp:recv(S, Len - 4, ?RECV_MS),
            Query(S, Log),
            pg_loop(S, Log, Query);
        {error, _} -> ok
    end.

pg_query(S, _Log) ->
    ok = gen_tcp:send(S, [notice(), <<$D, 11:32, 1:16, 1:32, "1">>, notice(),
                          <<$C, 13:32, "SELECT 1", 0>>, <<$Z, 5:32, $I>>]).

notice() ->
    Body = <<$S, "NOTICE", 0, $M, "hostile notice", 0, 0>>,
    <<$N, (byte_size(Body) + 4):32, Body/binary>>.

param(K, V) ->
    Body = iolist_to_binary([K, 0, V, 0]),
    <<$S, (byte_size(Body) + 4):32, Body/binary>>.

%% Each request (a bind) answered by a BindResponse of success for its id, byte by byte.
ldap_bytes(S, Buf) ->
    case beamscale_load_ldap_codec:frame(Buf, 65536) of
        {ok, Msg, Rest} ->
            {ok, Id, {bindRequest, _}} = beamscale_load_ldap_codec:decode(Msg),
            Reply = <<16#30, 12, 2, 1, Id, 16#61, 7, 10, 1, 0, 4, 0, 4, 0>>,
            [begin ok = gen_tcp:send(S, <<B>>), timer:sleep(5) end || <<B>> <= Reply],
            ldap_bytes(S, Rest);
        more ->
            case gen_tcp:recv(S, 0, ?RECV_MS) of
                {ok, D} -> ldap_bytes(S, <<Buf/binary, D/binary>>);
                {error, _} -> ok
            end
    end.

%% A search request read, then `Answer(Socket, Id)'.
ldap_search(Answer) ->
    fun(S, _Log) -> ldap_search(S, <<>>, Answer) end.

ldap_search(S, Buf, Answer) ->
    case beamscale_load_ldap_codec:frame(Buf, 65536) of
        {ok, Msg, _Rest} ->
            {ok, Id, {searchRequest, _}} = beamscale_load_ldap_codec:decode(Msg),
            Answer(S, Id);
        more ->
            {ok, D} = gen_tcp:recv(S, 0, ?RECV_MS),
            ldap_search(S, <<Buf/binary, D/binary>>, Answer)
    end.

%% `N' SearchResultEntry messages of id `Id' (< 128), 15 bytes each: `cn=x', no attributes.
entries(Id, N) -> binary:copy(<<16#30, 13, 2, 1, Id, 16#64, 8, 4, 4, "cn=x", 16#30, 0>>, N).

%% ---- plumbing ----

tcp(Handler) ->
    Parent = self(),
    Log = spawn(fun() -> log([]) end),
    Listener = spawn(fun() ->
                             {ok, L} = gen_tcp:listen(0, [binary, {ip, ?LOOPBACK}, {active, false},
                                                          {reuseaddr, true}, {backlog, 64}]),
                             {ok, Port} = inet:port(L),
                             Parent ! {self(), Port},
                             accept(L, Handler, Log)
                     end),
    Port = receive {Listener, P} -> P after ?RECV_MS -> error(no_listener) end,
    server(Port, [Listener, Log], Log).

server(Port, Pids, Log) ->
    #{port => Port,
      stop => fun() -> [exit(P, kill) || P <- Pids], ok end,
      seen => fun() -> Log ! {get, self()},
                       receive {seen, Lines} -> Lines after ?RECV_MS -> error(no_log) end
              end}.

accept(L, Handler, Log) ->
    {ok, S} = gen_tcp:accept(L),
    Pid = spawn_link(fun() -> receive go -> ok end, catch Handler(S, Log) end),
    ok = gen_tcp:controlling_process(S, Pid),
    Pid ! go,
    accept(L, Handler, Log).

log(Lines) ->
    receive
        {seen, Line} -> log([Line | Lines]);
        {get, From} -> From ! {seen, lists:reverse(Lines)}, log(Lines)
    end.

%% Requests received on one port, answered from another: a client that takes any datagram for
%% the reply counts these; one connected to the server's address and port never sees them.
udp_foreign() ->
    Parent = self(),
    Pid = spawn(fun() ->
                        {ok, In} = gen_udp:open(0, [binary, {ip, ?LOOPBACK}, {active, false}]),
                        {ok, Out} = gen_udp:open(0, [binary, {ip, ?LOOPBACK}, {active, false}]),
                        {ok, Port} = inet:port(In),
                        Parent ! {self(), Port},
                        foreign(In, Out)
                end),
    Port = receive {Pid, P} -> P after ?RECV_MS -> error(no_listener) end,
    server(Port, [Pid], spawn(fun() -> log([]) end)).

foreign(In, Out) ->
    {ok, {Ip, Port, Data}} = gen_udp:recv(In, 0),
    ok = gen_udp:send(Out, Ip, Port, Data),
    foreign(In, Out).
