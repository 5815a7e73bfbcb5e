%% `beamscale record': headless Chromium browses a few pages of a test nginx site through the
%% recording proxy, over HTTP and over HTTPS (CONNECT, the proxy's CA trusted by its key's
%% hash); the recorded terms scenario and Tsung file, loaded against the same nginx, send the
%% same requests (nginx's access logs say which). curl checks the proxy's certificates against
%% its CA file; hand-made CONNECTs check the bounds and the refused target's answer; a chunked
%% POST is passed on and recorded whole, and its bounds hold.
-module(beamscale_record_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").
-include_lib("kernel/include/file.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([browse_and_replay/1, writes_post_and_think/1, connect_checked_and_bounded/1,
         chunked_body/1, other_user_refused/1]).
-export([browse_and_replay/0, writes_post_and_think/0, connect_checked_and_bounded/0,
         chunked_body/0, other_user_refused/0]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [writes_post_and_think, browse_and_replay, connect_checked_and_bounded, chunked_body,
          other_user_refused].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_record"),
    Www = filename:join(Dir, "www"),
    ok = filelib:ensure_path(Www),
    Page = fun(Title, Links) ->
                   ["<html><head><title>", Title, "</title><link rel=\"icon\" href=\"data:,\">"
                    "<link rel=\"stylesheet\" href=\"/style.css\"></head><body>",
                    [["<a href=\"", L, "\">", L, "</a>"] || L <- Links],
                    "<img src=\"/dot.svg\"></body></html>"]
           end,
    ok = file:write_file(filename:join(Www, "index.html"), Page("home", ["/a.html"])),
    ok = file:write_file(filename:join(Www, "a.html"), Page("a", ["/index.html"])),
    ok = file:write_file(filename:join(Www, "style.css"), "body { color: #333 }\n"),
    ok = file:write_file(filename:join(Www, "dot.svg"),
                         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"/>"),
    Port = beamscale_load_servers:free_port(),
    TlsPort = beamscale_load_servers:free_port(),
    {_, Cert, Key} = beamscale_load_servers:certificate(Dir),
    Stop = beamscale_load_servers:nginx(Dir, Port, nginx_conf(Dir, Www, Port,
                                                              {TlsPort, Cert, Key})),
    [{nginx, {Stop, Port, Dir}}, {tls_port, TlsPort} | Config].

end_per_suite(Config) ->
    {Stop, _, _} = ?config(nginx, Config),
    Stop().

%% Two pages browsed (each with its stylesheet and image), a pause between them, the first over
%% HTTP and the second over HTTPS (Chromium CONNECTs and trusts the proxy's CA by its key's
%% hash): the same requests, with their schemes, again from the recorded terms file and from
%% the recorded Tsung file.
browse_and_replay() ->
    [{doc, "Chromium through the proxy, HTTP then HTTPS; both recorded files replay it."}].
browse_and_replay(Config) ->
    Chromium = os:find_executable("chromium"),
    is_list(Chromium) orelse ct:fail("no chromium (scripts/install-deps.sh installs it)"),
    {_, Port, Dir} = ?config(nginx, Config),
    TlsPort = ?config(tls_port, Config),
    Base = filename:join(?config(priv_dir, Config), "beamscale_record_browse"),
    {ok, Proxy} = beamscale_record:start(#{port => 0, base => Base,
                                           ca_dir => ?config(priv_dir, Config)}),
    Spki = beamscale_record_ca:spki_sha256(beamscale_record:ca(Proxy)),
    Via = ["--proxy-server=http://127.0.0.1:" ++ integer_to_list(beamscale_record:port(Proxy)),
           "--proxy-bypass-list=<-loopback>", "--dump-dom",
           "--ignore-certificate-errors-spki-list=" ++ Spki],
    Url = fun(Scheme, P, Path) -> Scheme ++ "://127.0.0.1:" ++ integer_to_list(P) ++ Path end,
    Log0 = log(Dir),
    Dom = beamscale_test_chromium:run(Chromium, Config, Via ++ [Url("http", Port, "/index.html")]),
    ?assertNotEqual(nomatch, binary:match(Dom, <<"/a.html">>)),
    timer:sleep(300),
    Dom2 = beamscale_test_chromium:run(Chromium, Config, Via ++ [Url("https", TlsPort, "/a.html")]),
    ?assertNotEqual(nomatch, binary:match(Dom2, <<"/index.html">>)),
    N = beamscale_record:stop(Proxy),
    Browsed = lists:sort(log(Dir) -- Log0),
    ct:pal("recorded ~b requests: ~p", [N, Browsed]),
    ?assertEqual(N, length(Browsed)),
    [?assert(lists:member(R, Browsed))
     || R <- ["http GET /index.html", "http GET /style.css", "http GET /dot.svg",
              "https GET /a.html", "https GET /style.css", "https GET /dot.svg"]],
    [begin
         Before = log(Dir),
         {ok, S} = beamscale_scenario_file:read(Base ++ Ext),
         {ok, _, _} = beamscale_loadtest:run(S, #{dir => Base ++ "_run" ++ Ext, quiet => true,
                                                seed => 1}),
         ?assertEqual({Ext, Browsed}, {Ext, lists:sort(log(Dir) -- Before)})
     end || Ext <- [".scenario", ".xml"]],
    {ok, Terms} = file:read_file(Base ++ ".scenario"),
    ?assertMatch({match, _}, re:run(Terms, "\\{think,[0-9]+\\}")),
    {ok, Xml} = file:read_file(Base ++ ".xml"),
    ?assertNotEqual(nomatch, binary:match(Xml, iolist_to_binary(["url=\"", Url("https", TlsPort,
                                                                              "/a.html")]))).

%% curl, checking certificates against the CA's file, gets pages through the tunnel by name
%% and by address; the CA is kept (its key private) and used again by the next proxy; CONNECT
%% to a closed port is answered 502 naming it; an overlong target, an overlong head and a
%% tunnel whose TLS never starts are let go.
connect_checked_and_bounded() ->
    [{doc, "Certificates valid for curl; CA kept 0600; refused target named; bounds hold."}].
connect_checked_and_bounded(Config) ->
    Priv = ?config(priv_dir, Config),
    CaDir = filename:join(Priv, "beamscale_record_ca"),
    Base = filename:join(Priv, "beamscale_record_bounds"),
    {ok, Proxy} = beamscale_record:start(#{port => 0, base => Base, ca_dir => CaDir,
                                           handshake_ms => 2000}),
    P = beamscale_record:port(Proxy),
    Tls = integer_to_list(?config(tls_port, Config)),
    Ca = beamscale_record:ca(Proxy),
    Pem = beamscale_record_ca:pem_file(Ca),
    {ok, #file_info{mode = Mode}} = file:read_file_info(filename:join(CaDir,
                                                                      "beamscale-record-ca.key")),
    ?assertEqual(8#600, Mode band 8#777),
    [?assertEqual({Host, "200"},
                  {Host, curl(["--proxy", "http://127.0.0.1:" ++ integer_to_list(P),
                               "--cacert", Pem, "https://" ++ Host ++ ":" ++ Tls ++ "/dot.svg"])})
     || Host <- ["localhost", "127.0.0.1"]],
    Closed = beamscale_load_servers:free_port(),
    Refused = connect_reply(P, ["CONNECT 127.0.0.1:", integer_to_list(Closed),
                                " HTTP/1.1\r\n\r\n"]),
    ct:pal("~ts", [Refused]),
    ?assertMatch(<<"HTTP/1.1 502 ", _/binary>>, Refused),
    Named = iolist_to_binary(["127.0.0.1:", integer_to_list(Closed), ": cannot connect: "
                              "connection refused"]),
    ?assertNotEqual(nomatch, binary:match(Refused, Named)),
    Long = connect_reply(P, ["CONNECT ", lists:duplicate(300, $a), ":443 HTTP/1.1\r\n\r\n"]),
    ?assertMatch(<<"HTTP/1.1 400 ", _/binary>>, Long),
    Huge = connect_reply(P, ["CONNECT ", lists:duplicate(70000, $a), ":443 HTTP/1.1\r\n\r\n"]),
    %% A line over 64 KiB: the socket is closed by its packet parser, unanswered.
    ?assertEqual(<<>>, Huge),
    %% A tunnel opened and left silent: closed by the proxy after its 2 s handshake deadline
    %% (not less: a first handshake in a fresh node on a loaded host loads ssl's code).
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, P, [binary, {active, false}]),
    ok = gen_tcp:send(S, ["CONNECT 127.0.0.1:", Tls, " HTTP/1.1\r\n\r\n"]),
    T0 = erlang:monotonic_time(millisecond),
    {ok, <<"HTTP/1.1 200 ", _/binary>>} = gen_tcp:recv(S, 0, 10000),
    ?assertEqual({error, closed}, gen_tcp:recv(S, 0, 20000)),
    Waited = erlang:monotonic_time(millisecond) - T0,
    ct:pal("silent tunnel closed after ~b ms", [Waited]),
    ?assert(Waited >= 1900 andalso Waited < 15000),
    %% The proxy still serves, and the next one keeps the same CA.
    ?assertEqual("200", curl(["--proxy", "http://127.0.0.1:" ++ integer_to_list(P), "--cacert",
                              Pem, "https://localhost:" ++ Tls ++ "/style.css"])),
    3 = beamscale_record:stop(Proxy),
    {ok, Again} = beamscale_record:start(#{port => 0, base => Base, ca_dir => CaDir}),
    ?assertEqual(beamscale_record_ca:spki_sha256(Ca),
                 beamscale_record_ca:spki_sha256(beamscale_record:ca(Again))),
    0 = beamscale_record:stop(Again).

%% A POST's body and content type, and a think time from a gap, in both files.
writes_post_and_think() -> [{doc, "POST body, kept headers and think times in both files."}].
writes_post_and_think(Config) ->
    Reqs = [#{method => get, host => "127.0.0.1", port => 8080, path => "/", headers => [],
              body => <<>>, status => 200, at => 1000},
            #{method => post, host => "127.0.0.1", port => 8080, path => "/f?a=1&b=2",
              headers => [{"content-type", "application/x-www-form-urlencoded"},
                          {"cookie", "s=1"}],
              body => <<"x=1&y=2">>, status => 302, at => 3500}],
    File = filename:join(?config(priv_dir, Config), "beamscale_record_post"),
    ok = file:write_file(File ++ ".scenario", beamscale_record_write:terms(Reqs)),
    ok = file:write_file(File ++ ".xml", beamscale_record_write:tsung(Reqs)),
    [begin
         {ok, #{sessions := [#{steps := Steps}], targets := Targets}} =
             beamscale_scenario_file:read(File ++ Ext),
         ct:pal("~ts: ~p", [Ext, Steps]),
         ?assertEqual(1, map_size(Targets)),
         ?assertEqual(3, length(Steps)),
         {think, {constant, Ms}} = lists:nth(2, Steps),
         ?assert(Ms == 2500),
         %% The POST's line, kept header and body (a Tsung session also manages cookies).
         Text = iolist_to_binary(io_lib:format("~0p", [lists:last(Steps)])),
         [?assertNotEqual(nomatch, binary:match(Text, Part))
          || Part <- [<<"POST /f?a=1&b=2 HTTP/1.1">>,
                      <<"content-type: application/x-www-form-urlencoded">>, <<"x=1&y=2">>]],
         %% A cookie is the server's to give again, not a recorded constant.
         ?assertEqual(nomatch, binary:match(Text, <<"s=1">>))
     end || Ext <- [".scenario", ".xml"]].

%% A chunked POST (sent in pieces, a chunk extension and a trailer) reaches a server as one body
%% with its length, and is recorded so; an overlong size line, a chunk over the body bound, a
%% body that stalls past its deadline and another transfer coding are answered 400, naming why,
%% and neither passed on nor recorded.
chunked_body() -> [{doc, "A chunked POST passed on and recorded whole; its bounds answer 400."}].
chunked_body(Config) ->
    {ok, L} = gen_tcp:listen(0, [binary, {active, false}, {ip, {127, 0, 0, 1}}]),
    {ok, SrvPort} = inet:port(L),
    Me = self(),
    Srv = spawn_link(fun() -> upstream(L, Me) end),
    Base = filename:join(?config(priv_dir, Config), "beamscale_record_chunked"),
    {ok, Proxy} = beamscale_record:start(#{port => 0, base => Base, body_ms => 1000,
                                           ca_dir => ?config(priv_dir, Config)}),
    P = beamscale_record:port(Proxy),
    Head = fun(Coding) ->
                   ["POST http://127.0.0.1:", integer_to_list(SrvPort), "/up HTTP/1.1\r\n"
                    "Host: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                    "Transfer-Encoding: ", Coding, "\r\n\r\n"]
           end,
    try
        {ok, S} = gen_tcp:connect({127, 0, 0, 1}, P, [binary, {active, false}]),
        [begin ok = gen_tcp:send(S, Piece), timer:sleep(50) end
         || Piece <- [Head("chunked"), "5;x=1\r\nhel", "lo\r\n6\r\n world\r", "\n0\r\n",
                      "X-T: 1\r\n\r\n"]],
        Reply = read_all(S, <<>>),
        ?assertMatch(<<"HTTP/1.0 200 ", _/binary>>, Reply),
        Got = receive {upstream, R} -> string:lowercase(R) after 10000 -> ct:fail(no_upstream) end,
        ct:log("the server got:~n~ts", [Got]),
        [?assertNotEqual(nomatch, binary:match(Got, Part))
         || Part <- [<<"post /up http/1.0\r\n">>, <<"content-length: 11\r\n">>,
                     <<"\r\n\r\nhello world">>]],
        ?assertEqual(nomatch, binary:match(Got, <<"chunked">>)),
        [?assertMatch({File, {_, _}},
                      {File, binary:match(element(2, file:read_file(Base ++ File)),
                                          <<"hello world">>)})
         || File <- [".scenario", ".xml"]],
        Refused = [{"over 4096 bytes", [Head("chunked"), lists:duplicate(5000, $a)]},
                   {"over 1048576 bytes", [Head("chunked"), "100001\r\n", "abc"]},
                   {"deadline", [Head("chunked"), "5\r\nhel"]},
                   {"transfer-encoding not taken: gzip", [Head("gzip"), "abc"]}],
        [begin
             Answer = connect_reply(P, Request),
             ct:log("~ts: ~ts", [Why, Answer]),
             ?assertMatch({Why, <<"HTTP/1.1 400 ", _/binary>>}, {Why, Answer}),
             ?assertNotEqual(nomatch, binary:match(Answer, list_to_binary(Why)))
         end || {Why, Request} <- Refused],
        ?assertEqual(1, beamscale_record:stop(Proxy))
    after
        unlink(Srv), exit(Srv, kill), gen_tcp:close(L)
    end.

%%% Helpers

%% A server that sends each request it reads (a head and its Content-Length body) to `To', and
%% answers 200.
upstream(L, To) ->
    {ok, S} = gen_tcp:accept(L),
    To ! {upstream, upstream_read(S, <<>>)},
    _ = gen_tcp:send(S, "HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok"),
    ok = gen_tcp:close(S),
    upstream(L, To).

upstream_read(S, Buf) ->
    Done = case binary:split(Buf, <<"\r\n\r\n">>) of
               [Head, Body] ->
                   case re:run(Head, "content-length: *([0-9]+)",
                               [caseless, {capture, all_but_first, binary}]) of
                       {match, [N]} -> byte_size(Body) >= binary_to_integer(N);
                       nomatch -> true
                   end;
               [_] -> false
           end,
    case Done of
        true -> Buf;
        false ->
            {ok, D} = gen_tcp:recv(S, 0, 10000),
            upstream_read(S, <<Buf/binary, D/binary>>)
    end.

other_user_refused() ->
    [{doc, "Another local user's request through the proxy: 403, not passed on, not recorded; "
           "the owner's is."}].
other_user_refused(Config) ->
    Priv = ?config(priv_dir, Config),
    Base = filename:join(Priv, "beamscale_record_users"),
    {ok, Proxy} = beamscale_record:start(#{port => 0, base => Base,
                                           ca_dir => filename:join(Priv, "beamscale_record_ca2"),
                                           handshake_ms => 2000}),
    P = integer_to_list(beamscale_record:port(Proxy)),
    {_, Port, Dir} = ?config(nginx, Config),
    Site = "http://127.0.0.1:" ++ integer_to_list(Port),
    User = beamscale_test_user:create(),
    try
        {0, Out} = beamscale_test_user:run(User, ["curl", "-s", "-m", "10", "-w", "\n%{http_code}",
                                                  "--proxy", "http://127.0.0.1:" ++ P,
                                                  Site ++ "/a.html?other"], 20000),
        ?assertMatch({match, _}, re:run(Out, "not the run's user.*\n403$", [dotall])),
        ?assertEqual("200", curl(["--proxy", "http://127.0.0.1:" ++ P, Site ++ "/a.html?own"]))
    after
        beamscale_test_user:remove(User)
    end,
    ?assertEqual(1, beamscale_record:stop(Proxy)),
    {ok, Terms} = file:read_file(Base ++ ".scenario"),
    ?assertNotEqual(nomatch, binary:match(Terms, <<"/a.html?own">>)),
    ?assertEqual(nomatch, binary:match(Terms, <<"other">>)),
    ?assertEqual([], [L || L <- log(Dir), string:find(L, "other") =/= nomatch]).

%% curl's status code for a page, "000" when it could not get one (a bad certificate).
curl(Args) ->
    Curl = os:find_executable("curl"),
    is_list(Curl) orelse ct:fail("no curl (scripts/install-deps.sh installs it)"),
    Port = open_port({spawn_executable, Curl},
                     [{args, ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30"
                              | Args]}, exit_status, binary, use_stdio, stderr_to_stdout]),
    Out = curl_out(Port, <<>>),
    ct:log("curl ~ts: ~ts", [lists:last(Args), Out]),
    lists:sublist(Out, length(Out) - 2, 3).

curl_out(Port, Acc) ->
    receive
        {Port, {data, D}} -> curl_out(Port, <<Acc/binary, D/binary>>);
        {Port, {exit_status, _}} -> binary_to_list(Acc)
    after 60000 -> ct:fail(curl_timeout)
    end.

%% The proxy's whole answer to a request written by hand (it closes after answering).
connect_reply(Port, Request) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}]),
    _ = gen_tcp:send(S, Request),
    read_all(S, <<>>).

read_all(S, Acc) ->
    case gen_tcp:recv(S, 0, 20000) of
        {ok, D} -> read_all(S, <<Acc/binary, D/binary>>);
        {error, _} -> gen_tcp:close(S), Acc
    end.

log(Dir) ->
    case file:read_file(filename:join(Dir, "access.log")) of
        {ok, Bin} -> [binary_to_list(L) || L <- binary:split(Bin, <<"\n">>, [global, trim])];
        {error, enoent} -> []
    end.

nginx_conf(Dir, Www, Port, {TlsPort, Cert, Key}) ->
    Temps = [[T, "_temp_path ", Dir, ";\n"] || T <- ["client_body", "proxy", "fastcgi", "uwsgi",
                                                     "scgi"]],
    %% Workers as root when the test runs as root: the files are under the test's directories,
    %% which a fresh clone in `mktemp -d' (mode 0700) keeps from nginx's default user (403).
    io_lib:format("user root;\nerror_log ~ts/error.log;\nevents {}\n"
                  "http {\n log_format req '$scheme $request_method $request_uri';\n"
                  " access_log ~ts/access.log req;\n~ts"
                  " types { text/html html; text/css css; image/svg+xml svg; }\n"
                  " server {\n  listen 127.0.0.1:~b;\n  root ~ts;\n }\n"
                  " server {\n  listen 127.0.0.1:~b ssl;\n  root ~ts;\n"
                  "  ssl_certificate ~ts; ssl_certificate_key ~ts;\n }\n}\n",
                  [Dir, Dir, Temps, Port, Www, TlsPort, Www, Cert, Key]).
