%% The raw, TLS and WebSocket kinds against real servers on 127.0.0.1: a TCP and a UDP echo in
%% this node, nginx with a certificate made here (TLS), and websocketd (WebSocket). Servers are
%% started in throwaway directories and stopped by their OS pid (beamscale_load_servers).
-module(beamscale_load_protocols_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).

%% A handshake on loopback takes milliseconds; a loaded host, seconds.
-define(HANDSHAKE_TIMEOUT, 15000).
%% How long nginx may take to write the access log lines of replies already sent.
-define(LOG_WAIT_MS, 5000).
-define(LOG_POLL_MS, 100).
-export([tls_system_cas/1, tls_system_cas/0, fragmented/1, fragmented/0]).
-export([raw_xml_tcp/1, raw_udp/1, https_nginx/1, raw_tls/1, websocket_xml/1,
         websocket_terms/1, websocket_fragments_ping/1, websocket_tls/1]).
-export([raw_xml_tcp/0, raw_udp/0, https_nginx/0, raw_tls/0, websocket_xml/0,
         websocket_terms/0, websocket_fragments_ping/0, websocket_tls/0]).

-import(beamscale_load_servers, [tsung_example/2, scenario/1, run/1, tmp_dir/2, free_port/0,
                                 certificate/1]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [raw_xml_tcp, raw_udp, https_nginx, raw_tls, tls_system_cas, websocket_xml,
          websocket_terms, websocket_fragments_ping, websocket_tls, fragmented].

init_per_suite(Config) ->
    {ok, _} = application:ensure_all_started(ssl),
    Config.

end_per_suite(_Config) -> ok.

%% ---- raw ----

raw_xml_tcp() -> [{doc, "Tsung's raw.xml against a TCP echo: no error, bytes counted."}].
raw_xml_tcp(_Config) ->
    {Port, Stop} = beamscale_load_servers:tcp_echo(),
    try
        S = tsung_example("raw.xml", [{"host=\"localhost\" port=\"7\"",
                                       "host=\"127.0.0.1\" port=\"" ++ integer_to_list(Port)
                                       ++ "\""},
                                      {"duration=\"10\" unit=\"minute\"",
                                       "duration=\"4\" unit=\"second\""},
                                      {"<thinktime value=\"4\"/>", "<thinktime value=\"0.1\"/>"}]),
        #{total := T} = run(S),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 2),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(3 * Done, maps:get(requests, T)),
        %% HELO, foo bar, stopstopstop: 23 bytes a session, echoed back whole.
        ?assertEqual(23 * Done, maps:get(bytes_sent, T)),
        ?assertEqual(23 * Done, maps:get(bytes_received, T)),
        ?assertEqual(Done, beamscale_stats_hist:count(maps:get(connect, T)))
    after
        Stop()
    end.

raw_udp() -> [{doc, "raw over UDP: data and datasize acknowledged, no_ack not waited for."}].
raw_udp(_Config) ->
    {ok, U} = gen_udp:open(0, [binary, {active, false}, {ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(U),
    Echo = spawn_link(fun() -> udp_echo(U) end),
    ok = gen_udp:controlling_process(U, Echo),
    try
        S = scenario(io_lib:format(
            "{targets, [{u, #{address => \"127.0.0.1:~b\", transport => udp}}]}.\n"
            "{phases, [{p, #{duration_s => 1, rate => 20}}]}.\n"
            "{sessions, [{s, #{steps => [{raw, #{data => <<\"ping\">>}},"
            " {raw, #{datasize => 1000}}, {raw, #{data => <<\"x\">>, ack => no_ack}}]}}]}.\n",
            [Port])),
        #{total := T} = run(S),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 10),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(1005 * Done, maps:get(bytes_sent, T)),
        %% The no_ack datagram's echo arrives after the session has moved on: not read.
        ?assertEqual(1004 * Done, maps:get(bytes_received, T))
    after
        unlink(Echo), exit(Echo, kill), gen_udp:close(U)
    end.

udp_echo(U) ->
    {ok, {Ip, P, Data}} = gen_udp:recv(U, 0),
    ok = gen_udp:send(U, Ip, P, Data),
    udp_echo(U).

%% ---- TLS ----

https_nginx() ->
    [{doc, "https to nginx: verified, connect time recorded, sessions resumed per user."}].
https_nginx(Config) ->
    Dir = tmp_dir(Config, "protocols_nginx"),
    {Ca, Cert, Key} = certificate(Dir),
    Port = free_port(),
    Stop = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Port, Cert, Key)),
    try
        S = scenario(io_lib:format(
            "{targets, [{w, #{address => \"127.0.0.1:~b\", tls => #{cacertfile => ~0p,"
            " server_name_indication => \"localhost\"}}}]}.\n"
            "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
            "{sessions, [{s, #{steps => [{loop, 6, [{http, #{path => \"/\"}}]}]}}]}.\n",
            [Port, Ca])),
        #{total := T} = run(S),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ?assertEqual(0, maps:get(errors, T)),
        %% keepalive_requests 2: each session of 6 requests connects 3 times.
        ?assertEqual(3 * Done, beamscale_stats_hist:count(maps:get(connect, T))),
        ?assert(beamscale_stats_hist:max(maps:get(connect, T)) > 0),
        ?assert(maps:get(bytes_received, T) > 6 * Done * 2),
        %% Per session: the first handshake is full, the two after it resumed.
        %% nginx logs a request after its reply: the last lines may come a moment later.
        Lines = log_lines(filename:join(Dir, "access.log"), 6 * Done, ?LOG_WAIT_MS),
        Reused = length([L || L <- Lines, string:prefix(L, "r ") =/= nomatch]),
        ct:pal("~b requests, ~b on resumed sessions", [length(Lines), Reused]),
        ?assertEqual(6 * Done, length(Lines)),
        ?assertEqual(4 * Done, Reused)
    after
        Stop()
    end.

fragmented() ->
    [{doc, "nginx's TLS and websocketd's bytes one per TCP segment: every reply read."}].
fragmented(Config) ->
    Dir = tmp_dir(Config, "protocols_fragmented"),
    {Ca, Cert, Key} = certificate(Dir),
    {Port, WsPort} = {free_port(), free_port()},
    Stops = [beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Port, Cert, Key)),
             websocketd(Config, WsPort)],
    {Relay, StopRelay} = beamscale_load_trickle:start(Port),
    {WsRelay, StopWsRelay} = beamscale_load_trickle:start(WsPort),
    try
        Ws = fun(M) -> ["{websocket, #{target => ws, ", M, "}}"] end,
        S = scenario(io_lib:format(
            "{targets, [{w, #{address => \"127.0.0.1:~b\", tls => #{cacertfile => ~0p,"
            " server_name_indication => \"localhost\"}}},"
            " {ws, #{address => \"127.0.0.1:~b\"}}]}.\n"
            "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
            "{sessions, [{s, #{steps => [{loop, 3, [{http, #{target => w, path => \"/\"}}]},"
            " ~ts]}}]}.\n",
            [Relay, Ca, WsRelay,
             lists:join(", ", [Ws("type => connect, path => \"/\""),
                               Ws("type => message, data => <<\"hello\">>"),
                               Ws("type => close")])])),
        #{total := T} = run(S),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ?assertEqual(#{}, maps:get(reasons, T)),
        ?assertEqual(6 * Done, maps:get(requests, T))
    after
        StopRelay(), StopWsRelay(),
        [Stop() || Stop <- Stops]
    end.

nginx_conf(Dir, Port, Cert, Key) ->
    io_lib:format(
      "error_log ~ts/error.log;\nevents { worker_connections 64; }\n"
      "http {\n"
      "  log_format reused '$ssl_session_reused $request';\n"
      "  access_log ~ts/access.log reused;\n"
      "  client_body_temp_path ~ts; proxy_temp_path ~ts; fastcgi_temp_path ~ts;\n"
      "  uwsgi_temp_path ~ts; scgi_temp_path ~ts;\n"
      "  keepalive_requests 2;\n"
      "  ssl_session_cache shared:SSL:1m; ssl_session_tickets off;\n"
      "  server {\n"
      "    listen 127.0.0.1:~b ssl;\n"
      "    ssl_certificate ~ts; ssl_certificate_key ~ts;\n"
      "    location / { return 200 'hello'; }\n"
      "  }\n}\n", [Dir, Dir, Dir, Dir, Dir, Dir, Dir, Port, Cert, Key]).

raw_tls() -> [{doc, "raw over TLS (Tsung's server type ssl) to a TLS echo: no error."}].
raw_tls(Config) ->
    Dir = tmp_dir(Config, "protocols_tls"),
    {_Ca, Cert, Key} = certificate(Dir),
    {Port, Stop} = beamscale_load_servers:tls_echo(Cert, Key),
    try
        S = tsung_example("raw.xml", [{"host=\"localhost\" port=\"7\" type=\"tcp\"",
                                       "host=\"127.0.0.1\" port=\"" ++ integer_to_list(Port)
                                       ++ "\" type=\"ssl\""},
                                      {"duration=\"10\" unit=\"minute\"",
                                       "duration=\"1\" unit=\"second\""},
                                      {"<thinktime value=\"4\"/>", "<thinktime value=\"0.1\"/>"}]),
        #{total := T} = run(S),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 1),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(23 * Done, maps:get(bytes_received, T))
    after
        Stop()
    end.

log_lines(File, Want, Ms) ->
    {ok, Log} = file:read_file(File),
    Lines = string:split(string:trim(Log), "\n", all),
    case length(Lines) < Want andalso Ms > 0 of
        true -> timer:sleep(?LOG_POLL_MS), log_lines(File, Want, Ms - ?LOG_POLL_MS);
        false -> Lines
    end.

tls_system_cas() ->
    [{doc, "tls => true verifies against the system's CAs, read at the handshake: a test-made "
           "certificate is refused as unknown; with its CA file it is taken."}].
tls_system_cas(Config) ->
    Dir = tmp_dir(Config, "protocols_cas"),
    {Ca, Cert, Key} = certificate(Dir),
    {Port, Stop} = beamscale_load_servers:tls_echo(Cert, Key),
    Handshake = fun(Tls) ->
                        {ok, Opts} = beamscale_load_tls:check(Tls),
                        {ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
                        Result = beamscale_load_tls:handshake(S, {"127.0.0.1", Port}, Opts,
                                                              ?HANDSHAKE_TIMEOUT),
                        _ = [ssl:close(T) || {ok, T} <- [Result]],
                        gen_tcp:close(S),
                        Result
                end,
    try
        ?assertMatch({error, {beamscale_load_tls, {handshake, {tls_alert, {unknown_ca, _}}}}},
                     Handshake(true)),
        ?assertMatch({ok, _}, Handshake(#{cacertfile => Ca}))
    after
        Stop()
    end.

%% ---- WebSocket ----

websocket_xml() ->
    [{doc, "websocket.xml against websocketd: uid taken from the login reply reaches the "
           "server, the check counted, no error."}].
websocket_xml(Config) ->
    Port = free_port(),
    Dir = tmp_dir(Config, "protocols_ws_chat"),
    Log = filename:join(Dir, "received.log"),
    Stop = websocketd(Config, Port, [], chat_server(Dir, Log)),
    Rewrites = [{"port=\"8080\"", "port=\"" ++ integer_to_list(Port) ++ "\""},
                {"duration=\"120\"", "duration=\"2\""}],
    %% Inside the try: a failed check still stops the server.
    try
        #{total := T} = run(tsung_example("websocket.xml", Rewrites)),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 1),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(5 * Done, maps:get(requests, T)),
        %% Its one ack="no_ack" message is counted apart, as Tsung's request_noack.
        ?assertEqual(#{<<"match.-">> => Done, <<"nomatch.-">> => 0, <<"unset.uid">> => 0,
                       <<"request_noack">> => Done},
                     maps:get(counts, T)),
        %% Each connection's shell gave its pid as the uid: the message sent back names it.
        {ok, Got} = file:read_file(Log),
        Lines = string:split(string:trim(Got), "\n", all),
        Uids = [L || L <- Lines, string:find(L, "uid") =/= nomatch],
        ?assertEqual(Done, length(Uids)),
        [?assertMatch({match, [Pid, Pid]},
                      re:run(L, "^([0-9]+) {\"uid\":\"([0-9]+)\", \"data\":\"data\"}$",
                             [{capture, all_but_first, binary}]))
         || L <- Uids]
    after
        Stop()
    end.

%% The server websocket.xml talks to: a login (a message with a password) is answered with a
%% uid, the connection's shell pid; any other message is logged with that pid and answered ok.
chat_server(Dir, Log) ->
    Script = filename:join(Dir, "chat.sh"),
    ok = file:write_file(Script, [
        "#!/bin/sh\n"
        "while IFS= read -r line; do\n"
        "  case \"$line\" in\n"
        "    *'\"password\"'*) printf '{\"uid\":\"%s\"}\\n' \"$$\" ;;\n"
        "    *) printf '%s %s\\n' \"$$\" \"$line\" >> '", Log, "';"
        " printf '{\"status\":\"ok\"}\\n' ;;\n"
        "  esac\n"
        "done\n"]),
    ok = file:change_mode(Script, 8#755),
    [Script].

websocket_terms() ->
    [{doc, "terms websocket: binary and text echoed, subprotocol, reconnect after close."}].
websocket_terms(Config) ->
    Port = free_port(),
    Stop = websocketd(Config, Port),
    try
        S = scenario(io_lib:format(
            "{targets, [{w, #{address => \"127.0.0.1:~b\"}}]}.\n"
            "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
            "{sessions, [{s, #{steps => [{loop, 2, ["
            " {websocket, #{type => connect, path => \"/\"}},"
            " {websocket, #{type => message, data => <<\"hello\">>}},"
            %% websocketd runs cat line by line: a binary message needs its newline to be echoed.
            " {websocket, #{type => message, frame => binary, data => <<\"bin\\n\">>}},"
            " {websocket, #{type => close}}]}]}}]}.\n", [Port])),
        #{total := T} = run(S),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 5),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(8 * Done, maps:get(requests, T)),
        %% Two TCP connections a session: close, then connect again.
        ?assertEqual(2 * Done, beamscale_stats_hist:count(maps:get(connect, T)))
    after
        Stop()
    end.

%% websocketd neither fragments nor pings: a small server here does both. It answers every
%% message with its first fragment, a ping, and after the client's pong (sent to the test
%% process) the last fragment; it also picks the second of the subprotocols offered.
websocket_fragments_ping() ->
    [{doc, "Replies in fragments are joined; pings in between answered with pongs."}].
websocket_fragments_ping(_Config) ->
    Test = self(),
    {L, Port, Acceptor} = beamscale_load_servers:broker(fun(S) -> ws_handshake(S, Test) end),
    try
        S = scenario(io_lib:format(
            "{targets, [{w, #{address => \"127.0.0.1:~b\"}}]}.\n"
            "{phases, [{p, #{duration_s => 1, rate => 20, max_users => 3}}]}.\n"
            "{sessions, [{s, #{steps => ["
            " {websocket, #{type => connect, subprotocols => \"a, b\"}},"
            " {loop, 4, [{websocket, #{type => message, data => <<\"hi\">>}}]}]}}]}.\n", [Port])),
        #{total := T} = run(S),
        ?assertEqual(3, maps:get(sessions_done, T)),
        ?assertEqual(0, maps:get(errors, T)),
        Pongs = [receive {pong, P} -> P after 1000 -> none end || _ <- lists:seq(1, 12)],
        ?assertEqual(lists:duplicate(12, <<"hi">>), Pongs)
    after
        exit(Acceptor, kill), gen_tcp:close(L)
    end.

ws_handshake(S, Test) ->
    ok = inet:setopts(S, [{packet, http_bin}]),
    Key = ws_headers(S, none),
    ok = inet:setopts(S, [{packet, raw}]),
    ok = gen_tcp:send(S, ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                          "Connection: Upgrade\r\nSec-WebSocket-Protocol: b\r\n"
                          "Sec-WebSocket-Accept: ", beamscale_load_ws_frame:accept(Key),
                          "\r\n\r\n"]),
    ws_serve(S, Test).

ws_headers(S, Key) ->
    case gen_tcp:recv(S, 0) of
        {ok, {http_header, _, _, Name, V}} ->
            case string:lowercase(Name) of
                <<"sec-websocket-key">> -> ws_headers(S, V);
                _ -> ws_headers(S, Key)
            end;
        {ok, http_eoh} -> Key;
        {ok, _} -> ws_headers(S, Key)
    end.

%% A client frame of up to 125 bytes: opcode and unmasked payload.
ws_recv(S) ->
    {ok, <<_:4, Op:4, 1:1, Len:7, Key:4/binary>>} = gen_tcp:recv(S, 6),
    {ok, P} = case Len of 0 -> {ok, <<>>}; _ -> gen_tcp:recv(S, Len) end,
    {Op, beamscale_load_ws_frame:mask(P, Key)}.

ws_serve(S, Test) ->
    case catch ws_recv(S) of
        {1, Msg} ->
            ok = gen_tcp:send(S, [<<16#01, (byte_size(Msg)):8>>, Msg]),
            ok = gen_tcp:send(S, [<<16#89, (byte_size(Msg)):8>>, Msg]),
            {10, Pong} = ws_recv(S),
            Test ! {pong, Pong},
            ok = gen_tcp:send(S, <<16#80, 4, "-end">>),
            ws_serve(S, Test);
        _ -> gen_tcp:close(S)
    end.

websocket_tls() -> [{doc, "WebSocket over TLS (wss) to websocketd --ssl, certificate verified."}].
websocket_tls(Config) ->
    Dir = tmp_dir(Config, "protocols_wss"),
    {Ca, Cert, Key} = certificate(Dir),
    Port = free_port(),
    Stop = websocketd(Config, Port, ["--ssl", "--sslcert", Cert, "--sslkey", Key]),
    try
        S = scenario(io_lib:format(
            "{targets, [{w, #{address => \"127.0.0.1:~b\", tls => #{cacertfile => ~0p,"
            " server_name_indication => \"localhost\"}}}]}.\n"
            "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
            "{sessions, [{s, #{steps => [{websocket, #{type => connect}},"
            " {websocket, #{type => message, data => <<\"hello\">>}},"
            " {websocket, #{type => close}}]}}]}.\n", [Port, Ca])),
        #{total := T} = run(S),
        Done = maps:get(sessions_done, T),
        ?assert(Done >= 3),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(3 * Done, maps:get(requests, T))
    after
        Stop()
    end.

websocketd(Config, Port) -> websocketd(Config, Port, []).

websocketd(Config, Port, Extra) -> websocketd(Config, Port, Extra, ["cat"]).

websocketd(Config, Port, Extra, Command) ->
    beamscale_load_servers:websocketd(tmp_dir(Config, "protocols_websocketd"), Port, Extra,
                                      Command).
