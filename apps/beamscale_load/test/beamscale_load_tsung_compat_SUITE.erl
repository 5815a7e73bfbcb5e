%% Tsung files run as Tsung runs them (issue #48): values put into a URL sent with their spaces
%% encoded, as Tsung's escape_url (the shipped http_setdynvars.xml against nginx started here on
%% 127.0.0.1); a reply awaited Tsung's `idle_timeout' (10 minutes, or the file's), not a terms
%% file's 5 s, against a server of this suite's own that answers late.
-module(beamscale_load_tsung_compat_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([setdynvars_encoded/1, idle_timeout/1, idle_timeout_short/1, unset_one_error/1,
         no_ack_apart/1, ipv6_server/1, websocket_origin/1]).
-export([setdynvars_encoded/0, idle_timeout/0, idle_timeout_short/0, unset_one_error/0,
         no_ack_apart/0, ipv6_server/0, websocket_origin/0]).

%% The late server's delay: beyond a terms file's 5 s request timeout.
-define(LATE_MS, 6000).

-import(beamscale_load_servers, [free_port/0]).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [setdynvars_encoded, idle_timeout, idle_timeout_short, unset_one_error,
          no_ack_apart, ipv6_server, websocket_origin].

%% The access log keeps each request's URI as received: what the encoding sent.
init_per_suite(Config) ->
    beamscale_load_servers:nginx_suite(
      Config, "tsung_compat_nginx", "$status|$request_uri",
      "    location / { return 200 'hello'; }\n"
      "    location /missing { return 404; }\n"
      "    location /test.html { return 200 '<html><title>Hello World Page</title></html>'; }\n").

end_per_suite(Config) ->
    (?config(nginx, Config))(),
    ok.

setdynvars_encoded() ->
    [{doc, "http_setdynvars.xml as shipped but for a user's rewrites (server, durations, think "
           "times, CSV path): a title and CSV values with spaces go into URLs as %20, 0 errors; "
           "nginx and the dump see the encoded values."}].
setdynvars_encoded(Config) ->
    Priv = ?config(priv_dir, Config),
    Csv = filename:join(Priv, "users.csv"),
    %% A value with a space, and one the file already encoded (sent as it is).
    ok = file:write_file(Csv, "user one;pass word\nuser two;pass%20word\n"),
    Port = lists:flatten(io_lib:format("port=\"~b\"", [?config(port, Config)])),
    S = beamscale_load_servers:tsung_example(
          "http_setdynvars.xml",
          [{"port=\"80\"", Port}, {"<server host=\"localhost\"", "<server host=\"127.0.0.1\""},
           {"./src/test/test_file_server.csv", Csv},
           {"duration=\"1\" unit=\"minute\"", "duration=\"1\" unit=\"second\""},
           {"min=\"2\" max=\"4\"", "min=\"0\" max=\"0\""},
           {"value=\"5\" random=\"true\"", "value=\"0.1\""},
           {"value=\"4\" random=\"true\"", "value=\"0.1\""}]),
    ?assertMatch(#{dump := 20}, S),
    DumpFile = filename:join(Priv, "dump.log"),
    {ok, Dump} = beamscale_load_dump:open(DumpFile, 20),
    {ok, R} = beamscale_load_run:run(S#{time_limit_s := 30}, maps:get(targets, S),
                                     #{seed => 42, dump => {Dump, 20}}),
    ok = beamscale_load_dump:close(Dump),
    #{total := T} = R,
    ?assertEqual(done, maps:get(stopped, R)),
    ?assertEqual(0, maps:get(errors, T), maps:get(reasons, T)),
    [200] = maps:keys(maps:get(statuses, T)),
    Index = seen(Config, "/index.html", 1),
    ?assertEqual([], [L || {St, _} = L <- Index, St =/= "200"]),
    ?assertMatch([_ | _], [U || {_, U} <- Index,
                                string:find(U, "toto=Hello%20World%20Page&user=user%20") =/=
                                    nomatch]),
    %% A value already encoded in the file is sent as it is, not encoded twice.
    ?assertEqual([], [U || {_, U} <- Index, string:find(U, "%2520") =/= nomatch]),
    ?assertEqual([], [U || {_, U} <- Index, string:find(U, " ") =/= nomatch]),
    {ok, Logged} = file:read_file(DumpFile),
    ?assertNotEqual(nomatch, binary:match(Logged, <<"toto=Hello%20World%20Page">>)).

idle_timeout() ->
    [{doc, "A server answering in 6 s: a Tsung file with idle_timeout 30000 gets its replies, "
           "0 errors; the same request in a terms file times out at its 5 s."}].
idle_timeout(_Config) ->
    {Port, Stop} = late_server(?LATE_MS),
    try
        Xml = tsung_text(Port, "<option name=\"idle_timeout\" value=\"30000\"/>"),
        {ok, S, Warnings} = beamscale_load_tsung:from_text("late.xml", Xml),
        ?assertEqual([], [W || W <- Warnings, string:find(W, "idle_timeout") =/= nomatch]),
        #{total := T} = beamscale_load_servers:run(S),
        ?assertEqual(2, maps:get(sessions_done, T)),
        ?assertEqual(0, maps:get(errors, T), maps:get(reasons, T)),
        ?assertEqual(#{200 => 2}, maps:get(statuses, T)),
        Terms = beamscale_load_servers:scenario(
                  [io_lib:format("{targets, [{w, #{address => \"127.0.0.1:~b\"}}]}.\n", [Port]),
                   "{phases, [{p, #{duration_s => 1, rate => 2, max_users => 2}}]}.\n"
                   "{sessions, [{s, #{steps => [{http, #{path => \"/\"}}]}}]}.\n"]),
        #{total := T2} = beamscale_load_servers:run(Terms),
        ?assertEqual(maps:get(sessions_done, T2), maps:get(errors, T2))
    after
        Stop()
    end.

idle_timeout_short() ->
    [{doc, "idle_timeout 1000 against the 6 s server: every request times out, counted once."}].
idle_timeout_short(_Config) ->
    {Port, Stop} = late_server(?LATE_MS),
    try
        Xml = tsung_text(Port, "<option name=\"idle_timeout\" value=\"1000\"/>"),
        {ok, S, _} = beamscale_load_tsung:from_text("late.xml", Xml),
        Started = erlang:monotonic_time(millisecond),
        #{total := T} = beamscale_load_servers:run(S),
        ?assertEqual(2, maps:get(errors, T), maps:get(reasons, T)),
        %% Both users wait 1 s, not the server's 6 s.
        ?assert(erlang:monotonic_time(millisecond) - Started < ?LATE_MS)
    after
        Stop()
    end.

unset_one_error() ->
    [{doc, "A request lacking two variables is one error, not one per variable: its own "
           "failure (404) if it failed, else one 'unset' error; each variable counted apart."}].
unset_one_error(Config) ->
    S = beamscale_load_servers:scenario(
          [io_lib:format("{targets, [{w, #{address => \"127.0.0.1:~b\"}}]}.\n",
                         [?config(port, Config)]),
           "{phases, [{p, #{duration_s => 1, rate => 10}}]}.\n"
           "{sessions, [{s, #{steps => [{http, #{path => \"/ok?a=%%_a%%&b=%%_b%%\"}},"
           " {http, #{path => \"/missing?a=%%_a%%&b=%%_b%%\"}}]}}]}.\n"]),
    #{total := T} = beamscale_load_servers:run(S),
    D = maps:get(sessions_done, T),
    ?assert(D >= 3, T),
    ?assertEqual(2 * D, maps:get(errors, T)),
    ?assertEqual(#{<<"http status 404">> => D,
                   <<"variable a unset (no value when the request was sent)">> => D},
                 maps:get(reasons, T)),
    ?assertMatch(#{<<"unset.a">> := N, <<"unset.b">> := N} when N =:= 2 * D,
                 maps:get(counts, T)).

no_ack_apart() ->
    [{doc, "ts_raw against a TCP echo: an ack=\"no_ack\" send is counted in request_noack, "
           "not in the latency percentiles; the acked one is."}].
no_ack_apart(_Config) ->
    {Port, Stop} = beamscale_load_servers:tcp_echo(),
    try
        Xml = lists:flatten(io_lib:format(
                "<?xml version=\"1.0\"?>\n<tsung>\n"
                "<clients><client host=\"localhost\" use_controller_vm=\"true\"/></clients>\n"
                "<servers><server host=\"127.0.0.1\" port=\"~b\" type=\"tcp\"/></servers>\n"
                "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
                "<users maxnumber=\"3\" interarrival=\"0.1\" unit=\"second\"/>"
                "</arrivalphase></load>\n<sessions>"
                "<session name=\"s\" probability=\"100\" type=\"ts_raw\">"
                "<request><raw data=\"a\" ack=\"no_ack\"/></request>"
                "<thinktime value=\"0.2\"/>"
                "<request><raw data=\"b\" ack=\"local\"/></request></session>"
                "</sessions>\n</tsung>\n", [Port])),
        {ok, S, _} = beamscale_load_tsung:from_text("raw.xml", Xml),
        #{total := T} = beamscale_load_servers:run(S),
        ?assertEqual(3, maps:get(sessions_done, T)),
        ?assertEqual(0, maps:get(errors, T)),
        ?assertEqual(6, maps:get(requests, T)),
        ?assertEqual(#{<<"request_noack">> => 3}, maps:get(counts, T)),
        ?assertMatch(#{count := 3}, maps:get(latency, T))
    after
        Stop()
    end.

ipv6_server() ->
    [{doc, "<server host=\"::1\" type=\"tcp6\">: requests reach a server on ::1, their Host "
           "header bracketed ([::1]:PORT), 0 errors."}].
ipv6_server(_Config) ->
    {ok, L} = gen_tcp:listen(0, [binary, inet6, {ip, {0, 0, 0, 0, 0, 0, 0, 1}},
                                 {active, false}, {packet, http_bin}, {reuseaddr, true}]),
    {ok, Port} = inet:port(L),
    Self = self(),
    Acceptor = spawn(fun() -> v6_accept(L, Self) end),
    ok = gen_tcp:controlling_process(L, Acceptor),
    try
        Xml = string:replace(string:replace(tsung_text(Port, ""), "127.0.0.1", "::1"),
                             "type=\"tcp\"", "type=\"tcp6\""),
        {ok, S, _} = beamscale_load_tsung:from_text("v6.xml", lists:flatten(Xml)),
        #{total := T} = beamscale_load_servers:run(S),
        ?assertEqual(0, maps:get(errors, T), maps:get(reasons, T)),
        ?assertEqual(#{200 => 2}, maps:get(statuses, T)),
        Want = iolist_to_binary(["[::1]:", integer_to_list(Port)]),
        [receive {host, H} -> ?assertEqual(Want, H) after 5000 -> ct:fail(no_host) end
         || _ <- [1, 2]]
    after
        exit(Acceptor, kill),
        gen_tcp:close(L)
    end.

v6_accept(L, Test) ->
    case gen_tcp:accept(L) of
        {ok, S} ->
            Pid = spawn(fun() -> receive go -> v6_answer(S, Test) end end),
            ok = gen_tcp:controlling_process(S, Pid),
            Pid ! go,
            v6_accept(L, Test);
        {error, _} -> ok
    end.

%% Each request's Host header to the test, then a 200.
v6_answer(S, Test) ->
    case gen_tcp:recv(S, 0, 10000) of
        {ok, {http_header, _, 'Host', _, H}} -> Test ! {host, H}, v6_answer(S, Test);
        {ok, http_eoh} ->
            _ = gen_tcp:send(S, <<"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok">>),
            ok = inet:setopts(S, [{packet, http_bin}]),
            v6_answer(S, Test);
        {ok, _} -> v6_answer(S, Test);
        {error, _} -> gen_tcp:close(S)
    end.

websocket_origin() ->
    [{doc, "<websocket type=\"connect\" origin>: the handshake's Origin header; websocketd "
           "--origin lets that origin in (0 errors) and refuses another."}].
websocket_origin(Config) ->
    Port = free_port(),
    Stop = beamscale_load_servers:websocketd(
             beamscale_load_servers:tmp_dir(Config, "compat_websocketd"), Port,
             ["--origin=bs.example"], ["cat"]),
    Run = fun(Origin) ->
                  Session = io_lib:format(
                              "<session name=\"s\" probability=\"100\" type=\"ts_websocket\">"
                              "<request><websocket type=\"connect\" path=\"/\" "
                              "origin=\"~ts\"/></request>"
                              "<request><websocket type=\"message\">hi</websocket></request>"
                              "</session>", [Origin]),
                  Xml = string:replace(tsung_text(Port, ""), session_of(), Session),
                  {ok, S, _} = beamscale_load_tsung:from_text("ws.xml", lists:flatten(Xml)),
                  maps:get(total, beamscale_load_servers:run(S))
          end,
    try
        T = Run("http://bs.example"),
        ?assertEqual(2, maps:get(sessions_done, T)),
        ?assertEqual(0, maps:get(errors, T), maps:get(reasons, T)),
        ?assertEqual(4, maps:get(requests, T)),
        T2 = Run("http://other.example"),
        %% Refused: each user's handshake (403), then its message with no connection.
        ?assertMatch(#{<<"the handshake got status 403, not 101">> := 2}, maps:get(reasons, T2))
    after
        Stop()
    end.

%% The one session of `tsung_text/2'.
session_of() ->
    "<session name=\"s\" probability=\"100\" type=\"ts_http\">"
    "<request><http url=\"/\" method=\"GET\"/></request></session>".

%% Two users, one request each, against 127.0.0.1:`Port'.
tsung_text(Port, Options) ->
    lists:flatten(io_lib:format(
      "<?xml version=\"1.0\"?>\n<tsung>\n"
      "<clients><client host=\"localhost\" use_controller_vm=\"true\"/></clients>\n"
      "<servers><server host=\"127.0.0.1\" port=\"~b\" type=\"tcp\"/></servers>\n"
      "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
      "<users maxnumber=\"2\" interarrival=\"0.1\" unit=\"second\"/></arrivalphase></load>\n"
      "<options>~ts</options>\n<sessions>~ts</sessions>\n</tsung>\n",
      [Port, Options, session_of()])).

%% A server that reads each request's head and answers `Ms' later.
late_server(Ms) ->
    {L, Port, Acceptor} = beamscale_load_servers:broker(
                            fun(S) -> ok = inet:setopts(S, [{packet, http_bin}]), answer(S, Ms)
                            end),
    {Port, fun() -> exit(Acceptor, kill), gen_tcp:close(L) end}.

answer(S, Ms) ->
    case head(S) of
        ok ->
            timer:sleep(Ms),
            _ = gen_tcp:send(S, <<"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok">>),
            ok = inet:setopts(S, [{packet, http_bin}]),
            answer(S, Ms);
        closed -> gen_tcp:close(S)
    end.

head(S) ->
    case gen_tcp:recv(S, 0, 30000) of
        {ok, http_eoh} -> ok;
        {ok, _} -> head(S);
        {error, _} -> closed
    end.

%% The access log's `{Status, Uri}' for URIs starting with `Prefix', once `N' are there.
seen(Config, Prefix, N) -> seen(Config, Prefix, N, erlang:monotonic_time(millisecond) + 5000).

seen(Config, Prefix, N, Deadline) ->
    {ok, Bin} = file:read_file(filename:join(?config(dir, Config), "access.log")),
    Lines = [list_to_tuple(string:split(L, "|"))
             || L <- string:split(unicode:characters_to_list(Bin), "\n", all), L =/= ""],
    case [L || {_, U} = L <- Lines, lists:prefix(Prefix, U)] of
        Got when length(Got) >= N -> Got;
        _ when N > 0 ->
            erlang:monotonic_time(millisecond) < Deadline orelse ct:fail("no ~ts in the log",
                                                                         [Prefix]),
            timer:sleep(50),
            seen(Config, Prefix, N, Deadline)
    end.
