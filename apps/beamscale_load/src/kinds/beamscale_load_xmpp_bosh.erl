%% @doc XMPP over BOSH (XEP-0124, XEP-0206) for the `xmpp' kind: HTTP/1.1 long polling on two
%% keep-alive connections to the same host:port. The session is made with `hold=1': the server
%% keeps one request open until it has stanzas for the user (or `wait' seconds pass), and a new
%% request makes it answer the one it holds. So the user sends on whichever connection is free,
%% and keeps one empty request (a poll) open while it waits. Each response's `<body>' wrapper is
%% taken off and its stanzas go to the connection's buffer, cut there by
%% `beamscale_load_xmpp_stream' as over TCP. A response is bounded by the target's
%% `max_reply_bytes'; every poll has the request's deadline (and the server's `wait').
-module(beamscale_load_xmpp_bosh).

-export([open/3, send/2, poll/1, more/2, owns/2, feed/3, socks/1, restart/1, close/1,
         drop/1, format_error/1]).

-define(NS, "http://jabber.org/protocol/httpbind").
%% Seconds the server may hold a poll (the session's `wait').
-define(WAIT, 30).
%% The longest response head.
-define(MAX_HEAD, 8192).

-type conn() :: map().

%% @doc A BOSH session's state in the connection: its path, its first socket (the kind's
%% connection) and the target to open the second one to.
-spec open(conn(), binary(), map()) -> conn().
open(C, Path, Target) ->
    #{s := S} = C,
    Rid = rand:uniform(1 bsl 40),
    C#{bosh => #{path => Path, target => Target, rid => Rid, sid => none,
                 socks => #{S => {free, <<>>}}}}.

%% @doc Send `Bytes' (a stanza, or the session's creation or restart when it is the stream
%% header) in a `<body>' on a free connection, the second one opened when needed.
-spec send(conn(), iodata()) -> {ok, conn()} | {error, term()}.
send(#{bosh := B} = C, Bytes) ->
    case free(B) of
        {ok, S, B1} -> post(C#{bosh := B1}, S, body(B1, Bytes));
        %% Both requests out: the server answers the older at once (hold=1).
        busy ->
            case recv(C, erlang:monotonic_time(millisecond) + (?WAIT + 10) * 1000) of
                {ok, C1} -> send(C1, Bytes);
                {error, _} = E -> E
            end;
        {error, _} = E -> E
    end.

%% @doc Keep one request open (a poll) when none is out, so that the server has one to answer
%% with the user's stanzas.
-spec poll(conn()) -> {ok, conn()} | {error, term()}.
poll(#{bosh := #{sid := Sid, socks := Socks}} = C) ->
    case Sid =/= none andalso [S || {S, {busy, _}} <- maps:to_list(Socks)] of
        [] -> send(C, <<>>);
        _ -> {ok, C}
    end.

%% The session's creation (no sid yet), a restart, or stanzas.
body(#{sid := none, rid := Rid, target := T}, _Header) ->
    ["<body content='text/xml; charset=utf-8' hold='1' rid='", integer_to_binary(Rid),
     "' to='", domain(T), "' wait='", integer_to_binary(?WAIT), "' ver='1.6' xml:lang='en' "
     "xmpp:version='1.0' xmlns='" ?NS "' xmlns:xmpp='urn:xmpp:xbosh'/>"];
body(#{sid := Sid, rid := Rid, restart := D}, _Header) ->
    ["<body rid='", integer_to_binary(Rid), "' sid='", Sid, "' to='", D,
     "' xml:lang='en' xmpp:restart='true' xmlns='" ?NS "' xmlns:xmpp='urn:xmpp:xbosh'/>"];
body(#{sid := Sid, rid := Rid}, Bytes) ->
    ["<body rid='", integer_to_binary(Rid), "' sid='", Sid, "' xmlns='" ?NS "'>",
     client_ns(iolist_to_binary(Bytes)), "</body>"].

domain(#{domain := D}) -> D;
domain(_) -> <<"localhost">>.

%% XEP-0206: stanzas in a body are qualified by jabber:client (a child's own xmlns kept).
client_ns(<<>>) -> <<>>;
client_ns(<<"<", _/binary>> = X) ->
    Open = case binary:match(X, <<">">>) of
               {At, _} -> binary:part(X, 0, At);
               nomatch -> X
           end,
    case binary:match(Open, <<"xmlns=">>) of
        nomatch ->
            {At2, _} = binary:match(X, [<<" ">>, <<"/">>, <<">">>]),
            <<Name:At2/binary, Rest/binary>> = X,
            <<Name/binary, " xmlns='jabber:client'", Rest/binary>>;
        _ -> X
    end;
client_ns(X) -> X.

%% A free connection: the first, else the second (opened the first time it is needed); with
%% both busy (the session's two requests out), none.
free(#{socks := Socks} = B) ->
    case [S || {S, {free, _}} <- maps:to_list(Socks)] of
        [S | _] -> {ok, S, B};
        [] when map_size(Socks) >= 2 -> busy;
        [] ->
            case beamscale_load_tcp:connect(maps:get(target, B)) of
                {ok, {S, _}} -> {ok, S, B#{socks := Socks#{S => {free, <<>>}}}};
                {error, _} = E -> E
            end
    end.

post(#{bosh := #{path := Path, rid := Rid, socks := Socks, target := T} = B} = C, S, Body) ->
    Bin = iolist_to_binary(Body),
    #{host := H, port := P} = T,
    Req = ["POST ", Path, " HTTP/1.1\r\nHost: ", host(H), ":", integer_to_binary(P),
           "\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: ",
           integer_to_binary(byte_size(Bin)), "\r\n\r\n", Bin],
    case beamscale_load_tcp:send(S, Req) of
        ok ->
            {_, Buf} = maps:get(S, Socks),
            B1 = maps:remove(restart, B#{rid := Rid + 1, socks := Socks#{S := {busy, Buf}}}),
            {ok, C#{bosh := B1}};
        {error, _} = E -> E
    end.

host(H) when is_list(H) -> list_to_binary(H);
host(H) when is_binary(H) -> H;
host(H) -> list_to_binary(inet:ntoa(H)).

%% @doc The next connect restarts the stream (after SASL), if the session is made.
-spec restart(conn()) -> conn().
restart(#{bosh := #{sid := none}} = C) -> C;
restart(#{bosh := B, domain := D} = C) -> C#{bosh := B#{restart => D}}.

%% @doc What the user waits for is not in its buffer yet: keep a poll open (none is out), then
%% take the next bytes of either connection, before `Deadline' (monotonic ms).
-spec more(conn(), integer()) -> {ok, conn()} | {error, term()}.
more(C, Deadline) ->
    case poll(C) of
        {ok, C1} -> recv(C1, Deadline);
        {error, _} = E -> E
    end.

recv(#{bosh := #{socks := Socks}} = C, Deadline) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive
        {T, S, Data} when (T =:= tcp orelse T =:= ssl), is_map_key(S, Socks) ->
            beamscale_load_request:count(bytes_received, byte_size(Data)),
            feed(C, S, Data);
        {P, S} when (P =:= tcp_passive orelse P =:= ssl_passive), is_map_key(S, Socks) ->
            ok = beamscale_load_reader:arm(S),
            recv(C, Deadline);
        {_Closed, S} when is_map_key(S, Socks) -> {error, closed};
        {_Error, S, R} when is_map_key(S, Socks) -> {error, R}
    after Left -> {error, timeout}
    end.

%% @doc Whether `S' is one of the session's connections.
-spec owns(conn(), term()) -> boolean().
owns(#{bosh := #{socks := Socks}}, S) -> is_map_key(S, Socks);
owns(_C, _S) -> false.

%% @doc Bytes from connection `S': each whole response's stanzas to the buffer, the connection
%% free again.
-spec feed(conn(), term(), binary()) -> {ok, conn()} | {error, term()}.
feed(#{bosh := #{socks := Socks} = B, buf := Buf} = C, S, Data) ->
    {State, Got} = maps:get(S, Socks),
    All = <<Got/binary, Data/binary>>,
    case response(All, beamscale_load_reader:max(S)) of
        more -> {ok, C#{bosh := B#{socks := Socks#{S := {State, All}}}}};
        {ok, Body, Rest} ->
            case unwrap(Body) of
                {ok, Attrs, Stanzas} ->
                    B1 = B#{socks := Socks#{S := {free, <<>>}}},
                    C1 = session(Attrs, C#{bosh := B1, buf := <<Buf/binary, Stanzas/binary>>}),
                    case Rest of
                        <<>> -> {ok, C1};
                        _ -> {error, {?MODULE, unsolicited}}
                    end;
                {error, _} = E -> E
            end;
        {error, _} = E -> E
    end.

%% The session creation's answer names the session (and the stream id, for legacy digest auth).
session(Open, #{bosh := #{sid := none} = B} = C) ->
    St = beamscale_load_xmpp_stream,
    case St:attr(Open, <<"sid">>) of
        undefined -> C;
        Sid -> C#{bosh := B#{sid := Sid}, sid => case St:attr(Open, <<"authid">>) of
                                                    undefined -> Sid;
                                                    A -> A
                                                end}
    end;
session(_Open, C) -> C.

%% One HTTP response of Content-Length, whole: its body and what follows.
response(Bin, Max) ->
    case binary:match(Bin, <<"\r\n\r\n">>) of
        nomatch when byte_size(Bin) > ?MAX_HEAD -> {error, {?MODULE, head_too_big}};
        nomatch -> more;
        {At, 4} ->
            <<Head:At/binary, _:4/binary, Rest/binary>> = Bin,
            case {Head, content_length(Head)} of
                {<<"HTTP/1.", _, " 200", _/binary>>, {ok, N}} when N =< Max ->
                    case Rest of
                        <<Body:N/binary, After/binary>> -> {ok, Body, After};
                        _ -> more
                    end;
                {<<"HTTP/1.", _, " 200", _/binary>>, {ok, _}} ->
                    {error, {?MODULE, {too_big, Max}}};
                %% Chunked or to the close: a BOSH server sends its length (XEP-0124's
                %% examples, ejabberd); without it, said so, not "status 200".
                {<<"HTTP/1.", _, " 200", _/binary>>, error} -> {error, {?MODULE, no_length}};
                {<<"HTTP/1.", _, " ", Status:3/binary, _/binary>>, _} ->
                    {error, {?MODULE, {status, Status}}};
                _ -> {error, {?MODULE, bad_response}}
            end
    end.

content_length(Head) ->
    case re:run(Head, "\r\ncontent-length:[ \t]*([0-9]{1,10})", [caseless,
                                                                  {capture, [1], binary}]) of
        {match, [N]} -> {ok, binary_to_integer(N)};
        nomatch -> error
    end.

%% A response's `<body>': its opening tag and the stanzas inside; `type=terminate' ends the
%% stream (as `</stream:stream>' over TCP).
unwrap(<<"<body", _/binary>> = X) ->
    case binary:match(X, <<">">>) of
        nomatch -> {error, {?MODULE, bad_body}};
        {At, 1} ->
            Open = binary:part(X, 0, At + 1),
            Inner = case binary:at(X, At - 1) of
                        $/ -> <<>>;
                        _ -> inner(binary:part(X, At + 1, byte_size(X) - At - 1))
                    end,
            End = case beamscale_load_xmpp_stream:attr(Open, <<"type">>) of
                      <<"terminate">> -> <<"</stream:stream>">>;
                      _ -> <<>>
                  end,
            {ok, Open, <<Inner/binary, End/binary>>}
    end;
unwrap(<<C, Rest/binary>>) when C =:= $\s; C =:= $\n; C =:= $\r; C =:= $\t -> unwrap(Rest);
unwrap(<<"<?", _/binary>> = X) ->
    case binary:match(X, <<"?>">>) of
        {At, 2} -> unwrap(binary:part(X, At + 2, byte_size(X) - At - 2));
        nomatch -> {error, {?MODULE, bad_body}}
    end;
unwrap(_) -> {error, {?MODULE, bad_body}}.

inner(X) ->
    case binary:matches(X, <<"</body>">>) of
        [] -> X;
        Ms -> {At, _} = lists:last(Ms), binary:part(X, 0, At)
    end.

%% @doc The session's connections (whose messages are the user's pushes).
-spec socks(conn()) -> [term()].
socks(#{bosh := #{socks := Socks}}) -> maps:keys(Socks).

%% @doc End the session: a `terminate' body (with the unavailable presence), not waited for.
-spec close(conn()) -> ok.
close(#{bosh := #{sid := none}}) -> ok;
close(#{bosh := #{sid := Sid, rid := Rid} = B} = C) ->
    Body = ["<body rid='", integer_to_binary(Rid), "' sid='", Sid, "' type='terminate' "
            "xmlns='" ?NS "'><presence type='unavailable' xmlns='jabber:client'/></body>"],
    _ = case free(B) of
            {ok, S, B1} -> post(C#{bosh := B1}, S, Body);
            _ -> none
        end,
    ok.

%% @doc Drop the session's connections (the kind's own first one too).
-spec drop(conn()) -> ok.
drop(#{bosh := #{socks := Socks}}) ->
    _ = [beamscale_load_tcp:drop(S) || S <- maps:keys(Socks)],
    ok.

%% @doc The text of its reasons.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error(head_too_big) -> io_lib:format("BOSH: response head above ~b bytes", [?MAX_HEAD]);
format_error({too_big, Max}) ->
    io_lib:format("BOSH: response above max_reply_bytes (~b): connection closed", [Max]);
format_error({status, S}) -> ["BOSH: HTTP status ", S];
format_error(no_length) ->
    "BOSH: a 200 response without Content-Length (chunked or to the close): not read, "
    "connection closed";
format_error(bad_response) -> "BOSH: bad HTTP response";
format_error(bad_body) -> "BOSH: response without its <body> wrapper";
format_error(unsolicited) -> "BOSH: bytes after a response nobody asked for".
