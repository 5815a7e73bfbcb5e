%% A short load (8 users, a 1 s timeout) against each misbehaving server of
%% beamscale_load_hostile_servers: the run ends within the session's timeouts plus 2 s of when it
%% should, this node's memory stays under 300 MB however much the server sends, and the errors
%% are counted under a named reason (a few distinct ones, never the bytes received).
-module(beamscale_load_hostile_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([http_endless_header/0, http_header_lines/0, http_huge_length/0, http_length_2gb/0,
         http_body_until_close/0, http_huge_chunk/0, http_chunk_flood/0, http_short_body/0,
         http_long_body/0, http_garbage/0, http_not_http/0, http_reset/0, http_stream_after/0,
         http_slowloris/0, http_bad_chunk/0, http_bad_length/0, http_injection/0, ws_pong_flood/0,
         ws_giant_frame/0, ws_masked_frame/0, ws_garbage_handshake/0, ws_flood_think/0,
         mysql_garbage/0, mysql_endless_packet/0, pgsql_notices/0, pgsql_garbage/0,
         pgsql_endless_rows/0, tcp_until_endless/0, raw_stream_think/0, udp_foreign/0,
         ldap_byte_by_byte/0, xmpp_huge_features/0, ldap_endless_entries/0,
         ldap_million_entries/0]).
-export([http_endless_header/1, http_header_lines/1, http_huge_length/1, http_length_2gb/1,
         http_body_until_close/1, http_huge_chunk/1, http_chunk_flood/1, http_short_body/1,
         http_long_body/1, http_garbage/1, http_not_http/1, http_reset/1, http_stream_after/1,
         http_slowloris/1, http_bad_chunk/1, http_bad_length/1, http_injection/1,
         ws_pong_flood/1, ws_giant_frame/1, ws_masked_frame/1, ws_garbage_handshake/1,
         ws_flood_think/1, mysql_garbage/1, mysql_endless_packet/1, pgsql_notices/1,
         pgsql_garbage/1, pgsql_endless_rows/1, tcp_until_endless/1, raw_stream_think/1,
         udp_foreign/1, ldap_byte_by_byte/1, xmpp_huge_features/1, ldap_endless_entries/1,
         ldap_million_entries/1]).

%% The issue's bounds: 300 MB for all of beamscale, the run's end within its timeouts + 2 s.
-define(MAX_MEMORY, 300 * 1024 * 1024).
-define(LATE_MS, 2000).
-define(TIMEOUT_MS, 1000).
-define(THINK_MS, 300).
-define(TOO_BIG, "reply above max_reply_bytes").
-define(UNASKED, "bytes nobody asked for").
-define(NOT_SENT, "request not sent").
%% A session's next step after its connect failed (the connection is gone with it).
-define(WS_AFTER, "before the WebSocket connect").
-define(MYSQL_AFTER, "before the MySQL login").
-define(PGSQL_AFTER, "pgsql request before connect").

suite() -> [{timetrap, {minutes, 1}}].

all() -> beamscale_load_hostile_servers:names().

init_per_suite(Config) -> Config.

end_per_suite(_Config) -> ok.

http_endless_header() -> [{doc, "An endless header line: cut at 64 KiB of head."}].
http_header_lines() -> [{doc, "Header lines without end: cut at 64 KiB of head."}].
http_huge_length() -> [{doc, "Content-Length 10^32: refused at once, nothing buffered."}].
http_length_2gb() -> [{doc, "Content-Length 2 GB: refused at once, nothing buffered."}].
http_body_until_close() -> [{doc, "A body without length streamed on: bytes nobody asked for."}].
http_huge_chunk() -> [{doc, "A chunk of 2^64-1 bytes: refused at once."}].
http_chunk_flood() -> [{doc, "Endless one-byte chunks: bounded by bytes or by the deadline."}].
http_short_body() -> [{doc, "A body shorter than its Content-Length: the deadline holds."}].
http_long_body() -> [{doc, "A body longer than its Content-Length: the rest is unsolicited."}].
http_garbage() -> [{doc, "Random bytes for a reply: one named reason, not one per reply."}].
http_not_http() -> [{doc, "Another protocol's greeting: bad response (not HTTP)."}].
http_reset() -> [{doc, "A reset in the middle of a reply: connection closed."}].
http_stream_after() -> [{doc, "A server streaming after its reply, through the think."}].
http_slowloris() -> [{doc, "A byte every 100 ms: the deadline holds."}].
http_bad_chunk() -> [{doc, "A chunk size that is not hexadecimal: bad chunk."}].
http_bad_length() -> [{doc, "A Content-Length that is not a number: named reason."}].
http_injection() -> [{doc, "CR LF from a reply into a variable: request not sent, none smuggled."}].
ws_pong_flood() -> [{doc, "Pong frames without end after the handshake: bounded."}].
ws_giant_frame() -> [{doc, "A frame of 2^62 bytes: refused at its header."}].
ws_masked_frame() -> [{doc, "A masked server frame: a protocol error, named."}].
ws_garbage_handshake() -> [{doc, "Garbage for the 101 response: named reason."}].
ws_flood_think() -> [{doc, "Frames flooding through a think: no memory held."}].
mysql_garbage() -> [{doc, "Garbage for the MySQL greeting: named reason."}].
mysql_endless_packet() -> [{doc, "An endless MySQL packet: bounded."}].
pgsql_notices() -> [{doc, "PostgreSQL notices before and after authentication: accepted."}].
pgsql_garbage() -> [{doc, "Garbage after the startup message: named reason."}].
pgsql_endless_rows() -> [{doc, "Endless DataRows to a query: bounded by max_reply_bytes."}].
ldap_byte_by_byte() ->
    [{doc, "A well-formed LDAP answer one byte per TCP segment: read whole, no error."}].
xmpp_huge_features() ->
    [{doc, "Stream features without end: XMPP's features over max_reply_bytes, named."}].
ldap_endless_entries() ->
    [{doc, "A search answered by entries without end: LDAP's search over max_reply_bytes."}].
ldap_million_entries() ->
    [{doc, "10^6 entries (15 MB) and the search's done: read whole, counted, no error."}].
tcp_until_endless() -> [{doc, "tcp {until, Delimiter} against an endless stream: bounded."}].
raw_stream_think() -> [{doc, "raw over a stream that never stops: memory bounded."}].
udp_foreign() -> [{doc, "UDP replies from a foreign port: not counted as replies."}].

http_endless_header(C) -> hostile(?FUNCTION_NAME, C).
http_header_lines(C) -> hostile(?FUNCTION_NAME, C).
http_huge_length(C) -> hostile(?FUNCTION_NAME, C).
http_length_2gb(C) -> hostile(?FUNCTION_NAME, C).
http_body_until_close(C) -> hostile(?FUNCTION_NAME, C).
http_huge_chunk(C) -> hostile(?FUNCTION_NAME, C).
http_chunk_flood(C) -> hostile(?FUNCTION_NAME, C).
http_short_body(C) -> hostile(?FUNCTION_NAME, C).
http_long_body(C) -> hostile(?FUNCTION_NAME, C).
http_garbage(C) -> hostile(?FUNCTION_NAME, C).
http_not_http(C) -> hostile(?FUNCTION_NAME, C).
http_reset(C) -> hostile(?FUNCTION_NAME, C).
http_stream_after(C) -> hostile(?FUNCTION_NAME, C).
http_slowloris(C) -> hostile(?FUNCTION_NAME, C).
http_bad_chunk(C) -> hostile(?FUNCTION_NAME, C).
http_bad_length(C) -> hostile(?FUNCTION_NAME, C).
ws_pong_flood(C) -> hostile(?FUNCTION_NAME, C).
ws_giant_frame(C) -> hostile(?FUNCTION_NAME, C).
ws_masked_frame(C) -> hostile(?FUNCTION_NAME, C).
ws_garbage_handshake(C) -> hostile(?FUNCTION_NAME, C).
ws_flood_think(C) -> hostile(?FUNCTION_NAME, C).
mysql_garbage(C) -> hostile(?FUNCTION_NAME, C).
mysql_endless_packet(C) -> hostile(?FUNCTION_NAME, C).
pgsql_notices(C) -> hostile(?FUNCTION_NAME, C).
pgsql_garbage(C) -> hostile(?FUNCTION_NAME, C).
pgsql_endless_rows(C) -> hostile(?FUNCTION_NAME, C).
tcp_until_endless(C) -> hostile(?FUNCTION_NAME, C).
raw_stream_think(C) -> hostile(?FUNCTION_NAME, C).
udp_foreign(C) -> hostile(?FUNCTION_NAME, C).
ldap_byte_by_byte(C) -> hostile(?FUNCTION_NAME, C).
xmpp_huge_features(C) -> hostile(?FUNCTION_NAME, C).
ldap_endless_entries(C) -> hostile(?FUNCTION_NAME, C).
ldap_million_entries(C) -> hostile(?FUNCTION_NAME, C).

%% The smuggled request never reaches the server: the variable holding CR LF is refused.
http_injection(C) ->
    Seen = hostile(?FUNCTION_NAME, C),
    ?assert(length(Seen) >= 1),
    ?assertEqual([], [L || L <- Seen, binary:match(L, <<"smuggled">>) =/= nomatch]),
    ?assertEqual([], [L || L <- Seen, L =/= <<"GET / HTTP/1.1">>]).

%% {Steps, the worst a session may take (ms), reasons expected (substrings; [] when none)}.
expect(http_endless_header) -> {http(1), ["response head above"]};
expect(http_header_lines) -> {http(1), ["response head above"]};
expect(http_huge_length) -> {http(1), [?TOO_BIG]};
expect(http_length_2gb) -> {http(1), [?TOO_BIG]};
expect(http_body_until_close) -> {http(2), [?UNASKED]};
expect(http_huge_chunk) -> {http(1), [?TOO_BIG]};
expect(http_chunk_flood) -> {http(1), [?TOO_BIG, "timeout"]};
expect(http_short_body) -> {http(1), ["timeout"]};
expect(http_long_body) -> {http(2), [?UNASKED]};
expect(http_garbage) -> {http(1), ["bad response (not HTTP)"]};
expect(http_not_http) -> {http(1), ["bad response (not HTTP)"]};
expect(http_reset) -> {http(1), ["connection closed", "econnreset"]};
expect(http_stream_after) -> {http(2), [?UNASKED]};
expect(http_slowloris) -> {http(1), ["timeout"]};
expect(http_bad_chunk) -> {http(1), ["bad response (bad chunk)"]};
expect(http_bad_length) -> {http(1), ["bad response (bad Content-Length)"]};
expect(http_injection) ->
    {{"[{http, #{timeout_ms => 1000, extract => [{re, next, \"(?s)(.*)\"}]}},"
      " {http, #{timeout_ms => 1000, path => \"%%_next%%\"}}]", 2}, [?NOT_SENT]};
expect(ws_pong_flood) -> {ws([]), [?TOO_BIG, "timeout"]};
expect(ws_giant_frame) -> {ws([]), [?TOO_BIG]};
expect(ws_masked_frame) -> {ws([]), ["masked_server_frame"]};
expect(ws_garbage_handshake) -> {ws([]), ["not an HTTP handshake response", ?WS_AFTER]};
%% A stale frame answers the message: no error, and no memory held for the flood.
expect(ws_flood_think) -> {ws([think()]), []};
expect(mysql_garbage) -> {mysql(), ["MySQL protocol version", ?MYSQL_AFTER]};
expect(mysql_endless_packet) ->
    {mysql(), ["packet announced above the packet bound", ?TOO_BIG, "timeout",
               ?MYSQL_AFTER]};
expect(pgsql_notices) -> {pgsql(), []};
expect(pgsql_garbage) ->
    {pgsql(), ["message announced above the message bound", "unexpected message",
               ?PGSQL_AFTER]};
expect(pgsql_endless_rows) -> {pgsql(), [?TOO_BIG, "timeout"]};
expect(tcp_until_endless) ->
    {{"[{tcp, #{send => <<\"q\">>, reply => {until, <<\"\\n\">>}, timeout_ms => 1000}}]", 1},
     [?TOO_BIG, "timeout"]};
expect(raw_stream_think) ->
    {{"[{raw, #{data => <<\"x\">>, timeout_ms => 1000}}, " ++ think() ++
          "{raw, #{data => <<\"y\">>, timeout_ms => 1000}}]", 2}, []};
%% Two binds (ids 1 and 2): 14 bytes each, one a segment, 5 ms apart.
expect(ldap_byte_by_byte) ->
    {{"[{ldap, #{type => bind, dn => <<\"cn=a\">>, password => <<\"p\">>, timeout_ms => 1000}},"
      " {ldap, #{type => bind, dn => <<\"cn=b\">>, password => <<\"p\">>, timeout_ms => 1000}}]",
      2}, []};
%% The bound hit is named (kind, what, bound: a 1 MB `max_reply_bytes', `target/1'), within
%% the deadline, for every user.
expect(xmpp_huge_features) ->
    {{"[{xmpp, #{type => connect, domain => <<\"bs.test\">>, timeout_ms => 1000}}]", 1},
     ["XMPP stanza above max_reply_bytes (1048576) awaiting the stream features: connection "
      "closed"]};
expect(ldap_endless_entries) ->
    {{"[{ldap, #{type => search, base => <<\"o=x\">>, timeout_ms => 1000}}]", 1},
     ["LDAP search reply above max_reply_bytes (1048576 bytes, "]};
%% 15 MB for each of 8 users: a deadline of 10 s (`timeout_ms/1').
expect(ldap_million_entries) ->
    {{"[{ldap, #{type => search, base => <<\"o=x\">>, timeout_ms => 10000}}]", 1}, []};
expect(udp_foreign) -> {{"[{raw, #{data => <<\"ping\">>, timeout_ms => 1000}}]", 1}, ["timeout"]}.

%% `N' requests with a think between.
http(1) -> {"[{http, #{timeout_ms => 1000}}]", 1};
http(2) -> {"[{http, #{timeout_ms => 1000}}, " ++ think() ++ "{http, #{timeout_ms => 1000}}]", 2}.

ws(Between) ->
    {"[{websocket, #{type => connect, timeout_ms => 1000}}, " ++ lists:append(Between) ++
         "{websocket, #{type => message, data => <<\"hi\">>, timeout_ms => 1000}}]", 2}.

mysql() ->
    {"[{mysql, #{type => connect, user => \"u\", password => \"p\", database => \"d\","
     " timeout_ms => 1000}}, {mysql, #{type => sql, query => <<\"SELECT 1\">>,"
     " timeout_ms => 1000}}]", 2}.

pgsql() ->
    {"[{pgsql, #{type => connect, database => \"d\", username => \"u\", timeout_ms => 1000}},"
     " {pgsql, #{type => sql, sql => \"SELECT 1\", timeout_ms => 1000}}]", 2}.

think() -> "{think, " ++ integer_to_list(?THINK_MS) ++ "}, ".

%% Run the load against server `Name'; the request lines it saw.
hostile(Name, _Config) ->
    {{Steps, Requests}, Reasons} = expect(Name),
    #{port := Port, stop := Stop, seen := Seen} = beamscale_load_hostile_servers:start(Name),
    Transport = case Name of
                    udp_foreign -> ", transport => udp";
                    _ -> ""
                end,
    try
        S = beamscale_load_servers:scenario(io_lib:format(
              "{targets, [{t, #{address => \"127.0.0.1:~b\"~ts~ts}}]}.\n"
              "{phases, [{p, #{duration_s => 1, rate => 16, max_users => 8}}]}.\n"
              "{sessions, [{s, #{steps => ~ts}}]}.\n", [Port, Transport, target(Name), Steps])),
        {#{total := T}, Elapsed, Peak} = beamscale_load_servers:run_sampled(S),
        %% The last user arrives by the phase's end (1 s); its session then takes at most its
        %% requests' timeouts and thinks.
        Should = 1000 + Requests * timeout_ms(Name) + (Requests - 1) * ?THINK_MS,
        #{errors := Errors, requests := Req, reasons := Counted} = T,
        ct:pal("~ts: ~b ms (should end by ~b), peak ~.1f MB, ~b requests, ~b errors ~tp",
               [Name, Elapsed, Should, Peak / 1048576, Req, Errors, Counted]),
        ?assert(Elapsed =< Should + ?LATE_MS, {late, Elapsed, Should}),
        ?assert(Peak < ?MAX_MEMORY, {memory, Peak}),
        ?assert(maps:get(sessions_done, T) >= 4),
        %% Every entry of every search counted as a row.
        [?assertEqual(maps:get(sessions_done, T) * 1000000, maps:get(rows, T))
         || Name =:= ldap_million_entries],
        reasons(Reasons, Errors, Counted),
        Seen()
    after
        Stop()
    end.

%% A target's settings beyond its address.
target(Name) when Name =:= xmpp_huge_features; Name =:= ldap_endless_entries ->
    ", max_reply_bytes => 1048576";
target(_Name) -> "".

%% Each request's timeout, as its steps say.
timeout_ms(ldap_million_entries) -> 10000;
timeout_ms(_Name) -> ?TIMEOUT_MS.

%% Errors only under the expected reasons, each a short text (no bytes of the server's).
reasons([], Errors, Counted) -> ?assertEqual({0, #{}}, {Errors, Counted});
reasons(Expected, Errors, Counted) ->
    ?assert(Errors > 0),
    ?assert(map_size(Counted) =< 3, Counted),
    [?assert(lists:any(fun(E) -> string:find(R, E) =/= nomatch end, Expected), {R, Expected})
     || R <- maps:keys(Counted)],
    [?assert(byte_size(R) =< 120 andalso io_lib:printable_unicode_list(
                                            unicode:characters_to_list(R)), R)
     || R <- maps:keys(Counted)],
    ok.
